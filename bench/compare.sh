#!/bin/sh
# bench/compare.sh - nnlab against PyTorch on the CPU, side by side in one run,
# one benchmark at a time (two at once would oversubscribe the cores).
#
#   bench/compare.sh [--quick] [NNLAB]
#
# For every training preset and batch it times nnlab's `cpu` device (`nnlab
# bench`, median µs/step) and the same step in PyTorch (bench/pytorch_step.py:
# zero_grad, forward, loss, backward, step, loss.item(), data in memory) with
# every peer installed (Debian's python3-torch for /usr/bin/python3, the pip
# release in bench/.venv; see bench/setup-peers.sh) at 1 thread and at all
# cores. The peer is the fastest of those. nnlab runs before and after the
# peers (alternated: a drift in the machine shows as two different nnlab
# figures); the faster of its two runs is shown, with both. nnlab's JSON goes to
# a file, never a pipe: a reader starting beside nnlab would take a core from
# it. Each row carries the 1-minute load average at its end and the CPU target
# against PyTorch for that case, where there is one. Prints a Markdown table and
# saves it with the machine and the date under bench/results/.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi
nnlab=${1:-}
if [ -z "$nnlab" ]; then
    if [ -x "$here/../build/nnlab" ]; then nnlab=$here/../build/nnlab; else nnlab=nnlab; fi
fi
export NNLAB_PRESETS_DIR=${NNLAB_PRESETS_DIR:-$here/../presets}
presets="lenet-cifar10 lenet5-cifar10 conv1d-regression mnist-mlp-128 mnist-mlp-1000"
batches="1 4 16 64 256 1024"
[ $quick -eq 1 ] && batches="4 256"
cores=$(nproc)

peers=""
for py in /usr/bin/python3 "$here/.venv/bin/python"; do
    if [ -x "$py" ] && "$py" -c 'import torch' 2>/dev/null; then peers="$peers $py"; fi
done
if [ -z "$peers" ]; then
    echo "compare.sh: no PyTorch found: run bench/setup-peers.sh first (as root)" >&2
    exit 1
fi

steps_for() { if [ "$1" -ge 1024 ]; then echo 10; elif [ "$1" -ge 256 ]; then echo 30; else echo 200; fi; }

json_field() { sed -n "s/.*\"$1\": \([0-9.e+-]*\).*/\1/p" | head -n 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

nnlab_us() {  # preset batch: the JSON to a file first, then read
    "$nnlab" bench --preset "$1" --device cpu --batch "$2" --steps "$(steps_for "$2")" --warmup 3 --json \
        >"$tmp/nnlab.json" 2>/dev/null || true
    json_field us_per_step <"$tmp/nnlab.json"
}

# the CPU targets against PyTorch (PyTorch / nnlab at least this), empty where
# none is set
target_for() {  # preset batch
    case "$1:$2" in
        mnist-mlp-128:4|mnist-mlp-1000:4) echo 10 ;;
        lenet-cifar10:4|lenet5-cifar10:4) echo 6 ;;
        lenet-cifar10:256|lenet5-cifar10:256|conv1d-regression:256) echo 2 ;;
        *) echo "" ;;
    esac
}

