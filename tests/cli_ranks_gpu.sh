#!/bin/sh
# tests/cli_ranks_gpu.sh - data-parallel ranks on GPUs (docs/ranks.md), run on
# the emulated GPU module (NNLAB_GPU_EMULATION=1): its stand-in for NCCL sums
# through the host's MPI, so what this proves is the engine's GPU path (the
# gradients weighed and summed on the device arena between backward and
# optimiser, each rank's slice of the data gathered on the device, rank 0's
# parameters shared), not NCCL itself, which only a lent GPU runs. For an MLP
# with dropout and for LeNet, 2 ranks at B end with the parameters 1 rank
# gets at 2B (the tolerance of tests/cli_ranks.sh), with the graph asked for
# and without; NNLAB_RANKS_CHECK=1 holds every step; the JSON has the
# all-reduce phase and says why no graph ran; the sums in buckets by default
# (allreduce_start: on a real GPU a stream of their own beside the backward;
# the stand-in sums each at once) and one sum with --no-overlap, the same
# parameters either way; NCCL missing is said. Speaks
# TAP; skips the whole without MPI, mpirun or the emulated module.
# Needs NNLAB and top_srcdir, which `make check` exports.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}"
n=0 failed=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/cli-lib.sh"
ranks_env
OPENBLAS_NUM_THREADS=1 NNLAB_GPU_EMULATION=1 XDG_CACHE_HOME="$tmp/cache"
export OPENBLAS_NUM_THREADS NNLAB_GPU_EMULATION XDG_CACHE_HOME
env PATH=/nonexistent "$NNLAB" train --preset mnist-mlp-128 --ranks 2 --steps 1 >"$tmp/out" 2>"$tmp/err"
skip_without_mpi
if ! "$NNLAB" devices 2>/dev/null | grep -q '^gpu .* available: emulated'; then
    echo "1..0 # SKIP the emulated GPU module is not built"
    exit 0
fi
TOL=1e-4

# same_params NAME PRESET B STEPS [OPTIONS]: 2 ranks at B on the emulated GPU
# against 1 rank at 2B there (eager), the parameters compared
same_params() {
    name=$1 preset=$2 b=$3 steps=$4; shift 4
    check "$name: 2 ranks run" 0 env NNLAB_RANKS_CHECK=1 "$NNLAB" train --preset "$preset" --device gpu \
        --ranks 2 --batch "$b" --steps "$steps" --no-validation --json --save-params "$tmp/two.npy" "$@"
    cp "$tmp/out" "$tmp/two.json"
    check "$name: 1 rank at $((2 * b)) runs" 0 "$NNLAB" train --preset "$preset" --device gpu --no-graph \
        --batch $((2 * b)) --steps "$steps" --no-validation -q --save-params "$tmp/one.npy"
    check "$name: the same parameters" 0 python3 "$top_srcdir/tests/npy_compare.py" "$tmp/two.npy" \
        "$tmp/one.npy" "$TOL"
}
same_params "MLP with dropout" mnist-mlp-128 16 6
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["ranks"] == 2 and d["global_batch"] == 32 and d["batch_per_rank"] == 16, d
assert d["phases"]["allreduce_us"] > 0, d["phases"]
assert d["overlap"] is True, d["overlap"]
assert d["allreduce_overlapped_us"] is None, d["allreduce_overlapped_us"]' "$tmp/two.json" >"$tmp/err" 2>&1 \
    && ok "the JSON: 2 ranks, the all-reduce phase, buckets (their time in flight not timed)" \
    || not_ok "the JSON: 2 ranks, the all-reduce phase, buckets (their time in flight not timed)"
grep_ok "the note says why no CUDA graph ran" "$tmp/two.json" "ranks on the GPU: no CUDA graph"
same_params "MLP, --no-graph --no-overlap" mnist-mlp-128 16 6 --no-graph --no-overlap
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["overlap"] is False, d["overlap"]' "$tmp/two.json" >"$tmp/err" 2>&1 \
    && ok "the JSON with --no-overlap: one sum after the backward" \
    || not_ok "the JSON with --no-overlap: one sum after the backward"
same_params "LeNet" lenet-cifar10 8 3

# a control: 1 rank at B is not 2 ranks at B (the comparison can fail)
"$NNLAB" train --preset mnist-mlp-128 --device gpu --no-graph --batch 16 --steps 6 --no-validation -q \
    --save-params "$tmp/half.npy" >/dev/null 2>&1
"$NNLAB" train --preset mnist-mlp-128 --device gpu --ranks 2 --batch 16 --steps 6 --no-validation -q \
    --save-params "$tmp/two.npy" >/dev/null 2>&1
check "control: 1 rank at B differs from 2 ranks at B" 1 python3 "$top_srcdir/tests/npy_compare.py" \
    "$tmp/two.npy" "$tmp/half.npy" "$TOL"

# NCCL missing: every rank stops, the library named; nothing saved
check "NCCL missing: fails" 1 env NNLAB_NCCL_LIBRARY="$tmp/none/libnccl.so.2" "$NNLAB" train \
    --preset mnist-mlp-128 --device gpu --ranks 2 --batch 16 --steps 2 -q --save-params "$tmp/nccl.npy"
grep_ok "NCCL missing: says which library" "$tmp/err" "NCCL, which sums the GPUs' gradients, could not be loaded: .*libnccl.so.2"
[ ! -e "$tmp/nccl.npy" ] && ok "NCCL missing: no file saved" || not_ok "NCCL missing: no file saved"
# one rank never loads NCCL
check "one rank on the GPU needs no NCCL" 0 env NNLAB_NCCL_LIBRARY="$tmp/none/libnccl.so.2" "$NNLAB" train \
    --preset mnist-mlp-128 --device gpu --batch 16 --steps 2 -q

echo "1..$n"
[ "$failed" -eq 0 ]
