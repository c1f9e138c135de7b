#!/bin/sh
# bench/ranks.sh - data-parallel training's step against its rank count, on
# this machine, nnlab beside PyTorch DDP, one benchmark at a time.
#
#   bench/ranks.sh [--quick] [--ranks "1 2 4"] [--device cpu|gpu] [NNLAB]
#
# For each preset, per-rank batch and rank count N it times `nnlab bench
# --ranks N` (median us/step over its timed steps, and its all-reduce phase)
# and, where a python3 imports torch, PyTorch's DistributedDataParallel step
# of the same network (bench/ddp_step.py: gloo on the CPU, NCCL on GPUs, one
# GPU a rank). Beside each, one rank at the global batch N x B: the same
# samples a step on one rank, so that "speedup" (one rank's step at N x B
# over N ranks' step at B) says what the ranks bought, and "efficiency" is
# speedup / N. nnlab and the peer alternate; each JSON goes to a file, never
# a pipe (a reader started beside nnlab takes a core from it). On these 2
# cores more than 2 ranks are oversubscribed: their figures show contention
# too, and say so. Each row carries the 1-minute load average at its end.
# Prints a Markdown table and saves it with the machine and the date under
# bench/results/.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
quick=0 ranks_list="1 2" device=cpu
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=1; shift ;;
        --ranks) ranks_list=$2; shift 2 ;;
        --device) device=$2; shift 2 ;;
        *) break ;;
    esac
done
nnlab=${1:-}
if [ -z "$nnlab" ]; then
    if [ -x "$here/../build/nnlab" ]; then nnlab=$here/../build/nnlab; else nnlab=nnlab; fi
fi
export NNLAB_PRESETS_DIR=${NNLAB_PRESETS_DIR:-$here/../presets}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
presets="mnist-mlp-128 mnist-mlp-1000 lenet-cifar10 conv1d-regression"
batches="4 64 256"
steps=30
[ $quick -eq 1 ] && presets="mnist-mlp-128 lenet-cifar10" && batches="4 256" && steps=15
python=${NNLAB_PYTHON:-/usr/bin/python3}
peer=0
"$python" -c 'import torch.distributed' 2>/dev/null && peer=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# field FILE KEY: a number of a one-object JSON file ("" when absent or null)
field() {
    "$python" -c 'import json,sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d = d.get(k) if isinstance(d, dict) else None
print("" if d is None else d)' "$1" "$2" 2>/dev/null || true
}
load() { cut -d' ' -f1 /proc/loadavg; }
ratio() { "$python" -c 'import sys
a, b = sys.argv[1], sys.argv[2]
print(f"{float(a) / float(b):.2f}" if a and b and float(b) > 0 else "-")' "$1" "$2"; }

# nnlab_step N B -> "us allreduce_us" (median step, its all-reduce phase)
nnlab_step() {
    if "$nnlab" bench --preset "$preset" --device "$device" --ranks "$1" --batch "$2" --steps $steps \
        --warmup 3 --json >"$tmp/n.json" 2>"$tmp/n.err"; then
        echo "$(field "$tmp/n.json" us_per_step) $(field "$tmp/n.json" phases.allreduce_us)"
    else
        echo "- -"
    fi
}
# ddp_step N B -> median us
ddp_step() {
    [ $peer -eq 1 ] || { echo "-"; return; }
    dev=cpu; [ "$device" = gpu ] && dev=cuda
    if "$python" "$here/ddp_step.py" "$NNLAB_PRESETS_DIR/$preset.ini" --ranks "$1" --batch "$2" \
        --steps $steps --device $dev >"$tmp/d.json" 2>"$tmp/d.err"; then
        field "$tmp/d.json" us_per_step_median
    else
        echo "-"
    fi
}

cores=$(nproc)
date=$(date -u +%Y-%m-%d)
rev=$(cd "$here/.." && git rev-parse --short HEAD 2>/dev/null || echo unknown)
out="$here/results/ranks-$device-$date-$rev.md"
{
    echo "# Data-parallel ranks against one, $device, $date (nnlab $rev)"
    echo
    echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $cores cores;"
    echo "$("$nnlab" --version 2>/dev/null | head -1); peer: $([ $peer -eq 1 ] && "$python" -c 'import torch; print("PyTorch", torch.__version__, "DDP")' || echo none)."
    echo "Command: bench/ranks.sh$([ $quick -eq 1 ] && echo ' --quick') --ranks \"$ranks_list\" --device $device."
    echo "Every figure measured: median us/step over $steps timed steps after 3 untimed."
    echo "speedup = one rank's step at the global batch / N ranks' step at B each (the same samples);"
    echo "efficiency = speedup / N. Ranks beyond $cores share cores: oversubscribed."
    echo
    echo "| preset | B a rank | N | nnlab N ranks us | all-reduce us | nnlab 1 rank at NxB us | nnlab speedup | DDP N ranks us | DDP 1 rank at NxB us | DDP speedup | nnlab / DDP | load |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
} >"$tmp/table"
for preset in $presets; do
    for b in $batches; do
        for n in $ranks_list; do
            global=$((n * b))
            set -- $(nnlab_step "$n" "$b"); ours=${1:--} ar=${2:-}  # one rank: no all-reduce field
            peer_n=$(ddp_step "$n" "$b")
            set -- $(nnlab_step 1 "$global"); ours1=${1:--}
            peer_1=$(ddp_step 1 "$global")
            sp=$(ratio "$ours1" "$ours"); psp=$(ratio "$peer_1" "$peer_n")
            over=""; [ "$n" -gt "$cores" ] && over=" (oversubscribed)"
            echo "| $preset | $b | $n$over | $ours | ${ar:--} | $ours1 | $sp | $peer_n | $peer_1 | $psp | $(ratio "$ours" "$peer_n") | $(load) |" \
                >>"$tmp/table"
            tail -n 1 "$tmp/table"
        done
    done
done
mkdir -p "$here/results"
cp "$tmp/table" "$out"
cat "$out"
echo "saved: $out"
