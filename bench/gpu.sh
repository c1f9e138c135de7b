#!/bin/bash
# bench/gpu.sh [--smoke] [--out DIR] [--budget S] [--presets LIST] [--batches LIST]
#              [--eager-runs N] [--torch-devices LIST] [--skip LIST]
# - nnlab on this machine's GPU, beside PyTorch on the same machine: the check
# any user with a GPU can run.
#
#   1. tests/test_gpu with NNLAB_REQUIRE_GPU=1 (every case must run);
#   2. the sweep of every preset on cpu and gpu, the default ways (eager and a
#      CUDA graph measured side by side, data on the device; the framework way
#      predicted) and the write-ups' eager way (--no-graph --no-data-on-device
#      --sync-every-step);
#   3. the Jacobian's methods on cpu and gpu (the Jacobian presets);
#   4. PyTorch's eager step of the same networks, data on the device (bench/
#      torch_grid.py over tools/nnlab-torch-step.py --data-on-device) on cuda
#      and on the CPU, when python3 can import torch; on cuda also the
#      framework way (each batch copied as .to() does: the fit's data, written
#      beside the table as framework-gpu.csv, docs/ways.md), its whole
#      step as a CUDA graph (--way graph) and torch.compile's reduce-overhead
#      (--way compile, torch 2), TF32 off;
#   5. with ncu, the per-kernel time of LeNet's eager step at batches 4 and 1024;
#   6. the race (`nnlab train --race`): the CPU, then the GPU eager and graph,
#      of LeNet at batch 4.
# It writes bench/results/gpu-<gpu>-<date>.md: nnlab graph, nnlab eager,
# PyTorch and their ratios per preset and batch, the Jacobian, the kernels,
# and the machine (GPU, driver, CUDA, cuDNN and torch versions, CPU, OpenBLAS's
# core). Every nnlab result goes to a JSON file first (nothing is piped out of
# nnlab); the raw files are kept beside the table in gpu-<gpu>-<date>/.
#
# --smoke: the same, end to end, quickly (2 presets, tiny batches, 2 steps)
# on the emulated GPU module (NNLAB_GPU_EMULATION=1, NNLAB_MODULE_DIR set by
# the caller), without test_gpu, PyTorch or ncu; for `make check`
# (tests/gpu-bench-smoke.sh). Its times are the CPU's, never a GPU's.
#
# --budget S: end within S seconds (a lent machine's minutes): each program
# runs under `timeout` with what is left, and a stage that finds the time
# spent is recorded as not run; the table still comes out. --presets and
# --batches narrow the sweep (comma-separated); --eager-runs N measures the
# write-ups' eager way N times (a second series tells noise from behaviour);
# --torch-devices picks PyTorch's (default "cuda cpu"); --skip names stages
# not to run: tests, sweeps, jacobian, pytorch, kernels, race.
#
# NNLAB names the program (default: build/nnlab, ./nnlab, or nnlab on PATH);
# NNLAB_PRESETS_DIR the presets (default: presets/ beside this script).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
smoke=0
out_dir=$top/bench/results
budget=0 only_presets="" only_batches="" eager_runs=1 torch_devices="cuda cpu" skip=""
while [ $# -gt 0 ]; do
    case $1 in
        --smoke) smoke=1 ;;
        --out) out_dir=$2; shift ;;
        --budget) budget=$2; shift ;;
        --presets) only_presets=$(echo "$2" | tr ',' ' '); shift ;;
        --batches) only_batches=$2; shift ;;
        --eager-runs) eager_runs=$2; shift ;;
        --torch-devices) torch_devices=$(echo "$2" | tr ',' ' '); shift ;;
        --skip) skip=" $(echo "$2" | tr ',' ' ') "; shift ;;
        -h|--help) sed -n '2,42p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "gpu.sh: unknown option $1 (--smoke, --out DIR, --budget S, --presets, --batches," \
                "--eager-runs N, --torch-devices, --skip)" >&2; exit 2 ;;
    esac
    shift
done
case $budget$eager_runs in *[!0-9]*) echo "gpu.sh: --budget and --eager-runs take whole numbers" >&2; exit 2 ;; esac
start=$(date +%s)

find_nnlab() {
    if [ -n "${NNLAB:-}" ]; then echo "$NNLAB"
    elif [ -x "$top/build/nnlab" ]; then echo "$top/build/nnlab"
    elif [ -x "$top/nnlab" ]; then echo "$top/nnlab"
    else command -v nnlab; fi
}
nnlab=$(find_nnlab)
[ -x "$nnlab" ] || { echo "gpu.sh: no nnlab program (set NNLAB)" >&2; exit 2; }
presets_dir=${NNLAB_PRESETS_DIR:-$top/presets}
export NNLAB_PRESETS_DIR=$presets_dir

