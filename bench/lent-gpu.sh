#!/bin/bash
# bench/lent-gpu.sh OUT SECONDS [SKIP] - what a lent GPU machine is for, in one
# call that ends within SECONDS (the device tool gives a session 15 minutes in
# all). SKIP (comma-separated) leaves stages out when an earlier call already
# measured them: parity (tests/parity-avx512.sh and the two paths' steps),
# jacobian (bench/gpu.sh's Jacobian stage). NNLAB_THREADS_PRESETS orders
# bench/threads.sh's presets (the ones a budget may cut go last; by default the
# framework fit's worst 16-core rows first).
#
# Run from the checkout's root on the GPU machine, with the build packed by
# ../shared/tools/gpu-bundle.sh into .gpu/ (docs/gpu-backend.md, "Running on the GPU machine": the
# bundle also needs the test programs, the PyTorch helper and libblis):
#   1. the machine: nvidia-smi, the CPU's flags, `nnlab devices`;
#   2. tests/parity-avx512.sh: the parity and gradient suites on the AVX-512
#      and AVX2 paths of our CPU kernels (never run on AVX-512 silicon
#      before), and the two paths' step times alternated;
#   3. `nnlab calibrate` of the GPU and the CPU (JSON; cached for what follows);
#   4. bench/gpu.sh --budget: test_gpu, the sweeps (eager and graph side by side,
#      the write-ups' eager way twice), the race, PyTorch on cuda (its framework
#      way, each batch copied, written as the fit's fixture framework-gpu.csv),
#      the Jacobian;
#   5. bench/threads.sh --budget: nnlab against PyTorch at every thread count,
#      batches 1 to 1024 (NNLAB_THREADS_BATCHES), PyTorch's grid in three rounds
#      (each point their median), this CPU calibrated at each thread count:
#      the 16-core host's rows of the framework fit, measured again.
# Everything goes to OUT/results.tar.gz, packed again after each stage, so that
# a call stopped at its limit still brings back what was measured.
set -u
out=$1 total=${2:-540} skip=",${3:-},"
start=$(date +%s)
left() { echo $((start + total - $(date +%s))); }
res=/tmp/lent-gpu
rm -rf "$res"; mkdir -p "$res"
pack() { tar -C /tmp -czf "$out/results.tar.gz" lent-gpu 2>/dev/null; }
note() { echo "lent-gpu: +$(($(date +%s) - start)) s: $*" | tee -a "$res/stages.txt" >&2; }

. .gpu/env.sh
export PATH=$PWD/.gpu/bin:$PATH XDG_CACHE_HOME=/tmp/nnlab-cache TEST_GPU=$NNLAB_BUILDDIR/tests/test_gpu
note "start; $(nproc) cores"
{
    nvidia-smi 2>&1 | head -n 20
    echo; grep -m1 'model name' /proc/cpuinfo; nproc
    grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx|fma|amx)' | tr '\n' ' '; echo
    echo; "$NNLAB" devices 2>&1
    echo; "$NNLAB" --version
} >"$res/machine.txt" 2>&1
pack

skipped() { case $skip in *",$1,"*) note "$1: skipped"; return 0 ;; esac; return 1; }

if ! skipped parity; then
    note "parity-avx512"
    NNLAB=$NNLAB_BUILDDIR/nnlab timeout 90 sh tests/parity-avx512.sh >"$res/parity-avx512.txt" 2>&1
    echo "exit $?" >>"$res/parity-avx512.txt"
    # the two paths' steps, alternated: one thread (the kernels' own speed) and all
    for round in 1 2; do
        for path in avx512 avx2; do
            for t in 1 "$(nproc)"; do
                for pb in lenet-cifar10:64 lenet-cifar10:256 lenet5-cifar10:256 conv1d-regression:256 mnist-mlp-1000:4; do
                    if [ "$path" = avx2 ]; then set -- env NNLAB_NO_AVX512=1; else set -- env -u NNLAB_NO_AVX512; fi
                    "$@" timeout 30 "$NNLAB" bench \
                        --preset "${pb%%:*}" --device cpu --batch "${pb##*:}" --threads "$t" --steps 20 --warmup 3 \
                        --json >"$res/paths-$path-t$t-${pb%%:*}-${pb##*:}-$round.json" 2>/dev/null
                done
            done
        done
    done
    pack
fi

note "calibrate gpu"
timeout 60 "$NNLAB" calibrate --device gpu --json >"$res/calibrate-gpu.json" 2>"$res/calibrate-gpu.err"
note "calibrate cpu"
timeout 60 "$NNLAB" calibrate --device cpu --json >"$res/calibrate-cpu.json" 2>"$res/calibrate-cpu.err"
pack

gpu_budget=$(( $(left) * 55 / 100 ))
note "gpu.sh, budget $gpu_budget s"
gpu_skip=kernels
skipped jacobian && gpu_skip=kernels,jacobian
bench/gpu.sh --out "$res" --budget "$gpu_budget" --batches 1,4,16,64,256,1024 --eager-runs 2 \
    --torch-devices cuda --skip "$gpu_skip" >"$res/gpu-sh.txt" 2>&1
pack

# test_gpu a second time: a cuDNN algorithm that is wrong only when its timed
# trial wins (the Winograd non-fused ones, docs/decisions/0112-no-winograd-nonfused-in-fp32.md) shows in one run
# of two; the first is gpu.sh's
if [ "$(left)" -gt 60 ]; then
    note "test_gpu again"
    NNLAB_REQUIRE_GPU=1 timeout 40 "$TEST_GPU" >"$res/test-gpu-again.txt" 2>&1
    echo "exit $?" >>"$res/test-gpu-again.txt"
    pack
fi

threads_budget=$(( $(left) - 20 ))
note "threads.sh, budget $threads_budget s"
# every batch of the framework fit's fixture: these steps, with the calibration at each
# thread count threads.sh takes first, are the 16-core host's rows re-measured (docs/ways.md)
set -- --batches "${NNLAB_THREADS_BATCHES:-1,4,16,64,256,1024}" --torch-rounds 3
# the 16-core rows that miss most first (docs/ways.md: conv1d at 1-64, the LeNets at 1 and 256,
# TabNet at 1024), the MLPs last: the budget cuts from the end
set -- "$@" --presets "${NNLAB_THREADS_PRESETS:-conv1d-regression,lenet-cifar10,lenet5-cifar10,tabnet-regression,mnist-mlp-1000,mnist-mlp-128}"
[ "$threads_budget" -gt 20 ] && bench/threads.sh --out "$res" --budget "$threads_budget" "$@" \
    >"$res/threads-sh.txt" 2>&1
note "done"
pack
