#!/bin/sh
# tests/cli.sh - the headless CLI as a user meets it: help, errors that are one
# line and exit non-zero, train/bench results as JSON, calibrate, explain and
# sweep, and without a GPU its step predicted for a GPU profile (every row
# and figure saying so). Speaks TAP.
# Needs NNLAB (the program) and top_srcdir, which `make check` exports.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}"
n=0 failed=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/cli-lib.sh"

check "--help exits 0" 0 "$NNLAB" --help
grep_ok "--help lists train" "$tmp/out" "train"
check "--version exits 0" 0 "$NNLAB" --version
grep_ok "--version names nnlab" "$tmp/out" "^nnlab "
check "unknown command fails" 2 "$NNLAB" frobnicate
one_line_err "unknown command: one-line error"
check "bad option fails" 2 "$NNLAB" train --preset mnist-mlp-128 --batch zero
grep_ok "bad option names it" "$tmp/err" "batch"
one_line_err "bad option: one-line error"
check "missing --preset fails" 2 "$NNLAB" train
check "unknown preset fails" 2 "$NNLAB" train --preset no-such-preset
grep_ok "unknown preset named" "$tmp/err" "no-such-preset"
one_line_err "unknown preset: one-line error"
check "broken preset fails" 2 "$NNLAB" train --preset "$top_srcdir/tests/fixtures/bad-chain.ini"
grep_ok "broken preset: names section and key" "$tmp/err" "\[layer.*\] in"
one_line_err "broken preset: one-line error"
check "missing data dir fails" 1 "$NNLAB" train --preset mnist-mlp-128 --steps 1 --data "$tmp/none"
grep_ok "missing data dir named" "$tmp/err" "$tmp/none"
# The GPU: where there is one (the GPU machine), the failure checks skip.
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
if "$NNLAB" devices 2>/dev/null | grep -q "^gpu  *available"; then have_gpu=1; else have_gpu=0; fi
if [ "$have_gpu" -eq 0 ]; then
    check "gpu without a GPU fails" 2 "$NNLAB" train --preset mnist-mlp-128 --device gpu
    grep_ok "gpu failure gives the reason" "$tmp/err" "gpu.*not available"
    one_line_err "gpu failure: one-line error"
else
    skip "gpu without a GPU fails: this machine has a GPU"
fi
check "gpu module folder that has none" 0 env NNLAB_MODULE_DIR="$tmp/none" "$NNLAB" devices
grep_ok "devices: names the module folder" "$tmp/out" "^gpu  *unavailable: .*$tmp/none"
check "--pinned needs --no-data-on-device" 2 "$NNLAB" train --preset mnist-mlp-128 --pinned --steps 1
grep_ok "--pinned: says what to add" "$tmp/err" "no-data-on-device"
one_line_err "--pinned: one-line error"
# divergence: a NaN loss stops the run at once, with its own state and exit status
check "a diverging run exits 3" 3 "$NNLAB" train --preset mnist-mlp-128 --lr 1e30 --json
grep_ok "diverged: the JSON state" "$tmp/out" '"state": "diverged"'
grep_ok "diverged: the JSON names the step" "$tmp/out" '"diverged": {"step": 2, "exact": true}'
grep_ok "diverged: stopped at the first non-finite loss" "$tmp/out" '"steps": 2,'
grep_ok "diverged: says at which step" "$tmp/err" "^nnlab: loss became \(NaN\|inf\) at step 2 "
check "a diverging quiet run exits 3" 3 "$NNLAB" train --preset lenet-cifar10 --lr 1e30 --epochs 3 -q
one_line_err "diverged, quiet: one-line error"
# sizes checked before memory is taken: the issue's reproducers end at once, in
# one line, naming the option or the key (time and peak memory where
# /usr/bin/time can tell: under 2 s and 200 MB)
# quick NAME: the last command took under 2 s and 200 MB
quick() {
    if [ ! -x /usr/bin/time ]; then n=$((n + 1)); echo "ok $n # SKIP $1: no /usr/bin/time"; return; fi
    # the last line: time writes "Command exited with non-zero status" first
    if tail -n 1 "$tmp/time" | awk '{ exit !($1 < 2.0 && $2 < 200000) }'; then ok "$1"
    else echo "# took $(tail -n 1 "$tmp/time") (s, KB)"; not_ok "$1"; fi
}
timed() { if [ -x /usr/bin/time ]; then /usr/bin/time -o "$tmp/time" -f "%e %M" "$@"; else "$@"; fi; }
check "a batch larger than the training set fails" 2 timed "$NNLAB" train --preset lenet-cifar10 --batch 1000000
grep_ok "batch too large: names the option and the set" "$tmp/err" "^nnlab: --batch 1000000: larger than the training set (50000 samples)"
one_line_err "batch too large: one-line error"
quick "batch too large: refused at once"
check "a preset's batch larger than the set fails" 2 "$NNLAB" bench --preset "$top_srcdir/tests/fixtures/big-batch.ini"
grep_ok "a preset's batch: names the file and the key" "$tmp/err" "^nnlab: .*big-batch.ini: \[train\] batch = 100000: larger than the training set (60000 samples)"
# one code for every refusal before a job starts (man/nnlab.1, EXIT STATUS): explain
# and sweep refused a batch larger than the set with 1, or not at all
check "explain: a batch larger than the training set fails" 2 "$NNLAB" explain --preset lenet-cifar10 --batch 1000000
grep_ok "explain batch too large: names the option" "$tmp/err" "^nnlab: --batch 1000000: larger than the training set (50000 samples)"
one_line_err "explain batch too large: one-line error"
check "sweep: a batch larger than the training set fails" 2 "$NNLAB" sweep --preset lenet-cifar10 --batches 4,1000000
grep_ok "sweep batch too large: names the option" "$tmp/err" "^nnlab: --batches 1000000: larger than the training set (50000 samples)"
one_line_err "sweep batch too large: one-line error"
check "a layer too wide for memory fails" 2 timed "$NNLAB" train --preset "$top_srcdir/tests/fixtures/wide-layers.ini"
grep_ok "too wide: names the layer's key and the bytes" "$tmp/err" \
    "^nnlab: \[layer3\] out = 200000 (linear 200000->200000): needs ~6[0-9.]* GB of memory (.*), [0-9.]* [KMGT]B available$"
one_line_err "too wide: one-line error"
quick "too wide: refused at once"
# Under an address-space limit (ulimit -v), OpenBLAS's buffer (128 MiB a
# thread) used to be left out of the estimate, and the job's thread then
# retried it forever, deaf to every signal: now a refusal, at once
# A sanitizer's build cannot start under such a limit (its shadow memory), nor
# with a library preloaded before its runtime: those cases skip there, as
# cli_jacobian.sh's do.
if (ulimit -v 700000 && exec "$NNLAB" --help) >/dev/null 2>&1; then
    check "ulimit -v: a job whose threads' buffers do not fit is refused" 2 \
        sh -c 'ulimit -v 700000; exec "$0" train --preset tabnet-regression --steps 2 --json' "$NNLAB"
    grep_ok "ulimit -v: says the address space, OpenBLAS and the limit" "$tmp/err" \
        "^nnlab: address space: needs ~[0-9.]* [MG]B (memory .*OpenBLAS's 134 MB each.*), ulimit -v leaves"
    one_line_err "ulimit -v: one-line error"
