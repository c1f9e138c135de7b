#!/bin/sh
# tests/cli_jacobian.sh - `nnlab jacobian` as a user meets it: the result in
# text and JSON, errors that are one line, and --dump's .npy files loaded
# by NumPy (when python3 can import numpy: setup.sh installs python3-numpy)
# and checked against finite differences of the dumped network; without
# NumPy, the files' headers are checked byte by byte. Speaks TAP.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}"
n=0 failed=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
# the calibration --sweep needs is cached here, not in the user's cache
export XDG_CACHE_HOME="$tmp/cache" XDG_CONFIG_HOME="$tmp/config"
. "$top_srcdir/tests/cli-lib.sh"

check "--help lists jacobian" 0 "$NNLAB" --help
grep_ok "--help: jacobian's options" "$tmp/out" "jacobian --preset P \[--val N\] \[--method M\]"
check "rows at val 4 on cpu-ref" 0 "$NNLAB" jacobian --preset mlp-jacobian --val 4 --device cpu-ref --seed 3 -q --dump "$tmp/dump"
grep_ok "names the network" "$tmp/out" "1 -> 20 tanh -> 20 tanh -> 400 at val 4 on cpu-ref, method rows"
grep_ok "rows of J" "$tmp/out" "1600 rows of J"
grep_ok "share of FLOPs on zero blocks" "$tmp/out" "75.0% of them on J's zero blocks"
grep_ok "zero blocks found zero" "$tmp/out" "j != i: 0$"
grep_ok "compared with forward" "$tmp/out" "vs forward  largest difference"
grep_ok "explain: the waste and its remedy" "$tmp/out" "75% of these FLOPs multiply zeros: .* per-sample .* and forward .* remove the waste"
# a rows pass split into parts of 7 samples (the parts a cancel is looked for between, 8192 at
# real sizes) gives the whole pass's J: the same against forward, zero blocks zero
check "rows in parts of 7 samples" 0 env NNLAB_JAC_PASS_SAMPLES=7 "$NNLAB" jacobian -p mlp-jacobian --val 30 --json
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["method"]=="rows" and d["max_difference"]<1e-5' "$tmp/out"; then
    ok "rows in parts: J as forward computes it"; else not_ok "rows in parts: J as forward computes it"; fi
check "per-sample as JSON on cpu" 0 "$NNLAB" jacobian -p mlp-jacobian --val 30 -m per-sample --json
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["method"]=="per-sample" and d["rows"]==12000 and d["max_difference"]<1e-5 and d["zero_block_flops"]==0' "$tmp/out"; then
    ok "JSON parses, with the figures"
else
    not_ok "JSON parses, with the figures"
fi
# the start-up is out of the timed seconds and reported
# apart. The test hook NNLAB_TEST_WARMUP_DELAY_MS makes the first calls
# 400 ms slower, as a GPU's start-up is: the delay must land in warmup_s and
# not in seconds (a val-4 forward Jacobian takes a few ms). On the emulated
# GPU the warm-up runs the whole method once, untimed, and the timed run's
# result still matches.
check "the warm-up apart, as JSON" 0 env NNLAB_TEST_WARMUP_DELAY_MS=400 "$NNLAB" jacobian -p mlp-jacobian --val 4 -m forward --json
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["warmup_s"] >= 0.4 and d["seconds"] < 0.3, d' "$tmp/out"; then
    ok "the delayed start-up is in warmup_s, not in seconds"
else
    not_ok "the delayed start-up is in warmup_s, not in seconds"
