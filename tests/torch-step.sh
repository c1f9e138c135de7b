#!/bin/sh
# tests/torch-step.sh - PyTorch's step beside nnlab's, as a user meets it:
# `nnlab bench --with-pytorch` refusing with one line and exit 2 when no
# python3 can run or none imports torch; the helper
# (tools/nnlab-torch-step.py) naming the file, [layerN] and key of what it
# cannot build, read before torch is imported; and, where a python3 imports
# torch, every shipped training preset measured beside nnlab with the same
# parameter count (tests/test_torch_step runs every shipped preset through
# the runner). The cases that need torch are skipped elsewhere. Speaks TAP.
# Needs NNLAB (the program) and top_srcdir, which `make check` exports.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}"
n=0 failed=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/cli-lib.sh"
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
helper=$top_srcdir/tools/nnlab-torch-step.py
fixtures=$top_srcdir/tests/fixtures
python=$(command -v python3 || true)
bench="bench --steps 1 --warmup 0 --batch 2 -q --with-pytorch"
# json FILE EXPRESSION: EXPRESSION over the JSON object j in FILE, true or false
json() { "$python" -c 'import json, sys; j = json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"; }
json_ok() { if json "$2" "$3"; then ok "$1"; else echo "# not $3:"; sed 's/^/#   /' "$2" | head -n 5; not_ok "$1"; fi; }

check "no python: exit 2" 2 env NNLAB_PYTHON=/nonexistent "$NNLAB" $bench --preset mnist-mlp-128
grep_ok "no python: named, with why" "$tmp/err" "NNLAB_PYTHON=/nonexistent: cannot run: No such file"
one_line_err "no python: one-line error"

if [ -z "$python" ]; then
    skip "no python3 on PATH: the helper's own cases"
elif "$python" -c 'import torch' >/dev/null 2>&1; then
    skip "python3 on PATH imports torch: no python3 without torch to try"
else
    check "no torch: exit 2" 2 env NNLAB_PYTHON="$python" "$NNLAB" $bench --preset mnist-mlp-128
    grep_ok "no torch: says so" "$tmp/err" "PyTorch is not installed for any python3 tried: NNLAB_PYTHON=.*cannot import torch"
    one_line_err "no torch: one-line error"
fi

if [ -n "$python" ]; then
    check "helper: unknown kind exits 2" 2 "$python" "$helper" "$fixtures/torch-unknown-kind.ini" --batch 2
    json_ok "helper: unknown kind names file, [layer2], type" "$tmp/out" \
        "j['error']['kind'] == 'preset' and j['error']['section'] == 'layer2' and j['error']['key'] == 'type' and j['error']['file'].endswith('torch-unknown-kind.ini') and 'frobnicate' in j['error']['message']"
    check "helper: unknown key exits 2" 2 "$python" "$helper" "$fixtures/torch-unknown-key.ini" --batch 2
    json_ok "helper: unknown key named" "$tmp/out" \
        "j['error']['section'] == 'layer1' and j['error']['key'] == 'flavour' and '[layer1] flavour' in j['error']['message']"
    check "helper: no --batch exits 2" 2 "$python" "$helper" "$top_srcdir/presets/mnist-mlp-128.ini"
    json_ok "helper: usage error said" "$tmp/out" "j['error']['kind'] == 'usage' and '--batch' in j['error']['message']"
    # --data-on-device (the way framework-data-on-device) is an argument it takes: the preset's error, not a usage one
    check "helper: --data-on-device taken" 2 "$python" "$helper" "$fixtures/torch-unknown-key.ini" --batch 2 --data-on-device
    json_ok "helper: --data-on-device, then the preset read" "$tmp/out" "j['error']['key'] == 'flavour'"
fi

# The sweep's framework way measured with PyTorch (nnlab sweep --with-pytorch):
# its points, one per batch, labelled with the tool and its version, beside
# nnlab's measured ones; through the stand-in helper, which needs no torch
sweep="sweep --preset mnist-mlp-128 --batches 2,4 --steps 2 --warmup 1 --with-pytorch --csv"
check "sweep --with-pytorch: no python: exit 2" 2 env NNLAB_PYTHON=/nonexistent "$NNLAB" $sweep
one_line_err "sweep --with-pytorch: no python: one-line error"
if [ -n "$python" ]; then
    check "sweep --with-pytorch (stand-in helper)" 0 env NNLAB_PYTHON="$python" \
        NNLAB_TORCH_HELPER="$fixtures/torch-helper-stub.py" NNLAB_TORCH_STUB_PARAMS=101770 "$NNLAB" $sweep
    for b in 2 4; do
        if grep -q "^cpu,$b,123.500,.*,measured with PyTorch 9.9,framework," "$tmp/out"
        then ok "sweep --with-pytorch: batch $b measured with PyTorch, way framework"
        else sed 's/^/#   /' "$tmp/out"; not_ok "sweep --with-pytorch: batch $b measured with PyTorch, way framework"; fi
    done
    if [ "$(grep -c '^cpu,[24],[0-9.]*,.*,measured,nnlab,' "$tmp/out")" -eq 2 ]
    then ok "sweep --with-pytorch: nnlab's own points beside them"
    else not_ok "sweep --with-pytorch: nnlab's own points beside them"; fi
    check "sweep --with-pytorch: a helper's failure is the point's" 0 env NNLAB_PYTHON="$python" \
        NNLAB_TORCH_HELPER="$fixtures/torch-helper-stub.py" NNLAB_TORCH_STUB_PARAMS=101770 \
        NNLAB_TORCH_STUB=crash "$NNLAB" $sweep
    grep_ok "sweep --with-pytorch: the failure said" "$tmp/err" "cpu batch 2: PyTorch 9.9: .*boom"
else
    skip "no python3 on PATH: the sweep's stand-in cases"
fi

# On the CPU with the stand-in: its page faults and system time a step, measured, in the text
# and the JSON; a helper without them (an older one) leaves them null
stub_cpu="env NNLAB_PYTHON=$python NNLAB_TORCH_HELPER=$fixtures/torch-helper-stub.py NNLAB_TORCH_STUB_PARAMS=101770"
if [ -z "$python" ]; then
    skip "no python3 on PATH: the CPU stand-in cases"
else
    check "bench --with-pytorch, stand-in: runs" 0 $stub_cpu "$NNLAB" bench --preset mnist-mlp-128 \
        --batch 4 --steps 3 --warmup 1 --with-pytorch --json
    json_ok "stand-in: its faults and system time a step in the JSON" "$tmp/out" \
        'j["pytorch"]["minor_faults_per_step"] == 25088 and j["pytorch"]["system_us_per_step"] == 41019.5'
    grep_ok "stand-in: the text's fresh pages, labelled measured" "$tmp/err" \
        "25088 pages a step mapped fresh (102.8 MB), 41020 us of system time a step (measured"
    check "bench --with-pytorch, stand-in without them: runs" 0 $stub_cpu NNLAB_TORCH_STUB_NO_FAULTS=1 \
        "$NNLAB" bench --preset mnist-mlp-128 --batch 4 --steps 3 --warmup 1 --with-pytorch --json
    json_ok "stand-in without them: null, not 0" "$tmp/out" \
        'j["pytorch"]["minor_faults_per_step"] is None and j["pytorch"]["system_us_per_step"] is None'
fi

# On a GPU (the emulated one, the stand-in seeing "CUDA"): PyTorch's whole
# step as one CUDA graph beside nnlab's graph way; not with --no-graph
stub_gpu="env NNLAB_GPU_EMULATION=1 NNLAB_PYTHON=$python NNLAB_TORCH_HELPER=$fixtures/torch-helper-stub.py NNLAB_TORCH_STUB_PARAMS=101770 NNLAB_TORCH_STUB_CUDA=1"
if [ -z "$python" ]; then
    skip "no python3 on PATH: the GPU stand-in cases"
elif ! env NNLAB_GPU_EMULATION=1 "$NNLAB" devices 2>/dev/null | grep -q '^gpu .* available: emulated'; then
    skip "the emulated GPU module is not built: the GPU stand-in cases"
else
    check "bench --with-pytorch on a GPU: runs" 0 $stub_gpu "$NNLAB" bench --preset mnist-mlp-128 --device gpu \
        --batch 4 --steps 3 --warmup 1 --with-pytorch --json
    json_ok "on a GPU: PyTorch's CUDA graph beside, its way named" "$tmp/out" \
        'j["pytorch_graph"]["way"] == "pytorch-cuda-graph" and j["pytorch_graph"]["us_per_step"] == 45.5 and j["pytorch"]["us_per_step"] == 123.5'
    grep_ok "on a GPU: the text's graph line" "$tmp/err" "45.5 us/step (median of blocks of 3 steps, its whole step one CUDA graph"
    check "bench --with-pytorch --no-graph on a GPU: runs" 0 $stub_gpu "$NNLAB" bench --preset mnist-mlp-128 \
        --device gpu --no-graph --batch 4 --steps 3 --warmup 1 --with-pytorch --json
    json_ok "--no-graph: no PyTorch graph asked for" "$tmp/out" '"pytorch_graph" not in j and j["pytorch"]["us_per_step"] == 123.5'
fi

# Where a python3 imports torch: the runner finds it (python3 on PATH, then /usr/bin/python3)
"$NNLAB" $bench --json --preset mnist-mlp-128 >"$tmp/probe.out" 2>"$tmp/probe.err"
if grep -q "not installed\|no python3" "$tmp/probe.err"; then
    skip "no python3 here imports torch: $(head -c 200 "$tmp/probe.err")"
    echo "1..$n"                # the plan after the last case: TAP takes it first or last only
    exit $((failed > 0))
fi
# one preset of each family here (conv2d, conv1d, TabNet's graph); every
# shipped preset through the runner: tests/test_torch_step
for p in lenet-cifar10 conv1d-regression tabnet-regression; do
    check "$p: bench --with-pytorch runs" 0 "$NNLAB" $bench --json --preset "$p"
    json_ok "$p: PyTorch's network has nnlab's parameters" "$tmp/out" \
        "j['pytorch']['params'] == j['params'] > 0 and j['pytorch']['us_per_step'] > 0"
    json_ok "$p: labelled measured with PyTorch X.Y" "$tmp/out" \
        "j['pytorch']['source'].startswith('measured with PyTorch ') and j['pytorch']['device'] == 'cpu'"
done
# the helper's own JSON: the eager way's page faults and system time a step (getrusage), with
# the python3 that imports torch (the runner's order: python3 on PATH, then /usr/bin/python3)
torch_py=
for py in "$python" /usr/bin/python3; do
    if [ -n "$py" ] && "$py" -c 'import torch' >/dev/null 2>&1; then torch_py=$py; break; fi
done
check "helper: the eager way at one thread" 0 "$torch_py" "$helper" "$top_srcdir/presets/lenet-cifar10.ini" \
    --batch 2 --steps 2 --warmup 1 --threads 1
json_ok "helper: its page faults and system time per step" "$tmp/out" \
    "j['way'] == 'framework' and j['minor_faults_per_step'] >= 0 and j['system_us_per_step'] >= 0"
check "side by side in the text" 0 "$NNLAB" bench --steps 2 --warmup 0 --batch 2 --preset mnist-mlp-128 --with-pytorch
grep_ok "side by side: nnlab's row" "$tmp/err" "^    nnlab  *[0-9.]* us/step"
grep_ok "side by side: PyTorch's row and ratio" "$tmp/err" "^    PyTorch [0-9.]*  *[0-9.]* us/step (median of 2.*x nnlab's"
check "sweep --with-pytorch with the real helper" 0 "$NNLAB" sweep --preset mnist-mlp-128 --batches 2 --steps 2 \
    --warmup 0 --with-pytorch --csv
grep_ok "sweep: PyTorch's point, way framework" "$tmp/out" "^cpu,2,[0-9.]*,.*,measured with PyTorch [0-9.]*,framework,"
echo "1..$n"
exit $((failed > 0))