min_of() { awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN { if (a <= 0) print b; else if (b <= 0 || a < b) print a; else print b }'; }

# The fastest peer: "us version threads". Each PyTorch at its own default (torch's
# pool and OpenBLAS's as it sizes them: on 2 cores torch 1, OpenBLAS 2, its fastest
# for large products) and with every pool at 1 and at all the cores (--threads).
peer_best() {  # preset batch
    best=""
    for py in $peers; do
        for t in default 1 "$cores"; do
            targ="--threads $t"
            [ "$t" = default ] && targ=""
            # shellcheck disable=SC2086  # $targ: no word or two
            line=$("$py" "$here/pytorch_step.py" "$NNLAB_PRESETS_DIR/$1.ini" --batch "$2" \
                   --steps "$(steps_for "$2")" --warmup 5 $targ 2>/dev/null) || continue
            us=$(echo "$line" | json_field us_per_step)
            ver=$(echo "$line" | sed -n 's/.*"torch": "\([^"]*\)".*/\1/p')
            label=$t    # one word: the table's row splits the line on spaces
            [ "$t" = default ] && label="default(torch:$(echo "$line" | json_field threads),BLAS:$(echo "$line" | json_field blas_threads))"
            if [ -z "$best" ] || awk -v a="$us" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
                best="$us $ver $label"
            fi
        done
    done
    echo "$best"
}

date=$(date -u +%Y-%m-%d)
# the commit measured, when run from a git tree: two runs on one day keep both tables
commit=$(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || true)
out="$here/results/compare-cpu-$date${commit:+-$commit}.md"
mkdir -p "$here/results"
{
    echo "# nnlab vs PyTorch, CPU, µs per training step (median)"
    echo
    echo "- date: $date; $("$nnlab" --version)${commit:+ (commit $commit)}; machine: $cores cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
    echo "- nnlab's CPU: $("$nnlab" devices 2>/dev/null | grep -m1 '^cpu ' | sed 's/  */ /g')${NNLAB_NO_AVX512:+ (NNLAB_NO_AVX512=$NNLAB_NO_AVX512: our kernels at AVX2)}"
    echo "- nnlab: \`nnlab bench --device cpu --batch B --steps S --warmup 3\`"
    echo "- PyTorch: \`bench/pytorch_step.py\` with each of:$peers; its default threads, and every pool (torch's, OpenBLAS's) at 1 and at $cores; the fastest is shown"
    echo
    echo "- nnlab runs before and after PyTorch (both shown: first / second); the faster is compared"
    echo
    echo "| preset | batch | device | nnlab µs/step | (runs) | PyTorch µs/step | PyTorch (version, threads) | PyTorch / nnlab | target | load |"
    echo "|---|---:|---|---:|---|---:|---|---:|---:|---:|"
    for p in $presets; do
        for b in $batches; do
            first=$(nnlab_us "$p" "$b")
            set -- $(peer_best "$p" "$b")
            second=$(nnlab_us "$p" "$b")
            ours=$(min_of "$first" "$second")
            ratio=$(awk -v a="${1:-0}" -v b="${ours:-0}" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "?" }')
            target=$(target_for "$p" "$b")
            mark=""
            if [ -n "$target" ] && [ "$ratio" != "?" ]; then
                mark=$(awk -v r="$ratio" -v t="$target" 'BEGIN { print (r >= t) ? "met" : "missed" }')
                target="${target}x $mark"
            fi
            echo "| $p | $b | cpu | $ours | $first / $second | ${1:-?} | ${2:-?}, ${3:-?} | $ratio | ${target:--} | $(cut -d' ' -f1 /proc/loadavg) |"
        done
    done
    # the CPU target: a gemm-bound step at least 85% of the two cores' sgemm rate
    "$nnlab" calibrate --device cpu --json >"$tmp/cal.json" 2>/dev/null || true
    "$nnlab" explain --preset mnist-mlp-1000 --device cpu --batch 256 --steps 3 --warmup 1 --json \
        >"$tmp/explain.json" 2>/dev/null || true
    sgemm=$(json_field gemm_gflops <"$tmp/cal.json")
    flops=$(json_field flops_per_step <"$tmp/explain.json")
    ours=$(min_of "$(nnlab_us mnist-mlp-1000 256)" "$(nnlab_us mnist-mlp-1000 256)")
    echo
    awk -v f="${flops:-0}" -v us="${ours:-0}" -v g="${sgemm:-0}" -v l="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
        if (f <= 0 || us <= 0 || g <= 0) { print "- gemm-bound step: not measured (explain or calibrate gave no figure)"; exit }
        r = f / us / 1e3
        printf "- gemm-bound step: mnist-mlp-1000 at batch 256, %.1f MFLOP in %.0f us = %.1f GFLOP/s, %.0f%% of the %d cores'\''\n", f / 1e6, us, r, 100 * r / g, '"$cores"'
        printf "  sgemm rate (%.1f GFLOP/s, `nnlab calibrate`); target 85%%: %s; load %s\n", g, (r >= 0.85 * g) ? "met" : "missed", l
    }'
} | tee "$out"
echo "saved to $out" >&2