fi
check "the warm-up apart, in text" 0 "$NNLAB" jacobian -p mlp-jacobian --val 4 -m forward
grep_ok "text: the warm-up apart" "$tmp/out" "^  time        [0-9.]* s (forward pass [0-9.]* ms; warm-up [0-9.]* ms before, untimed)$"
if env NNLAB_GPU_EMULATION=1 "$NNLAB" devices 2>/dev/null | grep -q '^gpu .* available:'; then
    check "emulated gpu: per-sample with its warm-up" 0 env NNLAB_GPU_EMULATION=1 "$NNLAB" jacobian -p mlp-jacobian --val 4 -m per-sample --device gpu --json
    if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["warmup_s"] > 0 and d["max_difference"] < 1e-5, d' "$tmp/out"; then
        ok "emulated gpu: warmup_s reported, the result still right"
    else
        not_ok "emulated gpu: warmup_s reported, the result still right"
    fi
else
    ok "# SKIP the emulated GPU is not here"
fi
# an unavailable device is refused before anything starts, with train's status (every refusal exits 2)
check "jacobian on an unavailable gpu: 2, as train" 2 env NNLAB_MODULE_DIR="$tmp/none" "$NNLAB" jacobian -p mlp-jacobian --val 4 --device gpu -q
grep_ok "jacobian on an unavailable gpu: says why" "$tmp/err" "gpu"
check "train on the same unavailable gpu: 2" 2 env NNLAB_MODULE_DIR="$tmp/none" "$NNLAB" train --preset mnist-mlp-128 --device gpu --steps 1
check "--sweep predicts per method" 0 "$NNLAB" jacobian -p mlp-jacobian --val 3 -m forward -q --sweep --gpu-profile t4
grep_ok "sweep: labelled predicted" "$tmp/out" "val sweep, predicted by the cost model"
grep_ok "sweep: the GPU named as a profile" "$tmp/out" "GPU: predicted for T4"
if [ "$(grep -c "(predicted)$" "$tmp/out")" -eq 8 ]; then ok "sweep: a verdict per method and way"; else not_ok "sweep: a verdict per method and way"; fi
grep_ok "sweep: the framework-eager way, with its per-operation costs" "$tmp/out" "a framework in eager mode (as PyTorch's jacobian; rows is vectorize=False)"
grep_ok "sweep: the framework's costs named" "$tmp/out" "host overhead an operation 10 us on the CPU, 30 us on the GPU"
grep_ok "sweep: the run's method in words" "$tmp/out" "run by a framework in eager mode, forward on the GPU overtakes this machine's CPU"
grep_ok "explain: the waste named" "$tmp/out" "rows, PyTorch's vectorize=False, would spend 66.6% of its FLOPs on zeros"
check "rows explains its waste" 0 "$NNLAB" jacobian -p mlp-jacobian --val 100 --device cpu -m per-sample -q
grep_ok "per-sample: no FLOP on zero blocks" "$tmp/out" "No FLOP of per-sample multiplies J's zero blocks"
check "unknown method fails" 2 "$NNLAB" jacobian -p mlp-jacobian -m vectorize
grep_ok "unknown method: the choices" "$tmp/err" "rows, batched, per-sample or forward"
one_line_err "unknown method: one-line error"
check "val 0 fails" 2 "$NNLAB" jacobian -p mlp-jacobian --val 0
one_line_err "val 0: one-line error"
check "a training preset is refused" 2 "$NNLAB" jacobian -p mnist-mlp-128
grep_ok "not a jacobian preset" "$tmp/err" "not a jacobian preset"
check "train refuses the jacobian preset" 2 "$NNLAB" train -p mlp-jacobian
grep_ok "train: points to nnlab jacobian" "$tmp/err" "nnlab jacobian --preset mlp-jacobian"