if [ "$smoke" = 1 ]; then
    export NNLAB_GPU_EMULATION=${NNLAB_GPU_EMULATION:-1}
    presets="mnist-mlp-128 lenet-cifar10"
    batches=1,4 steps=2 warmup=1 jac_vals="4" torch_batches=""
else
    presets=$(cd "$presets_dir" && ls *.ini | sed 's/\.ini$//')
    batches=1,4,16,64,256,1024,4096 steps=20 warmup=3 jac_vals="100 1000"
    torch_batches="1 4 16 64 256 1024 4096"
fi
if [ -n "$only_presets" ]; then presets=$only_presets; fi
if [ -n "$only_batches" ]; then batches=$only_batches torch_batches=$(echo "$only_batches" | tr ',' ' '); fi

raw=$(mktemp -d "${TMPDIR:-/tmp}/nnlab-gpu-bench.XXXXXX") || exit 1
trap 'rm -rf "$raw"' EXIT
log() { echo "gpu.sh: $*" >&2; }
# The seconds left of --budget (a large number without one); a program runs
# under `timeout` with them, so that a budgeted run ends on time.
left() { if [ "$budget" -gt 0 ]; then echo $((start + budget - $(date +%s))); else echo 86400; fi; }
timed() { local s; s=$(left); [ "$s" -gt 1 ] || return 124; timeout -k 2 "$s" "$@"; }
# stage NAME: whether to run it (not skipped, time left); a stage not run says why
stage() {
    case $skip in *" $1 "*) echo "$1: not run (--skip)" >>"$raw/stages.txt"; return 1 ;; esac
    if [ "$(left)" -le 1 ]; then echo "$1: not run (--budget $budget s spent)" >>"$raw/stages.txt"; return 1; fi
    echo "$1: started at +$(($(date +%s) - start)) s" >>"$raw/stages.txt"
}
is_jacobian() { grep -Eq '^[[:space:]]*kind[[:space:]]*=[[:space:]]*jacobian' "$presets_dir/$1.ini"; }

# ---- the machine ------------------------------------------------------------------------
machine() {
    "$nnlab" devices >"$raw/devices.txt" 2>&1
    if command -v nvidia-smi >/dev/null 2>&1; then
        nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
            >"$raw/nvidia-smi.txt" 2>&1
    fi
    grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //' >"$raw/cpu.txt" 2>/dev/null
    nproc >>"$raw/cpu.txt"
    OPENBLAS_VERBOSE=2 "$nnlab" bench --preset mnist-mlp-128 --device cpu --batch 1 --steps 1 \
        --warmup 0 --quiet --json >"$raw/openblas.json" 2>"$raw/openblas.txt"
    command -v nvcc >/dev/null 2>&1 && nvcc --version >"$raw/nvcc.txt" 2>&1
}

# ---- 1. the GPU test suite --------------------------------------------------------------
test_suite() {
    local t=${TEST_GPU:-$(dirname "$nnlab")/tests/test_gpu}
    if [ "$smoke" = 1 ]; then echo "not run (smoke mode)" >"$raw/test_gpu.txt"; return; fi
    if [ ! -x "$t" ]; then echo "not run: no $t" >"$raw/test_gpu.txt"; return; fi
    log "tests/test_gpu"
    NNLAB_REQUIRE_GPU=1 timed "$t" >"$raw/test_gpu.txt" 2>&1
}

# ---- 2. sweeps --------------------------------------------------------------------------
sweeps() {
    for p in $presets; do
        is_jacobian "$p" && continue
        log "sweep $p"
        timed "$nnlab" sweep --preset "$p" --devices cpu,gpu --batches "$batches" --steps "$steps" \
            --warmup "$warmup" --json >"$raw/sweep-$p-graph.json" 2>"$raw/sweep-$p-graph.err"
        local run=1 name=eager
        while [ "$run" -le "$eager_runs" ]; do
            timed "$nnlab" sweep --preset "$p" --devices gpu --batches "$batches" --steps "$steps" \
                --warmup "$warmup" --no-graph --no-data-on-device --sync-every-step --json \
                >"$raw/sweep-$p-$name.json" 2>"$raw/sweep-$p-$name.err"
            run=$((run + 1)) name=eager$run
        done
    done
}

