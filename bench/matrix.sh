#!/bin/sh
# bench/matrix.sh - `nnlab bench` µs/step for every shipped preset at batch
# 1, 4, 64 and 1024 on the cpu and cpu-ref devices, one run at a time (never
# two benchmarks at once on a 2-core machine). Prints a Markdown table and
# saves it, with the machine and the date, under bench/results/.
#
#   bench/matrix.sh [NNLAB]        (default: build/nnlab, else nnlab on PATH)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
nnlab=${1:-}
if [ -z "$nnlab" ]; then
    if [ -x "$here/../build/nnlab" ]; then nnlab=$here/../build/nnlab; else nnlab=nnlab; fi
fi
export NNLAB_PRESETS_DIR=${NNLAB_PRESETS_DIR:-$here/../presets}
presets="lenet-cifar10 lenet5-cifar10 conv1d-regression mnist-mlp-128 mnist-mlp-1000"
batches="1 4 64 1024"

# Timed steps: enough for a stable median, few where the reference is slow.
steps_for() {   # device batch
    case "$1:$2" in
        cpu:1024) echo 30 ;;
        cpu:*) echo 300 ;;
        cpu-ref:1|cpu-ref:4) echo 100 ;;
        cpu-ref:64) echo 10 ;;
        *) echo 3 ;;
    esac
}

# nnlab's JSON goes to a file, never a pipe: a reader starting beside nnlab
# takes a core from its thread choice
nnlab_json=$(mktemp) || exit 1
trap 'rm -f "$nnlab_json"' EXIT
us_per_step() {  # preset device batch
    steps=$(steps_for "$2" "$3")
    "$nnlab" bench --preset "$1" --device "$2" --batch "$3" --steps "$steps" --warmup 2 --json \
        >"$nnlab_json" 2>/dev/null || true
    sed -n 's/^  "us_per_step": \([0-9.e+-]*\),$/\1/p' <"$nnlab_json"
}

date=$(date -u +%Y-%m-%d)
out="$here/results/cpu-matrix-$date.md"
mkdir -p "$here/results"
{
    echo "# nnlab bench, µs per training step (median), cpu vs cpu-ref"
    echo
    echo "- date: $date; $("$nnlab" --version)"
    echo "- machine: $(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
    echo "- command: \`nnlab bench --preset P --device D --batch B --steps S --warmup 2 --json\`"
    echo "  (S: cpu 300, 30 at batch 1024; cpu-ref 100 at batch <= 4, 10 at 64, 3 at 1024)"
    echo
    echo "| preset | batch | cpu µs/step | cpu-ref µs/step | cpu-ref / cpu |"
    echo "|---|---:|---:|---:|---:|"
    for p in $presets; do
        for b in $batches; do
            fast=$(us_per_step "$p" cpu "$b")
            ref=$(us_per_step "$p" cpu-ref "$b")
            ratio=$(awk -v a="$ref" -v b="$fast" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "?" }')
            echo "| $p | $b | $fast | $ref | $ratio |"
        done
    done
} | tee "$out"
echo "saved to $out" >&2