# A job larger than the memory available is refused before it starts, in the
# user's terms: --val, or the preset's [task] val key, with the bytes needed
# and available. An address-space limit (ulimit -v) makes the machine small;
# a sanitizer's build cannot start under one, and skips.
limited() { (ulimit -v 800000 && "$@"); }
if limited "$NNLAB" --help >/dev/null 2>&1; then
    check "val 100000 by batched under an 800 MB limit fails" 2 limited "$NNLAB" jacobian -p mlp-jacobian --val 100000 -m batched
    grep_ok "too large: names --val and the bytes" "$tmp/err" \
        "^nnlab: --val 100000: needs ~1\.[0-9] GB of memory (method batched: parameters [0-9]* KB, buffers .*), [0-9]* MB available$"
    one_line_err "too large: one-line error"
    sed -e 's/^val = 100$/val = 100000/' -e 's/^method = rows$/method = batched/' \
        "$top_srcdir/presets/mlp-jacobian.ini" >"$tmp/big-val.ini"
    check "a preset's val too large fails" 2 limited "$NNLAB" jacobian -p "$tmp/big-val.ini"
    grep_ok "a preset's val: names the file and the key" "$tmp/err" \
        "^nnlab: $tmp/big-val.ini: \[task\] val = 100000: needs ~1\.[0-9] GB of memory (method batched: "
    check "forward at val 10000 fits the same limit" 0 limited "$NNLAB" jacobian -p mlp-jacobian --val 10000 -m forward -q
else
    for t in "val 100000 by batched under an 800 MB limit fails" "too large: names --val and the bytes" \
             "too large: one-line error" "a preset's val too large fails" "a preset's val: names the file and the key" \
             "forward at val 10000 fits the same limit"; do
        ok "$t # SKIP cannot run under ulimit -v (a sanitizer's build)"
    done
fi

# the dump: 3 layers' weights and biases, x, the blocks and the whole J
for f in linear1.weight linear1.bias linear2.weight linear2.bias linear3.weight linear3.bias x \
         jacobian_blocks jacobian; do
    if [ -s "$tmp/dump/$f.npy" ]; then ok "dumped $f.npy"; else not_ok "dumped $f.npy"; fi
done
# the python3 on PATH may be another than Debian's, which python3-numpy serves
numpy_python=
for py in python3 /usr/bin/python3; do
    if [ -z "$numpy_python" ] && [ "${NNLAB_TEST_NO_NUMPY:-}" != 1 ] && "$py" -c 'import numpy' 2>/dev/null; then
        numpy_python=$py
    fi
done
if [ -n "$numpy_python" ]; then
    if "$numpy_python" - "$tmp/dump" >"$tmp/out" 2>"$tmp/err" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
L = [(np.load(f"{d}/linear{i}.weight.npy"), np.load(f"{d}/linear{i}.bias.npy")) for i in (1, 2, 3)]
x = np.load(f"{d}/x.npy")
J = np.load(f"{d}/jacobian.npy")
B = np.load(f"{d}/jacobian_blocks.npy")
assert x.dtype == np.float32 and x.shape == (4, 1), x.shape
assert L[0][0].shape == (20, 1) and L[2][0].shape == (400, 20) and L[2][1].shape == (400,)
assert J.shape == (4, 400, 4, 1) and B.shape == (4, 400, 1)
def net(x):
    h = x.astype(np.float64)
    for i, (w, b) in enumerate(L):
        h = h @ w.T.astype(np.float64) + b
        if i < 2:
            h = np.tanh(h)
    return h
eps = 1e-4
x64 = x.astype(np.float64)
fd = (net(x64 + eps) - net(x64 - eps)) / (2 * eps)      # (val, 400): d out_i / d x_i
for i in range(4):
    assert np.allclose(J[i, :, i, 0], fd[i], atol=1e-5, rtol=1e-4), i
    assert np.array_equal(J[i, :, i, :], B[i])
    for j in range(4):
        if j != i:
            assert not J[i, :, j, :].any()
print("numpy agrees")
PY
    then ok "NumPy loads the dump; J matches finite differences"; else not_ok "NumPy loads the dump; J matches finite differences"; fi
