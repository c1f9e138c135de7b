#!/bin/sh
# bench/tabnet.sh - nnlab's tabnet-regression preset against pytorch-tabnet's own
# network (bench/tabnet_step.py), CPU, µs per training step, side by side in one
# run: for each batch, ROUNDS rounds that alternate nnlab and the peer, so that a
# change in the machine's load hits both; the median of the rounds is shown, with
# the load average before and after.
#
#   bench/tabnet.sh [--rounds N] [NNLAB]
#
# Needs pytorch-tabnet in bench/.venv (bench/setup-peers.sh installs it).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rounds=3
if [ "${1:-}" = "--rounds" ]; then rounds=$2; shift 2; fi
nnlab=${1:-}
if [ -z "$nnlab" ]; then
    if [ -x "$here/../build/nnlab" ]; then nnlab=$here/../build/nnlab; else nnlab=nnlab; fi
fi
export NNLAB_PRESETS_DIR=${NNLAB_PRESETS_DIR:-$here/../presets}
py=$here/.venv/bin/python
if ! "$py" -c 'import pytorch_tabnet' 2>/dev/null; then
    echo "tabnet.sh: pytorch-tabnet not found in bench/.venv: run bench/setup-peers.sh (as root)" >&2
    exit 1
fi
cores=$(nproc)
batches="128 1024 4096"
steps_for() { if [ "$1" -ge 4096 ]; then echo 10; elif [ "$1" -ge 1024 ]; then echo 20; else echo 60; fi; }
json_field() { sed -n "s/.*\"$1\": \"*\([0-9A-Za-z.e+-]*\).*/\1/p" | head -n 1; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
load() { cut -d ' ' -f 1-3 /proc/loadavg; }

# nnlab's JSON goes to a file, never a pipe: a reader starting beside nnlab
# takes a core from its thread choice
nnlab_json=$(mktemp) || exit 1
trap 'rm -f "$nnlab_json"' EXIT
nnlab_us() {  # batch
    "$nnlab" bench --preset tabnet-regression --device cpu --batch "$1" --steps "$(steps_for "$1")" \
        --warmup 3 --json >"$nnlab_json" 2>/dev/null || true
    json_field us_per_step <"$nnlab_json"
}
peer_us() {  # batch threads (0: PyTorch's own default: torch's pool at its count, OpenBLAS's at its)
    "$py" "$here/tabnet_step.py" --batch "$1" --steps "$(steps_for "$1")" --warmup 3 --threads "$2" |
        json_field us_per_step
}

date=$(date -u +%Y-%m-%d)
commit=$(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || true)
out="$here/results/tabnet-cpu-$date${commit:+-$commit}.md"
mkdir -p "$here/results"
info=$("$py" "$here/tabnet_step.py" --batch 128 --steps 1 --warmup 0 --threads 1)
{
    echo "# nnlab vs pytorch-tabnet, CPU, µs per training step (median of $rounds alternating rounds)"
    echo
    echo "- date: $date; $("$nnlab" --version)${commit:+ (commit $commit)}; machine: $cores cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
    echo "- nnlab: \`nnlab bench --preset tabnet-regression --device cpu --batch B --steps S --warmup 3\`"
    echo "- peer: \`bench/tabnet_step.py\` (pytorch-tabnet $(echo "$info" | json_field tabnet), torch $(echo "$info" | json_field torch)), its default threads and every pool at 1 and at $cores, the fastest shown; its network has $(echo "$info" | json_field params) parameters, $(echo "$info" | json_field params_used) used"
    echo "- load average before: $(load)"
    echo
    echo "| batch | nnlab µs/step | pytorch-tabnet µs/step (threads) | pytorch-tabnet / nnlab | load average after |"
    echo "|---:|---:|---:|---:|---|"
    for b in $batches; do
        : > /tmp/nn.$$; : > /tmp/p0.$$; : > /tmp/p1.$$; : > /tmp/pn.$$
        r=0
        while [ $r -lt "$rounds" ]; do
            nnlab_us "$b" >> /tmp/nn.$$
            peer_us "$b" 0 >> /tmp/p0.$$
            peer_us "$b" 1 >> /tmp/p1.$$
            peer_us "$b" "$cores" >> /tmp/pn.$$
            r=$((r + 1))
        done
        ours=$(median < /tmp/nn.$$); p0=$(median < /tmp/p0.$$); p1=$(median < /tmp/p1.$$); pn=$(median < /tmp/pn.$$)
        if awk -v a="$p1" -v b="$pn" 'BEGIN { exit !(a <= b) }'; then peer=$p1 t=1; else peer=$pn t=$cores; fi
        if awk -v a="$p0" -v b="$peer" 'BEGIN { exit !(a > 0 && a < b) }'; then peer=$p0 t=default; fi
        ratio=$(awk -v a="$peer" -v b="$ours" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "?" }')
        echo "| $b | $ours | $peer ($t) | $ratio | $(load) |"
    done
    rm -f /tmp/nn.$$ /tmp/p0.$$ /tmp/p1.$$ /tmp/pn.$$
} | tee "$out"
echo "saved to $out" >&2
