#!/bin/sh
# tests/gpu-bench-smoke.sh - bench/gpu.sh --smoke end to end on the emulated
# GPU module (NNLAB_GPU_EMULATION=1; NNLAB_MODULE_DIR, NNLAB and top_srcdir
# come from `make check`): the script runs, and its table is written with a
# row per preset and batch, nnlab's gpu columns measured. Speaks TAP.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}"
n=0 failed=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/cli-lib.sh"

if ! command -v python3 >/dev/null 2>&1; then
    echo "1..0 # SKIP no python3 (bench/gpu.sh writes its table with it)"
    exit 0
fi
# the sweep's calibrations go to a cache of the test's own
export NNLAB NNLAB_GPU_EMULATION=1 XDG_CACHE_HOME="$tmp/cache"
check "bench/gpu.sh --smoke runs" 0 "$top_srcdir/bench/gpu.sh" --smoke --out "$tmp/results"
table=$(ls "$tmp"/results/gpu-emulated-*.md 2>/dev/null | head -n 1)
if [ -n "$table" ] && [ -s "$table" ]; then ok "the table file is written"; else not_ok "the table file is written"; fi
cp "$table" "$tmp/err" 2>/dev/null
for p in mnist-mlp-128 lenet-cifar10; do
    for b in 1 4; do
        # nnlab cpu, gpu graph and gpu eager measured (numbers, not "-")
        grep_ok "a row for $p at batch $b" "$table" "^| $p | $b | [0-9][0-9,.]* | [0-9][0-9,.]* | [0-9][0-9,.]* |"
    done
done
grep_ok "PyTorch's CUDA-graph and compile columns" "$table" "| PyTorch cuda graph | PyTorch compile | PyTorch cpu |.*| graph / PyTorch graph |"
# every row of the step table as many cells as its header
cells=$(awk -F'|' '/^\| preset \| batch \| nnlab cpu/ { h = NF } /^\| (mnist-mlp-128|lenet-cifar10) \| [0-9]/ { if (NF != h) bad++ } END { print (h > 0 && !bad) ? "same" : "differ" }' "$table")
[ "$cells" = same ] && ok "the step table's rows match its header" || not_ok "the step table's rows match its header"
grep_ok "the Jacobian's rows" "$table" "^| mlp-jacobian | gpu | rows | 4 |"
grep_ok "the machine's OpenBLAS core" "$table" "OpenBLAS core"
grep_ok "says it was emulated" "$table" "emulated GPU"
echo "1..$n"
[ "$failed" -eq 0 ]