# ---- 3. the Jacobian --------------------------------------------------------------------
jacobians() {
    for p in $(cd "$presets_dir" && ls *.ini | sed 's/\.ini$//'); do
        is_jacobian "$p" || continue
        for dev in cpu gpu; do
            for m in rows batched per-sample forward; do
                for v in $jac_vals; do
                    log "jacobian $p $dev $m val $v"
                    timed "$nnlab" jacobian --preset "$p" --device "$dev" --method "$m" --val "$v" \
                        --json >"$raw/jac-$p-$dev-$m-$v.json" 2>"$raw/jac-$p-$dev-$m-$v.err"
                done
            done
        done
        [ "$smoke" = 1 ] && break
    done
}

# ---- 4. PyTorch -------------------------------------------------------------------------
pytorch() {
    [ -n "$torch_batches" ] || return 0
    python3 -c 'import torch' >/dev/null 2>&1 || { echo "no torch" >"$raw/torch.txt"; return 0; }
    local devs="" d
    for d in $torch_devices; do
        if [ "$d" != cuda ] || python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
            devs="$devs $d"
        fi
    done
    # one process a preset and device (torch_grid.py: importing torch once), each
    # point the helper's step in its own torch-P-D-B.json
    local deadline=0
    [ "$budget" -gt 0 ] && deadline=$((start + budget))
    for p in $presets; do
        is_jacobian "$p" && continue
        for d in $devs; do
            log "PyTorch $p $d"
            timed python3 "$here/torch_grid.py" "$presets_dir/$p.ini" --out "$raw" --device "$d" \
                --batches "$(echo $torch_batches | tr ' ' ',')" --deadline "$deadline" --data-on-device \
                >"$raw/torch-$p-$d.err" 2>&1
            [ "$d" = cuda ] || continue
            # the framework way as the write-ups ran it (docs/ways.md): each batch copied
            # from pageable host memory, the loss read back, every step
            log "PyTorch $p $d framework"
            timed python3 "$here/torch_grid.py" "$presets_dir/$p.ini" --out "$raw" --device "$d" \
                --batches "$(echo $torch_batches | tr ' ' ',')" --deadline "$deadline" \
                >"$raw/torch-$p-$d-framework.err" 2>&1
            # PyTorch's best GPU ways: the whole step as a CUDA graph, and
            # torch.compile's reduce-overhead where this torch has it
            for w in graph compile; do
                log "PyTorch $p $d $w"
                timed python3 "$here/torch_grid.py" "$presets_dir/$p.ini" --out "$raw" --device "$d" \
                    --way "$w" --batches "$(echo $torch_batches | tr ' ' ',')" --deadline "$deadline" \
                    >"$raw/torch-$p-$d-$w.err" 2>&1
            done
        done
    done
}

# ---- 5. kernels -------------------------------------------------------------------------
kernels() {
    [ "$smoke" = 1 ] && return 0
    command -v ncu >/dev/null 2>&1 || { echo "no ncu" >"$raw/ncu.txt"; return 0; }
    for b in 4 1024; do
        log "ncu lenet-cifar10 batch $b"
        timed ncu --metrics gpu__time_duration.sum --csv "$nnlab" bench --preset lenet-cifar10 \
            --device gpu --batch "$b" --steps 3 --warmup 1 --no-graph --quiet \
            >"$raw/ncu-$b.csv" 2>"$raw/ncu-$b.err"
    done
}

# ---- 6. the race -------------------------------------------------------------------------
race() {
    local b=4 n=2000
    [ "$smoke" = 1 ] && n=20
    log "race lenet-cifar10 batch $b, $n steps"
    timed "$nnlab" train --preset lenet-cifar10 --race --batch "$b" --steps "$n" --quiet \
        --no-validation --json >"$raw/race-lenet-cifar10-$b.json" 2>"$raw/race-lenet-cifar10-$b.err"
}

machine
stage tests && test_suite
stage sweeps && sweeps
stage race && race
stage pytorch && pytorch
stage jacobian && jacobians
stage kernels && kernels

gpu=$(python3 - "$raw" <<'EOF'
import os, re, sys
raw = sys.argv[1]
name = ""
p = os.path.join(raw, "nvidia-smi.txt")
if os.path.exists(p):
    name = open(p).read().split(",")[0].strip()
if not name:
    name = "emulated" if os.environ.get("NNLAB_GPU_EMULATION") else "none"
print(re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "gpu")
EOF
)
stamp=$(date +%Y-%m-%d)
mkdir -p "$out_dir" || exit 1
table=$out_dir/gpu-$gpu-$stamp.md
python3 "$here/gpu_table.py" "$raw" "$smoke" --fixture "$raw/framework-gpu.csv" >"$table.tmp" && mv "$table.tmp" "$table" || {
    log "the table could not be written"; exit 1; }
rm -rf "$out_dir/gpu-$gpu-$stamp"
cp -r "$raw" "$out_dir/gpu-$gpu-$stamp"
log "wrote $table"
echo "$table"
