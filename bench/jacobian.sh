#!/bin/sh
# bench/jacobian.sh - nnlab's Jacobian methods against PyTorch's
# torch.autograd.functional.jacobian (seed 002's write-up) on the CPU, at val
# 100 and 1000: rows against vectorize=False (the same algorithm: one reverse
# pass per output element over the whole batch), batched against
# vectorize=True; per-sample and forward beside them (no PyTorch twin).
#
#   bench/jacobian.sh [--quick] [NNLAB]
#
# Runs one benchmark at a time, nnlab and PyTorch alternating, each pair
# REPEAT times (3; --quick 1), and keeps each side's best. PyTorch is every
# peer installed (Debian's python3-torch for /usr/bin/python3, the pip
# release in bench/.venv; bench/setup-peers.sh), its fastest. vectorize=False
# at val 1000 takes minutes (the seed: 8 min 44 s): it runs once, and is
# left out with --quick. The load average is printed before and after each
# row: a busy machine makes the figures meaningless. Prints a Markdown
# table and saves it with the machine and the date under bench/results/.
#
# The targets: rows at val 100 at least 10x faster than
# vectorize=False; forward at val 1000 under 10 ms.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi
nnlab=${1:-}
if [ -z "$nnlab" ]; then
    if [ -x "$here/../build/nnlab" ]; then nnlab=$here/../build/nnlab; else nnlab=nnlab; fi
fi
export NNLAB_PRESETS_DIR=${NNLAB_PRESETS_DIR:-$here/../presets}
repeat=3
[ $quick -eq 1 ] && repeat=1

peers=""
for py in /usr/bin/python3 "$here/.venv/bin/python"; do
    if [ -x "$py" ] && "$py" -c 'import torch' 2>/dev/null; then peers="$peers $py"; fi
done
if [ -z "$peers" ]; then
    echo "jacobian.sh: no PyTorch found: run bench/setup-peers.sh first (as root)" >&2
    exit 1
fi

json_field() { sed -n "s/.*\"$1\": \([0-9.e+-]*\).*/\1/p" | head -n 1; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == "" || a + 0 < b + 0) print a; else print b }'; }

# nnlab's JSON goes to a file, never a pipe: a reader starting beside nnlab
# takes a core from its thread choice
nnlab_json=$(mktemp) || exit 1
nnlab_s() {  # method val
    "$nnlab" jacobian --preset mlp-jacobian --device cpu --method "$1" --val "$2" --json -q \
        >"$nnlab_json" 2>/dev/null || true
    json_field seconds <"$nnlab_json"
}

torch_s() {  # vectorize(0/1) val -> "seconds version"
    best=""
    for py in $peers; do
        flag=""
        [ "$1" = 1 ] && flag=--vectorize
        line=$("$py" "$here/jacobian_torch.py" --val "$2" $flag 2>/dev/null) || continue
        s=$(echo "$line" | json_field seconds)
        ver=$(echo "$line" | sed -n 's/.*"torch": "\([^"]*\)".*/\1/p')
        if [ -z "$best" ] || awk -v a="$s" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
            best="$s $ver"
        fi
    done
    echo "$best"
}

fmt() { awk -v s="$1" 'BEGIN { if (s == "") print "-"; else if (s < 0.01) printf "%.2f ms", s * 1000; else printf "%.3f s", s }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "-"; else printf "%.1fx", a / b }'; }

out=$(mktemp)
trap 'rm -f "$out" "$nnlab_json"' EXIT
{
    echo "# nnlab jacobian vs torch.autograd.functional.jacobian, CPU"
    echo
    echo "$(uname -n), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, $(date -u +%Y-%m-%d)"
    echo
    echo "| val | nnlab method | nnlab | PyTorch | PyTorch | nnlab faster | load before / after |"
    echo "|---|---|---|---|---|---|---|"
} >"$out"
cat "$out"

row() {  # val method vectorize(0/1/-)
    val=$1 method=$2 vec=$3
    before=$(load)
    best_n="" best_t="" ver=""
    for _ in $(seq "$repeat"); do
        best_n=$(min "$(nnlab_s "$method" "$val")" "$best_n")
        if [ "$vec" != - ]; then
            # vectorize=False at val 1000 takes minutes: once
            if [ "$vec" = 0 ] && [ "$val" -ge 1000 ] && [ -n "$best_t" ]; then continue; fi
            r=$(torch_s "$vec" "$val")
            best_t=$(min "${r%% *}" "$best_t")
            ver=${r#* }
        fi
    done
    name="-"
    [ "$vec" = 0 ] && name="vectorize=False ($ver)"
    [ "$vec" = 1 ] && name="vectorize=True ($ver)"
    line="| $val | $method | $(fmt "$best_n") | $name | $(fmt "$best_t") | $(ratio "$best_t" "$best_n") | $before / $(load) |"
    echo "$line" | tee -a "$out"
}

for val in 100 1000; do
    if [ $quick -eq 1 ] && [ "$val" -ge 1000 ]; then
        row "$val" rows -
    else
        row "$val" rows 0
    fi
    row "$val" batched 1
    row "$val" per-sample -
    row "$val" forward -
done
{
    echo
    echo "Targets of the Jacobian lesson: rows at val 100 at least 10x faster than vectorize=False; forward at val 1000 under 10 ms."
} | tee -a "$out"
mkdir -p "$here/results"
dest="$here/results/jacobian-cpu-$(date -u +%Y-%m-%d).md"
cp "$out" "$dest"
echo "saved $dest"
