#!/bin/sh
# bench/pipe.sh - does a reader on a pipe cost the job its threads? Runs
# `nnlab bench --json` with its JSON written to a file and piped into
# python3 (a reader starting beside it, as every script's `| python3 -c`),
# alternated, ROUNDS times, and prints the step times and the threads the
# job ended with. With -B OLD, an older nnlab is alternated beside it.
#
#   bench/pipe.sh [-b BUILDDIR] [-B OLD_NNLAB] [-p PRESET] [-n BATCH] [-r ROUNDS] [-s STEPS]
#
# Run it on a quiet machine (the load average is printed with each row).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=build old="" preset=mnist-mlp-1000 batch=256 rounds=3 steps=60
while getopts b:B:p:n:r:s: opt; do
    case $opt in
        b) build=$OPTARG ;; B) old=$OPTARG ;; p) preset=$OPTARG ;;
        n) batch=$OPTARG ;; r) rounds=$OPTARG ;; s) steps=$OPTARG ;;
        *) echo "usage: $0 [-b BUILDDIR] [-B OLD_NNLAB] [-p PRESET] [-n BATCH] [-r ROUNDS] [-s STEPS]" >&2; exit 2 ;;
    esac
done
new="$top/$build/nnlab"
[ -x "$new" ] || { echo "$0: no $new: build first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
read_step='import json,sys; d=json.load(sys.stdin); print("%.1f %s" % (d["us_per_step"] / 1000, d.get("threads_now", "-")))'

one() {   # BIN: "file_ms threads piped_ms threads"
    "$1" bench --preset "$top/presets/$preset.ini" --batch "$batch" --steps "$steps" --warmup 3 --json \
        >"$tmp/out.json" 2>/dev/null
    f=$(python3 -c "$read_step" <"$tmp/out.json")
    p=$("$1" bench --preset "$top/presets/$preset.ini" --batch "$batch" --steps "$steps" --warmup 3 --json \
        2>/dev/null | python3 -c "$read_step")
    echo "$f $p"
}

echo "# $(date -u +%FT%TZ) $(git -C "$top" rev-parse --short HEAD) $preset batch $batch, $steps steps"
echo "| round | nnlab | to a file (ms/step) | threads | piped (ms/step) | threads | piped/file | load |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|"
i=1
while [ "$i" -le "$rounds" ]; do
    for bin in $old "$new"; do
        set -- $(one "$bin")
        ratio=$(awk -v f="$1" -v p="$3" 'BEGIN { printf "%.2f", p / f }')
        echo "| $i | $bin | $1 | $2 | $3 | $4 | $ratio | $(cut -d' ' -f1 /proc/loadavg) |"
    done
    i=$((i + 1))
done