else
    for t in "ulimit -v: a job whose threads' buffers do not fit is refused" \
             "ulimit -v: says the address space, OpenBLAS and the limit" "ulimit -v: one-line error"; do
        ok "$t # SKIP cannot run under ulimit -v (a sanitizer's build)"
    done
fi
# A job stuck inside a library (a cblas_sgemm that never returns, preloaded):
# SIGINT, SIGTERM and SIGHUP still end the command within the grace (2 s),
# with 128 + the signal's number, the JSON it has, one line, and no process left
if [ -f "${NNLAB_STALL_BLAS:-}" ] && (ulimit -v 4000000 2>/dev/null; exec env LD_PRELOAD="$NNLAB_STALL_BLAS" \
        "$NNLAB" --help) >/dev/null 2>&1; then
    for sig in INT:130 TERM:143 HUP:129; do
        name=${sig%:*} want=${sig#*:}
        rm -f "$tmp/out" "$tmp/err"
        # NNLAB_BLAS: no contest of the job's product shapes as its backend opens
        # (it calls sgemm, which would stall the job before its first step)
        (ulimit -v 4000000 2>/dev/null; exec env LD_PRELOAD="$NNLAB_STALL_BLAS" NNLAB_BLAS=openblas "$NNLAB" train \
            --preset mnist-mlp-128 --steps 5 --json >"$tmp/out" 2>"$tmp/err") &
        pid=$!
        i=0
        while [ $i -lt 300 ] && ! grep -q "training on" "$tmp/err" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
        sleep 0.3                    # in its first step: inside the stuck sgemm
        start=$(date +%s)
        kill -s "$name" "$pid"
        wait "$pid"; got=$?
        took=$(($(date +%s) - start))
        if [ "$got" -eq "$want" ] && [ "$took" -le 5 ]; then ok "stuck job, SIG$name: exits $want in ${took}s"
        else echo "# exit $got after ${took}s, wanted $want within 5 s"; not_ok "stuck job, SIG$name: exits $want"; fi
        grep_ok "stuck job, SIG$name: the JSON it has" "$tmp/out" '"state": "running"'
        grep_ok "stuck job, SIG$name: says it left the job" "$tmp/err" "^nnlab: .*: the job did not end within 2 s of its cancel"
        if kill -0 "$pid" 2>/dev/null; then not_ok "stuck job, SIG$name: no process left"; kill -9 "$pid"
        else ok "stuck job, SIG$name: no process left"; fi
    done
else
    for sig in INT:130 TERM:143 HUP:129; do
        name=${sig%:*} want=${sig#*:}
        for t in "exits $want" "the JSON it has" "says it left the job" "no process left"; do
            ok "stuck job, SIG$name: $t # SKIP cannot run under ulimit -v with a library preloaded (a sanitizer's build)"
        done
    done
fi
# A stop signal while the job loads its data (60,000 blank images, each
# inflate slowed by 20 ms: half a minute of loading): exit 130 within the
# grace, one line saying so, no header of a job that planned no steps
mkdir -p "$tmp/slowgz"
{ printf '\000\000\010\003\000\000\352\140\000\000\000\034\000\000\000\034'
  head -c 47040000 /dev/zero; } | gzip -1 >"$tmp/slowgz/train-images-idx3-ubyte.gz"
{ printf '\000\000\010\001\000\000\352\140'; head -c 60000 /dev/zero; } | gzip >"$tmp/slowgz/train-labels-idx1-ubyte.gz"
cp "$tmp/slowgz/train-images-idx3-ubyte.gz" "$tmp/slowgz/t10k-images-idx3-ubyte.gz"
cp "$tmp/slowgz/train-labels-idx1-ubyte.gz" "$tmp/slowgz/t10k-labels-idx1-ubyte.gz"
if [ -f "${NNLAB_STALL_BLAS:-}" ] && env LD_PRELOAD="$NNLAB_STALL_BLAS" "$NNLAB" --help >/dev/null 2>&1; then
    rm -f "$tmp/err"
    # NNLAB_BLAS: no contest of product shapes as the backend opens (its sgemm stalls)
    env LD_PRELOAD="$NNLAB_STALL_BLAS" NNLAB_BLAS=openblas STALL_INFLATE_MS=20 "$NNLAB" train --preset mnist-mlp-128 --steps 1 \
        --data "$tmp/slowgz" >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    # in the load: the images file open (it stays open until read whole)
    i=0
    while [ $i -lt 300 ] && ! ls -l "/proc/$pid/fd" 2>/dev/null | grep -q "train-images"; do sleep 0.1; i=$((i + 1)); done
    kill -INT "$pid"
    wait "$pid"; got=$?
    if [ "$got" -eq 130 ]; then ok "SIGINT while loading: exits 130"
    else echo "# exit $got"; not_ok "SIGINT while loading: exits 130"; fi
    grep_ok "SIGINT while loading: says so" "$tmp/err" "^nnlab: cancelled while preparing the job (loading its data), before its first step$"
    if grep -q "steps; data: \|us/step" "$tmp/err"; then sed 's/^/# /' "$tmp/err"; not_ok "SIGINT while loading: no header or summary of steps never planned"
    else ok "SIGINT while loading: no header or summary of steps never planned"; fi
else
    for t in "exits 130" "says so" "no header or summary of steps never planned"; do
        ok "SIGINT while loading: $t # SKIP cannot preload a library (a sanitizer's build)"
    done
fi
check "presets lists" 0 "$NNLAB" presets
for p in lenet-cifar10 lenet5-cifar10 conv1d-regression mnist-mlp-128 mnist-mlp-1000 tabnet-regression; do
    grep_ok "presets lists $p" "$tmp/out" "^$p "
done
# more presets than the list holds: said, not dropped without a word
mkdir -p "$tmp/many/nnlab/presets"
i=0; while [ $i -lt 300 ]; do : >"$tmp/many/nnlab/presets/p$i.ini"; i=$((i + 1)); done
check "presets: 300 of yours" 0 env XDG_CONFIG_HOME="$tmp/many" "$NNLAB" presets
grep_ok "presets: says how many are not listed" "$tmp/out" "^\.\.\. and [0-9]* more presets, not listed (at most 256 are)$"
check "devices lists" 0 "$NNLAB" devices
grep_ok "devices: cpu available" "$tmp/out" "^cpu  *available"
# the profiles' columns line up, the longest name ("geforce-940m GeForce 940M") included:
# every line's origin ("shipped", "yours") starts at the same column
cols=$(awk '/^GPU profiles/ { on = 1; next }
            on && /^  [^ ]/ && !/BROKEN/ { print index($0, " shipped") + index($0, " yours") }' "$tmp/out" | sort -u)
if [ -n "$cols" ] && [ "$(echo "$cols" | wc -l)" -eq 1 ] && grep -q "^  geforce-940m GeForce 940M  *shipped" "$tmp/out"
then ok "devices: the profiles' columns line up"; else not_ok "devices: the profiles' columns line up ($cols)"; fi
grep_ok "devices: cpu names the CPU and OpenBLAS's kernels" "$tmp/out" "^cpu  *available: .*(family [0-9]* model [0-9]*; .*); OpenBLAS [0-9.]*, [A-Za-z0-9]* kernels"
grep_ok "devices: cpu names the path of our own kernels" "$tmp/out" "^cpu  *available: .*; our kernels: \(avx512\|avx2\|scalar\);"
check "devices with NNLAB_NO_AVX512=1" 0 env NNLAB_NO_AVX512=1 "$NNLAB" devices
grep_ok "devices: NNLAB_NO_AVX512=1 keeps the AVX2 kernels" "$tmp/out" "^cpu  *available: .*; our kernels: \(avx2\|scalar\);"
grep_ok "devices: says whether BLIS runs products, or why not" "$tmp/out" "^  BLIS:  *\([0-9.]*, [A-Za-z0-9_]* kernels: per product shape\|BLIS not used: .\)"
if [ "$have_gpu" -eq 0 ]; then
    grep_ok "devices: gpu unavailable with reason" "$tmp/out" "^gpu  *unavailable: ."
else
    grep_ok "devices: gpu available with its name" "$tmp/out" "^gpu  *available: .*compute capability"
fi
check "devices with NNLAB_BLAS=openblas" 0 env NNLAB_BLAS=openblas "$NNLAB" devices
grep_ok "devices: NNLAB_BLAS=openblas keeps BLIS off" "$tmp/out" "^  BLIS: .*BLIS not used: "
# BLIS missing (NNLAB_BLIS_LIBRARY names a file that is not there): a reason, never an error
check "devices without BLIS" 0 env NNLAB_BLIS_LIBRARY=libnnlab-no-such-blis.so.4 "$NNLAB" devices
grep_ok "devices: BLIS missing, says why" "$tmp/out" "^  BLIS:  *BLIS not used: libnnlab-no-such-blis.so.4 not found$"
check "bench --json without BLIS" 0 env NNLAB_BLIS_LIBRARY=libnnlab-no-such-blis.so.4 "$NNLAB" bench --preset conv1d-regression --device cpu --batch 64 --steps 3 --warmup 1 --json
grep_ok "bench json: BLIS missing, says why" "$tmp/out" '"blis_version": "", "blis_arch": "", "blis_used": false, "blis_why": "BLIS not used: libnnlab-no-such-blis.so.4 not found"'

check "train --json" 0 "$NNLAB" train --preset lenet-cifar10 --steps 50 --log-every 10 --json
for key in preset device batch epochs steps data wall_s us_per_step samples_per_s train_loss val_loss \
           val_accuracy phases switches per_step phase_clock host_phases graph_us note history per_step_s; do
    grep_ok "train json has $key" "$tmp/out" "\"$key\":"
done
grep_ok "train json: synthetic data" "$tmp/out" '"real": false'
grep_ok "progress in the write-ups' style" "$tmp/err" '^\[1,    10\] loss: [0-9.]*$'
grep_ok "stderr says which data" "$tmp/err" "data: synthetic"
# the times, tqdm's and Keras's, after each epoch's validation; the headline is the time
grep_ok "epoch line: elapsed<remaining and time per step" "$tmp/err" \
    '^\[1\] validation loss: .*  [0-9][0-9]:[0-9][0-9]<00:00  [0-9]*s [0-9]*[mu]*s/step, validation [0-9]*s$'
grep_ok "the summary's headline is the time" "$tmp/err" \
    '^done in [0-9][0-9]:[0-9][0-9] ([0-9]*s [0-9]*[mu]*s/step, validation [0-9]*s): trained on'
# one rule: per step and samples/s are the training steps', validation apart
grep_ok "the summary's steps: training apart from validation" "$tmp/err" \
    ': 50 steps: training [0-9.]* s ([0-9]* samples/s), validation [0-9.]* s$'
if command -v python3 >/dev/null 2>&1; then
    if python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
assert abs(d["train_s"] + d["val_s"] - d["wall_s"]) < 1e-5 * d["wall_s"] and d["val_s"] > 0
assert abs(d["per_step_s"] * 1e6 - d["us_per_step_mean"]) < 1e-6 * d["us_per_step_mean"]
assert abs(d["samples_per_s"] * d["per_step_s"] - d["batch"]) < 0.01 * d["batch"]' "$tmp/out"
    then ok "train json: per step and samples/s are the training mean's"; else not_ok "train json: per step and samples/s are the training mean's"; fi
    if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["steps"]==50 and d["val_loss"] > 0' "$tmp/out"
    then ok "train json parses"; else not_ok "train json parses"; fi
    if python3 -m json.tool "$tmp/out" >/dev/null; then ok "train json: json.tool takes it"; else not_ok "train json: json.tool"; fi
    # the per-epoch history: one epoch of 50 steps, its training loss the mean of
    # the five points on stderr (10 steps each), its validation the result's
    if python3 -c '
import json, re, sys
d = json.load(open(sys.argv[1]))
pts = [float(m.group(1)) for m in re.finditer(r"^\[1, +[0-9]+\] loss: ([0-9.]+)$", open(sys.argv[2]).read(), re.M)]
h = d["history"]
assert len(h) == 1 and len(pts) == 5, (h, pts)
r = h[0]
assert r["epoch"] == 1 and r["step"] == 50
assert abs(r["train_loss"] - sum(pts) / 5) < 1e-3, (r, pts)
assert abs(r["val_loss"] - d["val_loss"]) < 1e-5 and r["val_accuracy"] == d["val_accuracy"]
assert 0 < r["seconds"] == r["time_s"] <= d["wall_s"] + 1e-6, (r, d["wall_s"])
' "$tmp/out" "$tmp/err"
    then ok "train json: the per-epoch history"; else not_ok "train json: the per-epoch history"; fi
fi
check "bench --json" 0 "$NNLAB" bench --preset conv1d-regression --device cpu --batch 64 --steps 5 --warmup 1 --json
grep_ok "bench json has us_per_step" "$tmp/out" '"us_per_step": [0-9]'
grep_ok "bench json timed 5 steps" "$tmp/out" '"timed_steps": 5,'
grep_ok "bench json: the CPU and OpenBLAS's kernels it ran on" "$tmp/out" '"cpu": {"model": ".*"openblas_core": "[A-Za-z0-9]'
grep_ok "bench json: which of our kernels ran" "$tmp/out" '"cpu": {"model": .*"kernels": "\(avx512\|avx2\|scalar\)"'

# analysis: calibrate (cached under XDG_CACHE_HOME), explain, sweep
check "calibrate: a cache that cannot be written fails the command" 1 env XDG_CACHE_HOME=/proc/nnlab-none \
    "$NNLAB" calibrate --device cpu-ref
grep_ok "calibrate: ... after the figures, saying so" "$tmp/err" "^nnlab: calibrate: cpu-ref's figures above are not cached"
export XDG_CACHE_HOME="$tmp/cache"
check "calibrate --json" 0 "$NNLAB" calibrate --device cpu --json
grep_ok "calibrate measures sgemm" "$tmp/out" '"gemm_gflops": [0-9]'
grep_ok "calibrate: the quality of the figures" "$tmp/out" '"quality": "\(good\|noisy\|contradictory\)"'
grep_ok "calibrate: the spread of sgemm" "$tmp/out" '"spread": {"sgemm": [0-9]'
grep_ok "calibrate: one core's sgemm beside its estimated FMA peak" "$tmp/out" '"fma_peak_gflops_core_estimated": [0-9].*"sgemm_gflops_1thread": [0-9].*"sgemm_of_peak": [0-9]'
grep_ok "calibrate: a fresh page's first touch measured, and the CPU's vector" "$tmp/out" \
    '"fresh_page_us": [0-9.]*[1-9][0-9.e+-]*, "vector_floats": \(4\|8\|16\)'
grep_ok "calibrate: one core's FMA peak measured, where the CPU has FMA" "$tmp/out" \
    "$(if grep -q ' fma ' /proc/cpuinfo; then echo '"fma_peak_gflops_core_measured": [0-9]'; else echo '"fma_peak_gflops_core_measured": null'; fi)"
check "calibrate --json cpu-ref" 0 "$NNLAB" calibrate --device cpu-ref --json
if grep -q "one core's sgemm ran" "$tmp/out"; then not_ok "calibrate: the reference's own loops are not judged as OpenBLAS's"
else ok "calibrate: the reference's own loops are not judged as OpenBLAS's"; fi
# --threads N: cached apart under N, the device's own (the free cores') left as it is
own=$(cksum <"$XDG_CACHE_HOME/nnlab/calibration-cpu-ref.txt")
check "calibrate --threads 1" 0 "$NNLAB" calibrate --device cpu-ref --threads 1 --json
grep_ok "calibrate --threads 1: says where it is cached" "$tmp/err" "cpu-ref at 1 thread: cached apart as .*calibration-cpu-ref-1threads.txt"
if [ -s "$XDG_CACHE_HOME/nnlab/calibration-cpu-ref-1threads.txt" ] &&
    [ "$(cksum <"$XDG_CACHE_HOME/nnlab/calibration-cpu-ref.txt")" = "$own" ]; then
    ok "calibrate --threads 1: cached apart, the device's own unchanged"
else not_ok "calibrate --threads 1: cached apart, the device's own unchanged"; fi
check "calibrate --json" 0 "$NNLAB" calibrate --device cpu --json
grep_ok "calibrate: the CPU's extensions and OpenBLAS's version" "$tmp/out" '"extensions": "[^"]*AVX.*"openblas_version": "[0-9]'
grep_ok "calibrate: whether BLIS runs products, or why not" "$tmp/out" '"blis_version": "[0-9.]*", "blis_arch": "[a-z0-9_]*", "blis_used": \(true\|false\), "blis_why": "'
# with BLIS, each of the presets' product shapes and the library chosen; without it, none
if grep -q '"blis_used": true' "$tmp/out"; then
    grep_ok "calibrate: OpenBLAS against BLIS per product shape" "$tmp/out" '"products": \[{"m": [0-9]*, "n": [0-9]*, "k": [0-9]*, "trans": "[NT][NT]", "threads": [0-9]*, "openblas_gflops": [0-9.e+-]*, "blis_gflops": \(null\|[0-9.e+-]*\), "chosen": "\(openblas\|blis\)"}'
else
    grep_ok "calibrate: no products contested without BLIS" "$tmp/out" '"products": \[\]'
fi
if [ -f "$tmp/cache/nnlab/calibration-cpu.txt" ]; then ok "calibration cached"; else not_ok "calibration cached"; fi
check "explain --json" 0 "$NNLAB" explain --preset lenet-cifar10 --device cpu --batch 4 --steps 5 --json
grep_ok "explain names a regime" "$tmp/out" '"regime": "[a-z]*-bound"'
grep_ok "explain predicts" "$tmp/out" '"predicted_us": [0-9]'
grep_ok "explain measures" "$tmp/out" '"measured_us": [0-9]'
grep_ok "explain: the measured step is the mean" "$tmp/out" '"measured_stat": "mean"'
check "sweep --csv" 0 "$NNLAB" sweep --preset mnist-mlp-128 --devices cpu --batches 1,2,4 --steps 3 --csv
grep_ok "sweep csv header" "$tmp/out" '^device,batch,us_per_step,samples_per_s,doubling,regime,source,way,profile,profile_us,crossover,spread_us,repeats,predicted_from$'
grep_ok "sweep csv: the cpu's way is nnlab, measured, its spread and runs" "$tmp/out" '^cpu,1,[0-9.]*,[0-9.]*,[0-9.]*,[a-z-]*,measured,nnlab,,,[a-z]*,[0-9.]*,[1-3],$'
if grep -q ',framework,' "$tmp/out"; then not_ok "sweep: no framework way without a GPU in the sweep"
else ok "sweep: no framework way without a GPU in the sweep"; fi
if [ "$(grep -c '^cpu,' "$tmp/out")" -eq 3 ]; then ok "sweep: one row per batch"; else not_ok "sweep: one row per batch"; fi
if awk -F, '$1 == "cpu" && $2 == 2 && $5 > 0 { found = 1 } END { exit !found }' "$tmp/out"
then ok "sweep: doubling ratio at batch 2"; else not_ok "sweep: doubling ratio at batch 2"; fi
check "sweep --json" 0 "$NNLAB" sweep --preset conv1d-regression --devices cpu,cpu-ref --batches 1,2 --steps 2 --json
grep_ok "sweep json: a predicted step per point" "$tmp/out" '"predicted_us": [0-9]'
grep_ok "sweep json: each calibration's source and quality" "$tmp/out" '"calibrations": \[{"device": "cpu", "source": "measured", "quality": "[a-z]*", "calibration": "measured [0-9]'
grep_ok "sweep json: every point says measured" "$tmp/out" '{"device": "cpu-ref", "batch": 2, "source": "measured"'
grep_ok "sweep json: the crossover" "$tmp/out" '"crossovers": \[{"pair": "other", "from": "cpu", "from_way": "nnlab", "to": "cpu-ref", "way": "nnlab", "source": "measured", "batch": [0-9]*, "tie_batch": [0-9]*, "says": "[a-z0-9 ()]*"}\]'
grep_ok "sweep json: every point's way, spread and runs" "$tmp/out" '{"device": "cpu-ref", "batch": 2, "source": "measured", "way": "nnlab", "predicted_from": "", "spread_us": [0-9.e+-]*, "repeats": [1-3], '
# determinism as a switch. --deterministic in --help and nnlab(1);
# on the emulated GPU (its cuDNN stand-in times candidates of different
# costs, the non-deterministic ones fastest, and adds them in an order drawn
# from NNLAB_EMU_SEED) two deterministic runs under different seeds agree
# bit for bit and list deterministic algorithms only, the second from the
# cache file; without the switch the fastest, non-deterministic, are chosen.
check "--help lists --deterministic" 0 "$NNLAB" --help
grep_ok "--help: --deterministic" "$tmp/out" "^      --deterministic  *deterministic convolution algorithms only"
grep_ok "nnlab(1) documents --deterministic" "$top_srcdir/man/nnlab.1" '^\.B \\-\\-deterministic$'
grep_ok "nnlab.ini(5) documents [train] deterministic" "$top_srcdir/man/nnlab.ini.5" '^\.BR deterministic " = " true | false$'
check "--deterministic on the cpu" 0 "$NNLAB" train --preset mnist-mlp-128 --steps 2 --no-validation --deterministic --json
grep_ok "train json: deterministic true" "$tmp/out" '"deterministic": true,'
if grep -q '"conv_algorithms"' "$tmp/out"; then not_ok "cpu: no conv_algorithms"; else ok "cpu: no conv_algorithms"; fi
emu_train() {
    seed=$1 cache=$2; shift 2
    env NNLAB_GPU_EMULATION=1 NNLAB_EMU_SEED="$seed" XDG_CACHE_HOME="$cache" "$NNLAB" train --preset lenet-cifar10 \
        --device gpu --batch 8 --steps 3 --log-every 1 --no-validation --json "$@"
}
if env NNLAB_GPU_EMULATION=1 "$NNLAB" devices 2>/dev/null | grep -q '^gpu .* available:' && command -v python3 >/dev/null; then
    check "emulated gpu: a deterministic run" 0 emu_train 1 "$tmp/conv-det" --deterministic
    cp "$tmp/out" "$tmp/det1.json"
    check "emulated gpu: again, the algorithms from the cache" 0 emu_train 1 "$tmp/conv-det" --deterministic
    cp "$tmp/out" "$tmp/det2.json"
    # the emulator's seed is part of its GPU's name: another seed, another cache
    check "emulated gpu: another emulator seed" 0 emu_train 2 "$tmp/conv-det2" --deterministic
    cp "$tmp/out" "$tmp/det3.json"
    check "emulated gpu: without --deterministic" 0 emu_train 1 "$tmp/conv-fast"
    cp "$tmp/out" "$tmp/fast.json"
    if python3 - "$tmp/det1.json" "$tmp/det2.json" "$tmp/det3.json" "$tmp/fast.json" >"$tmp/err" 2>&1 <<'PY'
import json, sys
d1, d2, d3, fast = (json.load(open(f)) for f in sys.argv[1:5])
assert d1["train_loss"] is not None and d1["train_loss"] == d2["train_loss"] == d3["train_loss"], \
    (d1["train_loss"], d2["train_loss"], d3["train_loss"])
for d, cached in ((d1, False), (d2, True), (d3, False)):
    a = d["conv_algorithms"]
    # two convolutions: forward and filter gradient each, the second's input gradient
    assert d["deterministic"] and len(a) >= 5, a
    assert all(x["deterministic"] for x in a), a
    assert all(x["from_cache"] == cached for x in a), a
    assert all(x["time_us"] > 0 and x["shape"] in ("6x5x5 on 3x32x32", "16x5x5 on 6x14x14") for x in a), a
f = fast["conv_algorithms"]
assert not fast["deterministic"] and any(not x["deterministic"] for x in f), f
assert {x["algorithm"] for x in f if x["direction"] == "backward-filter"} == {"BWD_FILTER_ALGO_0"}, f
PY
    then ok "deterministic runs agree bit for bit, deterministic algorithms only, the second from the cache; else the fastest"
    else not_ok "deterministic runs agree bit for bit, deterministic algorithms only, the second from the cache; else the fastest"
    fi
    check "emulated gpu: explain lists the algorithms" 0 env NNLAB_GPU_EMULATION=1 XDG_CACHE_HOME="$tmp/conv-fast" \
        "$NNLAB" explain --preset lenet-cifar10 --device gpu --batch 8 --steps 2
    grep_ok "explain: each convolution's algorithm and time" "$tmp/out" \
        "^  *\(algorithm: \)*conv 6x5x5 on 3x32x32, backward-filter: BWD_FILTER_ALGO_0 (not deterministic), [0-9.]* us measured (\(timed now\|from the cache\))$"
    # Explain compares a measured GPU with the profile of the same GPU: none
    # ships for the emulated one, so it says so and which it used; a user's profile named for it
    # ("emulated": the first word of its name) is then the one compared with
    grep_ok "explain: no profile matches the emulated GPU" "$tmp/out" \
        "^  profile:   no shipped profile matches this GPU (emulated GPU): compared with T4, the default"
    mkdir -p "$tmp/emu-config/nnlab/profiles"
    sed 's/^name = "T4"/name = "Emulated"/' "$top_srcdir/profiles/t4.ini" >"$tmp/emu-config/nnlab/profiles/emulated.ini"
    check "emulated gpu: explain with a profile of this GPU" 0 env NNLAB_GPU_EMULATION=1 XDG_CACHE_HOME="$tmp/conv-fast" \
        XDG_CONFIG_HOME="$tmp/emu-config" "$NNLAB" explain --preset lenet-cifar10 --device gpu --batch 8 --steps 2 --json
    grep_ok "explain json: the profile of this GPU" "$tmp/out" '"name": "Emulated", "id": "emulated", "measured": false, "of_this_gpu": true'
    # with a GPU here, its eager and graph ways measured side by side, the
    # framework way predicted on top (from the GPU's own calibration), and on the CPU
    emu_sweep() {
        env NNLAB_GPU_EMULATION=1 XDG_CACHE_HOME="$tmp/conv-fast" "$NNLAB" sweep --preset mnist-mlp-128 \
            --batches 1,2 --steps 2 --warmup 1 --csv "$@"
    }
    check "emulated gpu: sweep cpu,gpu" 0 emu_sweep --devices cpu,gpu
    for way in eager graph; do
        if [ "$(grep -c "^gpu,[12],.*,measured,$way,T4," "$tmp/out")" -eq 2 ]; then ok "emulated sweep: gpu $way measured"
        else not_ok "emulated sweep: gpu $way measured"; fi
    done
    if [ "$(grep -c '^gpu,.*,predicted,framework,,,[a-z]*,0.000,0,gpu calibration$' "$tmp/out")" -eq 2 ]
    then ok "emulated sweep: the gpu's framework way predicted from its calibration"
    else not_ok "emulated sweep: the gpu's framework way predicted from its calibration"; fi
    if [ "$(grep -c '^cpu,.*,predicted,framework,.*,cpu calibration$' "$tmp/out")" -eq 2 ]
    then ok "emulated sweep: the cpu's framework way predicted"; else not_ok "emulated sweep: the cpu's framework way predicted"; fi
    check "emulated gpu: sweep --no-graph measures one way" 0 emu_sweep --devices gpu --no-graph
    if [ "$(grep -c '^gpu,.*,measured,' "$tmp/out")" -eq 2 ] && [ "$(grep -c '^gpu,.*,measured,eager,' "$tmp/out")" -eq 2 ]
    then ok "emulated sweep --no-graph: eager alone"; else not_ok "emulated sweep --no-graph: eager alone"; fi
else
    ok "# SKIP the emulated GPU or python3 is not here"
fi
# one option table: each command takes its own options, the GPU switches' rule is the library's
check "--help lists the GPU switches of explain and sweep" 0 "$NNLAB" --help
grep_ok "--help: GPU switches of explain and sweep" "$tmp/out" "GPU switches of train, bench, explain and sweep"
check "calibrate takes no --batch" 2 "$NNLAB" calibrate --batch 4
check "explain --pinned needs --no-data-on-device" 2 "$NNLAB" explain --preset mnist-mlp-128 --pinned
grep_ok "explain --pinned: says what to add" "$tmp/err" "no-data-on-device"
one_line_err "explain --pinned: one-line error"
check "sweep: bad batch list" 2 "$NNLAB" sweep --preset mnist-mlp-128 --batches 1,x
one_line_err "sweep: bad batch list: one-line error"

# every number range-checked before it is cut to int, with the
# preset's own ranges; one line naming the option, the value as typed and
# what is allowed
check "--epochs 4294967297 refused" 2 "$NNLAB" train --preset mnist-mlp-128 --steps 1 --epochs 4294967297
grep_ok "--epochs 4294967297: value and range" "$tmp/err" "^nnlab: --epochs 4294967297: must be in 1\.\.100000$"
check "--epochs 200000 refused (presets allow 1..100000)" 2 "$NNLAB" train --preset mnist-mlp-128 --steps 1 --epochs 200000
grep_ok "--epochs 200000: value and range" "$tmp/err" "^nnlab: --epochs 200000: must be in 1\.\.100000$"
check "--batch 2147483648 refused" 2 "$NNLAB" bench --preset mnist-mlp-128 --batch 2147483648
grep_ok "--batch 2147483648: as typed, with the range" "$tmp/err" "^nnlab: --batch 2147483648: must be in 1\.\.1048576$"
check "--lr 1e308 refused as in presets" 2 "$NNLAB" train --preset mnist-mlp-128 --steps 1 --lr 1e308
grep_ok "--lr 1e308: too large for a float" "$tmp/err" "^nnlab: --lr 1e308: too large for a float (allowed: > 0)$"
check "--lr 0x10 refused: a decimal key" 2 "$NNLAB" train --preset mnist-mlp-128 --steps 1 --lr 0x10
grep_ok "--lr 0x10: not a number" "$tmp/err" "^nnlab: --lr 0x10: not a number (allowed: > 0)$"
check "--steps beyond int refused" 2 "$NNLAB" bench --preset mnist-mlp-128 --steps 4294967297
grep_ok "--steps: value and range" "$tmp/err" "^nnlab: --steps 4294967297: must be in 1\.\.2147483647$"
check "--log-every not a number" 2 "$NNLAB" train --preset mnist-mlp-128 --log-every 1e3
one_line_err "--log-every: one-line error"
check "sweep: a batch beyond the preset's range" 2 "$NNLAB" sweep --preset mnist-mlp-128 --batches 1,2147483648
grep_ok "sweep: names the entry and the range" "$tmp/err" "^nnlab: --batches 1,2147483648: 2147483648: must be in 1\.\.1048576$"
check "--data '' refused" 2 "$NNLAB" train --preset mnist-mlp-128 --steps 1 --data ''
grep_ok "--data '': says empty path" "$tmp/err" "^nnlab: --data: empty path$"
cores=$(getconf _NPROCESSORS_ONLN)
check "--threads above 4x the cores refused" 2 "$NNLAB" bench --preset conv1d-regression --batch 8 --steps 1 \
    --threads $((4 * cores + 1))
grep_ok "--threads: names the cores" "$tmp/err" "must be in 1\.\.$((4 * cores)) (at most 4 x the $cores cores here)"
check "--threads above the cores: clamped" 0 "$NNLAB" bench --preset conv1d-regression --batch 8 --steps 2 --warmup 0 \
    --threads $((cores + 1)) --json
grep_ok "--threads above the cores: warned" "$tmp/err" "warning: --threads $((cores + 1)): this machine has $cores cores; using $cores"
grep_ok "--threads above the cores: runs on the cores" "$tmp/out" "\"threads\": [1-9][0-9]*, \"threads_asked\": $cores,"
# --json's threads are those it ran with, as the title says them (threads_now), not the 0 of
# "the engine's choice", which is threads_asked
check "--json without --threads" 0 "$NNLAB" bench --preset conv1d-regression --batch 8 --steps 2 --warmup 0 --json
ran=$(sed -n 's/^  "threads": \([0-9]*\), "threads_asked": 0,$/\1/p' "$tmp/out")
now=$(sed -n 's/^  "threads_now": \([0-9]*\),.*/\1/p' "$tmp/out")
if [ -n "$ran" ] && [ "$ran" -gt 0 ] && [ "$ran" = "$now" ]; then ok "--json: threads are those it ran with ($ran), 0 only as asked"
else not_ok "--json: threads are those it ran with (threads $ran, threads_now $now)"; sed 's/^/# /' "$tmp/out" | grep thread; fi

# presets that are not files say what they are, and a FIFO does not block
mkdir "$tmp/folder.ini" && mkfifo "$tmp/fifo.ini" && ln -s "$tmp/moved.ini" "$tmp/dangling.ini"
check "a folder as preset" 2 "$NNLAB" train --preset "$tmp/folder.ini"
grep_ok "a folder: is a directory" "$tmp/err" "folder.ini: is a directory"
check "a FIFO as preset: refused at once" 2 timeout 10 "$NNLAB" train --preset "$tmp/fifo.ini"
grep_ok "a FIFO: not a regular file" "$tmp/err" "fifo.ini: not a regular file (a FIFO)"
check "/dev/zero as preset" 2 timeout 10 "$NNLAB" train --preset /dev/zero
grep_ok "/dev/zero: a character device" "$tmp/err" "not a regular file (a character device)"
check "a dangling link as preset" 2 "$NNLAB" train --preset "$tmp/dangling.ini"
grep_ok "a dangling link: names its target" "$tmp/err" "dangling.ini: dangling link to $tmp/moved.ini"
mkdir -m 0 "$tmp/locked"
# root opens any folder: as root, the run is made as user 65534 ("nobody"),
# who may search $tmp but not the locked folder
as_user=
if [ "$(id -u)" -eq 0 ]; then
    chmod 755 "$tmp"
    as_user="setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=$tmp XDG_CACHE_HOME=$tmp/cache"
fi
check "unreadable data folder" 1 $as_user "$NNLAB" train --preset mnist-mlp-128 --steps 1 --data "$tmp/locked"
grep_ok "unreadable data folder: permission denied" "$tmp/err" "locked: permission denied"
rmdir "$tmp/locked"

# a signal cancels the run; the result so far is printed (the mean loss of
# the steps run, not null) and the exit status is 128 + the signal's number
signalled_run() {
    sig=$1
    "$NNLAB" train --preset mnist-mlp-128 --epochs 50 --log-every 100000 --json >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    for _ in $(seq 200); do grep -q "training on" "$tmp/err" && break; sleep 0.1; done
    sleep 2
    kill -"$sig" "$pid"
    wait "$pid"
}
for pair in TERM:143 HUP:129 INT:130; do
    sig=${pair%%:*} want=${pair#*:}
    signalled_run "$sig"; got=$?
    if [ "$got" -eq "$want" ]; then ok "SIG$sig exits $want"; else echo "# exit $got"; not_ok "SIG$sig exits $want"; fi
    grep_ok "SIG$sig: the JSON says cancelled" "$tmp/out" '"state": "cancelled"'
    if grep -q '"steps": 0,' "$tmp/out"; then   # nothing to average: only on a swamped machine
        skip "SIG$sig: train_loss of the steps run: no step ran in 2 s (machine busy)"
    else
        grep_ok "SIG$sig: train_loss of the steps run" "$tmp/out" '"train_loss": [0-9]'
    fi
done

# calibration that can be trusted: its quality and age wherever it is used
check "explain names the calibration's age and quality" 0 "$NNLAB" explain --preset conv1d-regression --batch 1 --steps 2 --warmup 1
grep_ok "explain: calibration line" "$tmp/out" "calibration: measured [0-9]* \(s\|min\) ago, \(good\|noisy\|contradictory\)"
grep_ok "explain: the write-up beside the prediction" "$tmp/out" "write-up: .*measured CPU 209 s, GPU 125 s"
# a copy of lenet-cifar10 saved at batch 16 keeps the write-up's figures as its own job's (batch 4)
sed -e 's/^batch = 4$/batch = 16/' "$top_srcdir/presets/lenet-cifar10.ini" > "$tmp/lenet16.ini"
check "explain a copy saved at batch 16" 0 "$NNLAB" explain --preset "$tmp/lenet16.ini" --steps 2 --warmup 1
grep_ok "explain batch 16: the write-up's figures are its own job's" "$tmp/out" \
    "write-up:  the write-up measured CPU 50 s, GPU 94 s for its own job: batch 4, 2 epochs (25000 steps), not this one (batch 16, 2 epochs)"
if grep -q "here: " "$tmp/out"; then not_ok "explain batch 16: no step of this job set beside the write-up's"
else ok "explain batch 16: no step of this job set beside the write-up's"; fi
check "explain a copy saved at batch 16, JSON" 0 "$NNLAB" explain --preset "$tmp/lenet16.ini" --steps 2 --warmup 1 --json
grep_ok "explain batch 16 JSON: not the write-up's own job" "$tmp/out" '"batch": 4, "epochs": 2, "steps": 25000, .*"own_job": false'
check "explain lenet5 keeps the write-up's range" 0 "$NNLAB" explain --preset lenet5-cifar10 --steps 2 --warmup 1
grep_ok "explain lenet5: GPU 120-150 s, not a midpoint" "$tmp/out" "write-up:  2 epochs at batch 4 = 25000 steps: measured CPU 60 s, GPU 120-150 s"

# GPU profiles: a GPU that is not here is predicted, and says so
check "devices lists the GPU profiles" 0 "$NNLAB" devices
for p in t4 rtx3060 rtx4090 a100 h100 h200; do grep_ok "devices: profile $p" "$tmp/out" "^  $p  "; done
grep_ok "devices: the default profile" "$tmp/out" "^  t4 .*the default"
check "an unknown --gpu-profile fails" 2 "$NNLAB" explain --preset lenet-cifar10 --device gpu --gpu-profile gtx9999
one_line_err "unknown --gpu-profile: one-line error"
grep_ok "unknown --gpu-profile: names it" "$tmp/err" "gtx9999"
if [ "$have_gpu" -eq 0 ]; then
    check "explain --device gpu without a GPU" 0 "$NNLAB" explain --preset lenet-cifar10 --batch 4 --device gpu --json
    grep_ok "explain gpu: predicted" "$tmp/out" '"source": "predicted"'
    grep_ok "explain gpu: names the profile" "$tmp/out" '"predicted_for": "T4"'
    grep_ok "explain gpu: nothing measured" "$tmp/out" '"measured_us": null'
    grep_ok "explain gpu: the three ways" "$tmp/out" '"way": "framework", "name": "framework eager", "source": "predicted"'
    grep_ok "explain gpu: the write-up" "$tmp/out" '"measured_gpu_s": 94'
    if command -v python3 >/dev/null 2>&1; then
        if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ways"][2]["predicted_us"] < d["ways"][0]["predicted_us"]' "$tmp/out"
        then ok "explain gpu json parses"; else not_ok "explain gpu json parses"; fi
    fi
    check "explain --device gpu --gpu-profile h100" 0 "$NNLAB" explain --preset lenet-cifar10 --device gpu --gpu-profile H100
    grep_ok "explain gpu text: predicted for H100" "$tmp/out" "^lenet-cifar10 on gpu, batch 4: predicted for H100"
    grep_ok "explain gpu text: the ways" "$tmp/out" "three ways, predicted for H100:"
    check "sweep --devices cpu,gpu without a GPU" 0 "$NNLAB" sweep --preset lenet-cifar10 --devices cpu,gpu --batches 1,4,16,64,256,1024 --steps 2 --warmup 1 --csv
    if [ "$(grep -c '^cpu,.*,measured,' "$tmp/out")" -eq 6 ]; then ok "sweep: measured cpu rows"; else not_ok "sweep: measured cpu rows"; fi
    if [ "$(grep -c '^gpu,.*,predicted,\(graph\|eager\|framework\),T4,' "$tmp/out")" -eq 18 ]; then ok "sweep: predicted gpu rows, three ways"
    else not_ok "sweep: predicted gpu rows, three ways"; fi
    grep_ok "sweep: a predicted crossover" "$tmp/out" '^gpu,.*,predicted,graph,T4,,yes,0.000,0,profile T4$'
    grep_ok "sweep: stderr says the gpu rows are predicted" "$tmp/err" "gpu rows are predicted for T4"
    # the framework way on the CPU too, predicted from its calibration
    if [ "$(grep -c '^cpu,.*,-,predicted,framework,,,[a-z]*,0.000,0,cpu calibration$' "$tmp/out")" -eq 6 ]
    then ok "sweep: the cpu's framework way, predicted, every batch"; else not_ok "sweep: the cpu's framework way, predicted, every batch"; fi
    check "sweep text: the ways and the pairs" 0 "$NNLAB" sweep --preset lenet-cifar10 --devices cpu,gpu --batches 1,4 --steps 1 --warmup 0
    grep_ok "sweep text: every row's way" "$tmp/out" '^cpu  framework *4 .* predicted from this CPU.s calibration$'
    grep_ok "sweep text: the framework pair, predicted" "$tmp/out" "^framework: gpu framework (predicted for T4) against cpu framework (predicted from this CPU's calibration): .* (predicted)$"
    grep_ok "sweep text: nnlab's pair" "$tmp/out" "^nnlab: gpu graph (predicted for T4) against cpu nnlab: "
    grep_ok "sweep text: the write-up beside the framework pair" "$tmp/out" "^  the write-up at batch 4: CPU 50 s, GPU 94 s (the GPU 1.88x slower); the framework way here: CPU [0-9]* us, GPU [0-9]* us a step (the GPU \(slower\|faster\))$"
    check "calibrate --save-profile without a GPU fails" 2 "$NNLAB" calibrate --save-profile mine
    one_line_err "--save-profile: one-line error"
    grep_ok "--save-profile: needs a GPU" "$tmp/err" "needs a GPU"
else
    skip "explain --device gpu without a GPU: this machine has a GPU"
    check "explain --device gpu beside the profile" 0 "$NNLAB" explain --preset lenet-cifar10 --batch 4 --device gpu --steps 5 --json
    grep_ok "explain gpu: measured" "$tmp/out" '"source": "measured"'
    grep_ok "explain gpu: the profile's prediction and its error" "$tmp/out" '"profile": {"name": "T4".*"error": '
fi
check "--save-profile is for the GPU" 2 "$NNLAB" calibrate --device cpu --save-profile mine
one_line_err "--save-profile --device cpu: one-line error"

# hardening against hostile input, round two:
# a failed write is an error, not exit 0
check "train --json > /dev/full fails" 1 sh -c '"$0" train --preset lenet-cifar10 --steps 2 --json >/dev/full' "$NNLAB"
grep_ok "train > /dev/full: says why" "$tmp/err" "^nnlab: cannot write the output: No space left on device$"
check "bench 2> /dev/full fails: its result is on stderr" 1 sh -c '"$0" bench --preset mnist-mlp-128 --steps 2 2>/dev/full' "$NNLAB"
check "train 2> /dev/full fails: its result is on stderr" 1 sh -c '"$0" train --preset mnist-mlp-128 --steps 2 2>/dev/full' "$NNLAB"
check "bench 2> /dev/null still succeeds" 0 sh -c '"$0" bench --preset mnist-mlp-128 --steps 2 2>/dev/null' "$NNLAB"
check "presets > /dev/full fails" 1 sh -c '"$0" presets >/dev/full' "$NNLAB"
check "devices > /dev/full fails" 1 sh -c '"$0" devices >/dev/full' "$NNLAB"
check "sweep --csv > /dev/full fails" 1 sh -c '"$0" sweep --preset mnist-mlp-128 --devices cpu --batches 1 --steps 1 --csv >/dev/full' "$NNLAB"
grep_ok "sweep > /dev/full: says why" "$tmp/err" "cannot write the output"
# control bytes from files are shown as \xNN, never sent to the terminal
esc=$(printf '\033')
mkdir -p "$tmp/xdg/nnlab/presets"
printf '[data]\nset = \033]52;c;cHduZWQ=\007\n' >"$tmp/xdg/nnlab/presets/$(printf 'evil\033[2J').ini"
sed "s/^description = .*/description = \"$(printf '\033]52;c;cHduZWQ=\007')\"/" \
    "$top_srcdir/presets/mnist-mlp-128.ini" >"$tmp/xdg/nnlab/presets/clip.ini"
check "presets with control bytes in a name and a value" 0 env XDG_CONFIG_HOME="$tmp/xdg" "$NNLAB" presets
if grep -q "$esc" "$tmp/out"; then not_ok "presets: no ESC reaches the terminal"; else ok "presets: no ESC reaches the terminal"; fi
grep_ok "presets: the name's ESC shown as \\x1B" "$tmp/out" '^evil\\x1B\[2J'
grep_ok "presets: a description's ESC and BEL shown" "$tmp/out" 'description = \\x1B]52;c;cHduZWQ=\\x07: control characters'
check "train --preset with control bytes fails" 2 "$NNLAB" train --preset "$tmp/xdg/nnlab/presets/$(printf 'evil\033[2J').ini"
if grep -q "$esc" "$tmp/err"; then not_ok "train: no ESC in the error"; else ok "train: no ESC in the error"; fi
# empty lists and devices refused; a long path keeps the reason;
# a file that is no profile named in one line
check "sweep --devices '' refused" 2 "$NNLAB" sweep --preset mnist-mlp-128 --devices '' --batches 1 --steps 1
grep_ok "sweep --devices '': says empty" "$tmp/err" "^nnlab: --devices '': an empty entry"
check "sweep --batches 1,,2 refused" 2 "$NNLAB" sweep --preset mnist-mlp-128 --batches 1,,2 --steps 1
grep_ok "sweep --batches 1,,2: says empty" "$tmp/err" "^nnlab: --batches '1,,2': an empty entry"
check "--device '' refused" 2 "$NNLAB" train --preset mnist-mlp-128 --steps 1 --device ''
grep_ok "--device '': says empty" "$tmp/err" "^nnlab: --device: empty"
long="$tmp/$(printf '%0200d' 0)/$(printf '%0200d' 1)/$(printf '%0200d' 2)/x.ini"
check "a long missing path" 2 "$NNLAB" train --preset "$long"
one_line_err "a long missing path: one line"
grep_ok "a long missing path: the reason survives" "$tmp/err" "no such preset file"
check "--gpu-profile /etc/passwd refused" 2 "$NNLAB" explain --preset lenet-cifar10 --device gpu --gpu-profile /etc/passwd
one_line_err "--gpu-profile /etc/passwd: one line"
grep_ok "--gpu-profile /etc/passwd: names the file and line" "$tmp/err" "/etc/passwd: not a GPU profile: syntax error: line 1"
# A copy of nnlab outside the build tree (as installed) never looks in the
# build tree for its GPU module; the build's own program still does. The
# emulated module is never installed (and `make install` removes an earlier
# version's copy), so whatever this machine has installed, the copy finds it
# nowhere, and the folders it names are the install folder alone.
cp "$NNLAB" "$tmp/nnlab-installed"
check "an installed nnlab: devices" 0 env -u NNLAB_MODULE_DIR NNLAB_GPU_EMULATION=1 "$tmp/nnlab-installed" devices
grep_ok "an installed nnlab: the build tree's module not loaded" "$tmp/out" "^gpu .*unavailable: the emulated GPU module .* is not in"
build_modules=$(cd "$(dirname "$NNLAB")" && pwd)/backends/cuda/.libs
if grep "^gpu " "$tmp/out" | grep -qF "$build_modules"; then
    not_ok "an installed nnlab: the build tree's folder not looked in"
else ok "an installed nnlab: the build tree's folder not looked in"; fi
check "the build's nnlab: devices" 0 env -u NNLAB_MODULE_DIR NNLAB_GPU_EMULATION=1 "$NNLAB" devices
grep_ok "the build's nnlab: loads the build tree's module" "$tmp/out" "^gpu .* available:"

echo "1..$n"
[ "$failed" -eq 0 ]
