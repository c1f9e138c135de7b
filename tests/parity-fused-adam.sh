#!/bin/sh
# tests/parity-fused-adam.sh - Adam fused into the linear layers' backward
# (backends/cpu/cpu_linear_adam.c, decision 0161) claims the bits of the two
# ops run apart. Each case trains on the cpu backend twice, fused (the
# default) and with NNLAB_NO_FUSED_ADAM=1, and compares the saved
# parameters byte for byte; the JSON must say the first fused layers and
# the second none, so that a fusion that silently never runs fails too.
# Cases: an MLP on random data with tails around the 8- and 16-float
# registers (84 -> 37 -> 19 -> 3), weight decay, a layer without bias, every
# batch the fused kernel takes (1 to 8) on 1 and 2 threads; a batch of 9,
# which it declines; TabNet (a graph, weights shared between layers, which
# are never fused); and, on a CPU with AVX-512, the AVX2 kernels
# (NNLAB_NO_AVX512=1) as well. Then that the measured step says so: bench's
# backward+adam part and its line, explain's adam_fused_layers. Speaks TAP.
# Needs NNLAB, which `make check` exports.
: "${NNLAB:=./nnlab}"
n=0 failed=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$tmp/err" | tail -n 5; }

cat >"$tmp/mlp.ini" <<'INI'
[preset]
name = "fused-adam-mlp"
[data]
set = random
rows = 512
val_rows = 16
features = 84
targets = 3
[train]
loss = mse
device = cpu
batch = 4
epochs = 1
[optimizer]
type = adam
lr = 0.01
weight_decay = 0.01
[layer1]
type = linear
out = 37
[layer2]
type = relu
[layer3]
type = linear
out = 19
bias = false
[layer4]
type = tanh
[layer5]
type = linear
out = 3
INI
sed -e 's/^rows = .*/rows = 256/' -e 's/^val_rows = .*/val_rows = 16/' \
    "${top_srcdir:-.}/presets/tabnet-regression.ini" >"$tmp/tabnet.ini"

# fused_layers JSON: the step's adam_fused_layers
fused_layers() { sed -n 's/.*"adam_fused_layers": *\([0-9]*\).*/\1/p' "$1" | head -n 1; }

# case NAME PRESET BATCH THREADS WANT [VAR=VALUE...]: WANT "some" or "none"
# fused layers in the default run; both runs' parameters the same bytes
case_() {
    name=$1 preset=$2 batch=$3 threads=$4 want=$5; shift 5
    for way in fused apart; do
        off=0; [ "$way" = apart ] && off=1
        if ! env "$@" NNLAB_NO_FUSED_ADAM=$off "$NNLAB" train --preset "$preset" --batch "$batch" \
            --steps 9 --threads "$threads" --no-validation -q --json \
            --save-params "$tmp/$way.npy" >"$tmp/$way.json" 2>"$tmp/err"; then
            not_ok "$name: training ($way) failed"; return
        fi
    done
    got=$(fused_layers "$tmp/fused.json") apart=$(fused_layers "$tmp/apart.json")
    if [ "$apart" != 0 ]; then
        echo "NNLAB_NO_FUSED_ADAM=1 still fused $apart layers" >"$tmp/err"; not_ok "$name"; return
    fi
    if { [ "$want" = some ] && [ "${got:-0}" -lt 1 ]; } || { [ "$want" = none ] && [ "$got" != 0 ]; }; then
        echo "fused layers: '$got', expected $want" >"$tmp/err"; not_ok "$name"; return
    fi
    if cmp "$tmp/fused.npy" "$tmp/apart.npy" >"$tmp/err" 2>&1; then
        ok "$name: $got layers fused, the same parameters bit for bit"
    else not_ok "$name: parameters differ"; fi
}

for threads in 1 2; do
    for batch in 1 2 3 4 5 6 7 8; do
        case_ "MLP batch $batch, $threads thread(s)" "$tmp/mlp.ini" "$batch" "$threads" some
    done
done
case_ "MLP batch 9: declined, nothing fused" "$tmp/mlp.ini" 9 2 none
case_ "TabNet batch 8 (a graph, shared weights)" "$tmp/tabnet.ini" 8 2 some
kernels=$("$NNLAB" devices 2>/dev/null | sed -n 's/.*our kernels: \([a-z0-9]*\).*/\1/p' | head -n 1)
if [ "$kernels" = avx512 ]; then
    for batch in 3 8; do
        case_ "MLP batch $batch on the AVX2 kernels (NNLAB_NO_AVX512=1)" "$tmp/mlp.ini" "$batch" 2 some \
            NNLAB_NO_AVX512=1
    done
else
    for batch in 3 8; do
        n=$((n + 1)); echo "ok $n # SKIP MLP batch $batch on the AVX2 kernels: this CPU runs them already ($kernels)"
    done
fi
# the measured step names what its backward part holds, in bench's text and explain's JSON
"$NNLAB" bench --preset "$tmp/mlp.ini" --batch 4 --steps 5 >/dev/null 2>"$tmp/bench"
if grep -q ' + backward+adam [0-9]' "$tmp/bench" &&
    grep -q "backward+adam: Adam's update of 3 linear layers ran in each one's weight gradient's pass" "$tmp/bench"; then
    ok "bench: the backward part is named backward+adam, and the line says of how many layers"
else cp "$tmp/bench" "$tmp/err"; not_ok "bench: the backward part is named backward+adam"; fi
NNLAB_NO_FUSED_ADAM=1 "$NNLAB" bench --preset "$tmp/mlp.ini" --batch 4 --steps 5 >/dev/null 2>"$tmp/bench"
if grep -q ' + backward [0-9]' "$tmp/bench" && ! grep -q 'backward+adam' "$tmp/bench"; then
    ok "bench with NNLAB_NO_FUSED_ADAM=1: the plain backward part"
else cp "$tmp/bench" "$tmp/err"; not_ok "bench with NNLAB_NO_FUSED_ADAM=1: the plain backward part"; fi
"$NNLAB" explain --preset "$tmp/mlp.ini" --batch 4 --device cpu --steps 5 --json >"$tmp/explain.json" 2>"$tmp/err"
if grep -q '"adam_fused_layers": 3' "$tmp/explain.json"; then
    ok "explain --json: adam_fused_layers 3"
else not_ok "explain --json: adam_fused_layers 3"; fi
echo "1..$n"
[ "$failed" -eq 0 ]
