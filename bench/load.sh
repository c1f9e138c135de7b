#!/bin/sh
# bench/load.sh - the cpu device's step time on a quiet machine and with one
# busy competitor: for each shipped preset at batch 4 and
# 256, `nnlab bench`'s median µs/step with the default threads and with
# --threads 1, each quiet and beside `sh -c 'while :; do :; done'` (pinned
# nowhere), alternating quiet and loaded runs round by round so that drift
# falls on both alike, and the median over the rounds. Writes a Markdown
# table, with the machine, the commit and the load average at each run, to
# bench/results/load-DATE-COMMIT.md.
#
# The target (a benchmark, not a test): with the competitor, the default
# threads' step at most 1.3 times the quiet one, and never slower than
# --threads 1 beside the same competitor. Run it on a machine with nothing
# else running (no builds, no other benchmark): the quiet figures must be
# quiet.
#
#   bench/load.sh [-n NNLAB] [-p "PRESET ..."] [-b "BATCH ..."] [-s STEPS] [-r ROUNDS] [-o FILE]
#
# Defaults: build/nnlab (else nnlab on PATH), every shipped preset, batches
# "4 256", 200 timed steps (40 at batch 256) after 10 untimed, 5 rounds.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
nnlab='' presets='' batches="4 256" steps='' rounds=5 out=''
while getopts n:p:b:s:r:o: opt; do
    case $opt in
        n) nnlab=$OPTARG ;;
        p) presets=$OPTARG ;;
        b) batches=$OPTARG ;;
        s) steps=$OPTARG ;;
        r) rounds=$OPTARG ;;
        o) out=$OPTARG ;;
        *) sed -n '17,21p' "$0" >&2; exit 2 ;;
    esac
done
if [ -z "$nnlab" ]; then
    if [ -x "$here/../build/nnlab" ]; then nnlab=$here/../build/nnlab; else nnlab=nnlab; fi
fi
export NNLAB_PRESETS_DIR="${NNLAB_PRESETS_DIR:-$here/../presets}"
[ -n "$presets" ] || presets="lenet-cifar10 lenet5-cifar10 conv1d-regression mnist-mlp-128 mnist-mlp-1000"
commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
date=$(date -u +%Y-%m-%d)
[ -n "$out" ] || out="$here/results/load-$date-$commit.md"
tmp=$(mktemp -d)
competitor=
stop_competitor() {
    if [ -n "$competitor" ]; then kill "$competitor" 2>/dev/null || true; wait "$competitor" 2>/dev/null || true; fi
    competitor=
}
trap 'stop_competitor; rm -rf "$tmp"' EXIT INT TERM

steps_for() {   # batch
    if [ -n "$steps" ]; then echo "$steps"; elif [ "$1" -ge 256 ]; then echo 40; else echo 200; fi
}

# run PRESET BATCH THREADS: prints the median µs/step ("?" when the run failed)
run() {
    t=
    [ "$3" = default ] || t="--threads $3"
    # shellcheck disable=SC2086 # $t is two words or none
    us=$("$nnlab" bench --preset "$1" --device cpu --batch "$2" --steps "$(steps_for "$2")" --warmup 10 \
        $t --json 2>/dev/null | sed -n 's/^  "us_per_step": \([0-9.e+-]*\),$/\1/p')
    echo "${us:-?}"
}

load1() { cut -d' ' -f1 /proc/loadavg; }

median() {      # the median of the numbers in file $1 ("?" lines left out)
    grep -v '?' "$1" | sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) print "?"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# measure PRESET BATCH: rounds of quiet and loaded runs, each thread setting,
# the order alternating; the results in $tmp/KEY (one µs figure a line)
measure() {
    rm -f "$tmp"/q-* "$tmp"/l-* "$tmp/loads"
    r=1
    while [ "$r" -le "$rounds" ]; do
        if [ $((r % 2)) -eq 1 ]; then order="quiet loaded"; else order="loaded quiet"; fi
        for phase in $order; do
            if [ "$phase" = loaded ]; then
                sh -c 'while :; do :; done' &
                competitor=$!
                sleep 1            # the competitor is running, and counted, before the job starts
            fi
            for th in default 1; do
                load1 >>"$tmp/loads"
                run "$1" "$2" "$th" >>"$tmp/$(echo "$phase" | cut -c1)-$th"
            done
            stop_competitor
        done
        r=$((r + 1))
    done
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "?" || b == "?" || b <= 0) print "?"; else printf "%.2f", a / b }'; }

mkdir -p "$(dirname "$out")"
{
    echo "# nnlab bench under load: cpu device, µs per training step (median of $rounds rounds)"
    echo
    echo "- date: $date; commit $commit; $("$nnlab" --version)"
    echo "- machine: $(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
    echo "- each run: \`nnlab bench --preset P --device cpu --batch B --steps S --warmup 10 [--threads 1] --json\`,"
    echo "  S = ${steps:-200 (40 at batch >= 256)}; loaded: beside \`sh -c 'while :; do :; done'\` (not pinned),"
    echo "  started a second before; quiet and loaded runs alternate round by round"
    echo "- target: loaded/quiet <= 1.3 with the default threads, and loaded default <= loaded --threads 1"
    echo
    echo "| preset | batch | quiet | loaded | loaded/quiet | quiet -t1 | loaded -t1 | loaded vs -t1 | target | load avg (min-max) |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|:---:|---|"
    for p in $presets; do
        for b in $batches; do
            measure "$p" "$b"
            qd=$(median "$tmp/q-default") ld=$(median "$tmp/l-default")
            q1=$(median "$tmp/q-1") l1=$(median "$tmp/l-1")
            lq=$(ratio "$ld" "$qd") l1r=$(ratio "$ld" "$l1")
            met=$(awk -v a="$lq" -v b="$l1r" 'BEGIN { if (a == "?" || b == "?") print "?";
                else if (a <= 1.3 && b <= 1.0) print "yes"; else print "no" }')
            loads=$(sort -g "$tmp/loads" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }')
            echo "| $p | $b | $qd | $ld | $lq | $q1 | $l1 | $l1r | $met | $loads |"
        done
    done
} | tee "$out"
echo "saved to $out" >&2