else
    # NumPy's format 1.0: magic, version 1.0, header length, the dict, 64-byte aligned
    hdr=$(head -c 10 "$tmp/dump/x.npy" | od -An -tx1 | tr -d ' \n')
    case $hdr in
        934e554d505901007600) ok "x.npy header: magic, version 1.0, length 118 (no NumPy here)" ;;
        *) echo "# header bytes $hdr"; not_ok "x.npy header: magic, version 1.0, length 118 (no NumPy here)" ;;
    esac
    grep_ok "x.npy dict (no NumPy here)" "$tmp/dump/x.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 1), }"
    size=$(wc -c <"$tmp/dump/x.npy")
    if [ "$size" -eq $((128 + 16)) ]; then ok "x.npy: 128-byte header and 4 floats"; else not_ok "x.npy size $size"; fi
fi

# --json is the lab's export writer: method, val, FLOPs, the
# waste, and with --sweep the predicted val sweep
check "JSON with the val sweep" 0 "$NNLAB" jacobian -p mlp-jacobian --val 10 --json --sweep
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
assert d["method"] == "rows" and d["val"] == 10 and d["state"] == "done" and 0.89 < d["waste"] < 0.9, d
assert abs(d["waste"] - d["zero_block_flops"] / d["flops"]) < 1e-6
assert d["flops"] > d["zero_block_flops"] > 0 and "multiply zeros" in d["explain"]
s = d["sweep"]; assert s["source"] == "predicted" and s["val"][0] == 10 and len(s["cpu_s"]["nnlab"]["rows"]) == len(s["val"])' "$tmp/out"
then ok "JSON: method, val, FLOPs, waste and the sweep"; else not_ok "JSON: method, val, FLOPs, waste and the sweep"; fi

# a cancel is honoured between the passes of a group, not at
# its end. At val 20000 rows is 8,000,000 passes (hours); a group (400 passes)
# took about 14 s at val 100000. SIGINT after 3 s must end the job cancelled
# within the CLI's 2 s grace: "did not end within 2 s" or a finished job fail.
"$NNLAB" calibrate --device cpu >/dev/null 2>&1   # the prediction's figures, cached
"$NNLAB" jacobian --preset mlp-jacobian --val 20000 --device cpu >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 3
kill -INT "$pid" 2>/dev/null
t0=$(date +%s%N)
wait "$pid"
rc=$? t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
echo "# the job ended ${ms} ms after SIGINT"
if [ "$rc" -eq 130 ] && grep -q "^nnlab: cancelled after [0-9]* of 8000000 rows" "$tmp/err"; then
    ok "a long Jacobian job is cancelled between passes"
else
    echo "# exit $rc"; not_ok "a long Jacobian job is cancelled between passes"
fi
if grep -q "did not end within" "$tmp/err"; then not_ok "the cancel is honoured within the grace"
else ok "the cancel is honoured within the grace"; fi
# the prediction before a job predicted to take over 10 minutes: the CLI says
# so and goes on (a script is not asked; SIGINT cancels within a second)
grep_ok "a long job's prediction is printed first" "$tmp/err" "^nnlab: predicted to take [0-9].* on cpu .*: over 10 minutes; running it"
# a second dump into the same folder leaves nothing of the first: at val
# 5000 the whole J (400 MB) is not written, so the first dump's is removed
mkdir -p "$tmp/dump2"
check "dump at val 4" 0 "$NNLAB" jacobian --preset mlp-jacobian --val 4 --device cpu -q --dump "$tmp/dump2"
: >"$tmp/dump2/linear4.weight.npy"               # as a deeper network's dump would leave
check "dump again at val 5000 (forward)" 0 "$NNLAB" jacobian --preset mlp-jacobian --val 5000 --method forward \
    --device cpu -q --dump "$tmp/dump2"
if [ -e "$tmp/dump2/jacobian.npy" ]; then not_ok "the first dump's whole J removed, not left beside a new x"
else ok "the first dump's whole J removed, not left beside a new x"; fi
if [ -e "$tmp/dump2/linear4.weight.npy" ]; then not_ok "a deeper network's layer file removed"
else ok "a deeper network's layer file removed"; fi
grep_ok "the new x is val 5000's" "$tmp/dump2/x.npy" "'shape': (5000, 1)"
echo "1..$n"
[ "$failed" -eq 0 ]
