#!/bin/sh
# tests/cli_ranks.sh - data-parallel training over MPI ranks (docs/ranks.md),
# as a user runs it: for each kind of preset, N ranks at a per-rank batch B
# end with the parameters one rank gets at batch N x B; every rank's
# parameters are the same after every step (NNLAB_RANKS_CHECK=1 compares
# them each step and fails the job when one differs); 3 ranks on 2 cores;
# over TCP on the loopback and from a hostfile; a rank killed ends the job
# with no saved file; the one-line refusals. Speaks TAP.
#
# The tolerance, 1e-4 of the largest parameter: the two runs add the same
# products in another order (each rank's half-batch gradient, then their
# sum, against one product over the whole batch), which moves a gradient by
# float32's rounding, about 1e-7 of it; Adam divides each step by the root
# of the gradient's running square, which magnifies that on a gradient near
# zero, up to lr a step. Measured: 1e-5 of the largest or less after 10-20
# steps; a wrong slice, mask or average moves them by 1e-2 or more (the
# control case below, 1 rank at batch B, is 0.2 off).
#
# Skips the whole (TAP's "1..0 # SKIP", exit 0: the TAP driver counts exit 77
# as an error; docs/testing.md) where nnlab was built without MPI or mpirun
# is missing.
# Needs NNLAB and top_srcdir, which `make check` exports.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}"
n=0 failed=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/cli-lib.sh"
TOL=1e-4
ranks_env                        # mpirun as root; no leak check of Open MPI's (cli-lib.sh)
# one core's threads per rank: the ranks share 2 cores with the suite
OPENBLAS_NUM_THREADS=1; export OPENBLAS_NUM_THREADS

# Without mpirun on PATH: one line, before anything starts (and the skip
# where the module itself is missing: nnlab says so first).
env PATH=/nonexistent "$NNLAB" train --preset mnist-mlp-128 --ranks 2 --steps 1 >"$tmp/out" 2>"$tmp/err"
skip_without_mpi
check "--ranks without mpirun fails" 2 env PATH=/nonexistent "$NNLAB" train --preset mnist-mlp-128 --ranks 2 --steps 1
grep_ok "--ranks without mpirun: says so" "$tmp/err" "mpirun is not on PATH"
one_line_err "--ranks without mpirun: one-line error"
check "--ranks on a GPU that is not here is refused" 2 env NNLAB_MODULE_DIR="$tmp/none" "$NNLAB" train \
    --preset mnist-mlp-128 --ranks 2 --device gpu --steps 1
grep_ok "--ranks on a missing GPU: says so before any rank starts" "$tmp/err" "--ranks 2: device gpu: not available"
one_line_err "--ranks on a missing GPU: one-line error"

# N ranks hold N data sets on this host: a set that fits once but not 4
# times (rows from MemAvailable: ~40% of it a rank) is refused before
# mpirun starts, naming each rank's parts (the kernel's OOM killer ended
# rank 15 of 16 before)
avail_kb=$(sed -n 's/^MemAvailable: *\([0-9]*\) kB$/\1/p' /proc/meminfo)
rows=$(( ${avail_kb:-0} * 1024 / 10 * 4 / 340 ))     # 85 floats a row: 340 bytes
sed -e "s/^rows = .*/rows = $rows/" "$top_srcdir/presets/conv1d-regression.ini" >"$tmp/big.ini"
check "4 ranks that do not fit are refused" 2 "$NNLAB" train --preset "$tmp/big.ini" --ranks 4 --steps 1
grep_ok "4 ranks that do not fit: each rank's parts named" "$tmp/err" "needs ~.* (4 ranks, each: parameters .* data "
one_line_err "4 ranks that do not fit: one-line error"

# The small presets: the shipped ones, with fewer rows where they have a
# million (the same network); TabNet with its first batch norm made a ghost
# one too, so that every batch norm matches (a plain one sees each rank's share).
sed -e 's/^rows = .*/rows = 4096/' -e 's/^val_rows = .*/val_rows = 256/' \
    "$top_srcdir/presets/conv1d-regression.ini" >"$tmp/conv1d.ini"
sed -e 's/^rows = .*/rows = 4096/' -e 's/^val_rows = .*/val_rows = 256/' \
    -e '/^momentum = 0.01$/a virtual_batch = 64' \
    "$top_srcdir/presets/tabnet-regression.ini" >"$tmp/tabnet.ini"

# same NAME PRESET B STEPS N: N ranks at batch B against 1 rank at N x B
same() {
    what=$1 preset=$2 b=$3 steps=$4 ranks=$5
    check "$what: $ranks ranks at batch $b run" 0 env NNLAB_RANKS_CHECK=1 "$NNLAB" train --preset "$preset" \
        --ranks "$ranks" --batch "$b" --steps "$steps" --no-validation -q --save-params "$tmp/ranks.npy"
    check "$what: 1 rank at batch $((ranks * b)) runs" 0 "$NNLAB" train --preset "$preset" \
        --batch $((ranks * b)) --steps "$steps" --no-validation -q --save-params "$tmp/one.npy"
    check "$what: the same parameters" 0 python3 "$top_srcdir/tests/npy_compare.py" "$tmp/ranks.npy" "$tmp/one.npy" $TOL
    echo "# $(cat "$tmp/out")"
}
same "MLP chain with dropout (mnist-mlp-128)" mnist-mlp-128 32 20 2
cp "$tmp/ranks.npy" "$tmp/mlp-shm.npy"
# the control: 1 rank at batch B is another run, which the comparison sees
check "control: 1 rank at batch 32 runs" 0 "$NNLAB" train --preset mnist-mlp-128 --batch 32 --steps 20 \
    --no-validation -q --save-params "$tmp/half.npy"
check "control: the comparison fails against another run" 1 python3 "$top_srcdir/tests/npy_compare.py" \
    "$tmp/ranks.npy" "$tmp/half.npy" $TOL
same "LeNet conv (lenet-cifar10)" lenet-cifar10 4 20 2
same "conv1d regression" "$tmp/conv1d.ini" 64 10 2
same "TabNet graph, ghost batch norm" "$tmp/tabnet.ini" 128 10 2
same "3 ranks on 2 cores (oversubscribed)" mnist-mlp-128 16 10 3

# What rank 0 says, and only rank 0: one JSON, the ranks, both batches, the
# transport and the all-reduce phase.
check "2 ranks, JSON" 0 "$NNLAB" train --preset mnist-mlp-128 --ranks 2 --batch 32 --steps 10 --json
grep_ok "JSON: 2 ranks" "$tmp/out" '"ranks": 2,'
grep_ok "JSON: per-rank batch" "$tmp/out" '"batch_per_rank": 32,'
grep_ok "JSON: global batch" "$tmp/out" '"global_batch": 64,'
grep_ok "JSON: shared memory" "$tmp/out" '"transport": "shared memory"'
grep_ok "JSON: the library" "$tmp/out" '"library": "Open MPI'
grep_ok "JSON: the all-reduce phase" "$tmp/out" '"phases": {.*"allreduce_us": [0-9]'
if [ "$(grep -c '"command"' "$tmp/out")" -eq 1 ]; then ok "one JSON (rank 0's)"; else not_ok "one JSON (rank 0's)"; fi
grep_ok "text: batch per rank and global" "$tmp/err" "batch 32 per rank (global batch 64)"
grep_ok "text: the all-reduce in the phase line" "$tmp/err" "us/step (mean) = .* + all-reduce [0-9]"
grep_ok "JSON: the sums overlapped the backward" "$tmp/out" '"overlap": true,'
grep_ok "JSON: their time in flight, labelled" "$tmp/out" '"allreduce_overlapped_us": [0-9]'
# --no-overlap: one blocking sum after the backward, the same bits (two
# ranks add the same two numbers, in buckets or in one sum)
check "--no-overlap runs" 0 env NNLAB_RANKS_CHECK=1 "$NNLAB" train --preset mnist-mlp-128 --ranks 2 --batch 32 \
    --steps 20 --no-validation --no-overlap --json --save-params "$tmp/blocking.npy"
grep_ok "--no-overlap: JSON says so" "$tmp/out" '"overlap": false,'
check "--no-overlap: the same bits as the buckets" 0 python3 "$top_srcdir/tests/npy_compare.py" \
    "$tmp/blocking.npy" "$tmp/mlp-shm.npy" 0
check "--ranks 1 is a plain job" 0 "$NNLAB" train --preset mnist-mlp-128 --ranks 1 --steps 2 --json
grep_ok "--ranks 1: 1 rank, no transport" "$tmp/out" '"ranks": 1,'

# Over TCP on the loopback: mpirun itself, shared memory left out; the same
# parameters as over shared memory.
check "over TCP: runs" 0 mpirun -np 2 --mca btl tcp,self env NNLAB_RANKS_CHECK=1 "$NNLAB" train \
    --preset mnist-mlp-128 --batch 32 --steps 20 --no-validation --json --save-params "$tmp/tcp.npy"
grep_ok "over TCP: the JSON says tcp" "$tmp/out" '"transport": "tcp"'
check "over TCP: the same parameters as over shared memory" 0 python3 "$top_srcdir/tests/npy_compare.py" \
    "$tmp/tcp.npy" "$tmp/mlp-shm.npy" 1e-6
# From a hostfile that names the loopback address (slots: the ranks it takes)
printf '127.0.0.1 slots=2\n' >"$tmp/hosts"
check "a hostfile with 127.0.0.1: runs" 0 mpirun -np 2 --hostfile "$tmp/hosts" --mca btl tcp,self \
    "$NNLAB" train --preset mnist-mlp-128 --batch 32 --steps 20 --no-validation -q --save-params "$tmp/hf.npy"
check "a hostfile: the same parameters" 0 python3 "$top_srcdir/tests/npy_compare.py" "$tmp/hf.npy" \
    "$tmp/mlp-shm.npy" 1e-6

# The ranks' sweep: each cell measured with one rank at N x B beside it,
# speedup = one rank's step / the ranks' step, and the prediction beside
# priced as the ranks run here: each rank at its share of the one rank's
# threads, taking turns past one a core (a fresh calibration cache: the
# rank's is measured, the one rank's cached).
check "sweep --ranks 1,2: runs" 0 env XDG_CACHE_HOME="$tmp/cache" "$NNLAB" sweep --preset mnist-mlp-128 \
    --ranks 1,2 --batches 4 --steps 3 --warmup 1 --json
python3 - "$tmp/out" <<'PY' >"$tmp/err" 2>&1
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d["predicted_over"] == "shm", d.get("predicted_over")
cells = {c["ranks"]: c for c in d["cells"]}
assert sorted(cells) == [1, 2] and all(c["source"] == "measured" for c in cells.values()), d["cells"]
for c in cells.values():
    assert math.isclose(c["speedup"], c["one_rank_us"] / c["step_us"], rel_tol=1e-4), c
    assert c["global_batch"] == 4 * c["ranks"], c
t = cells[1]["predicted"]["rank_threads"]
assert t >= 1 and cells[1]["predicted"]["timeshare"] == 1, cells[1]
assert cells[2]["predicted"]["rank_threads"] == max(1, t // 2), (t, cells[2])
assert math.isclose(cells[2]["predicted"]["timeshare"], max(1.0, 2 / t), rel_tol=1e-3), (t, cells[2])
assert math.isclose(cells[1]["predicted"]["speedup"], 1.0, rel_tol=1e-9), cells[1]
PY
[ $? -eq 0 ] && ok "sweep --ranks: measured cells add up, the prediction priced as the ranks run" || \
    not_ok "sweep --ranks: measured cells add up, the prediction priced as the ranks run"

check "sweep --ranks without a link profile: runs, measured only" 0 env NNLAB_PROFILES_DIR="$tmp/none" \
    XDG_CONFIG_HOME="$tmp/none" XDG_CACHE_HOME="$tmp/cache" "$NNLAB" sweep --preset mnist-mlp-128 \
    --ranks 1,2 --batches 4 --steps 2 --warmup 0 --json
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert "no link profile" in d["no_prediction"] and "predicted_over" not in d, d
assert all("predicted" not in c for c in d["cells"]), d["cells"]' "$tmp/out" >"$tmp/err" 2>&1 \
    && ok "sweep --ranks without a link: the JSON says why nothing is predicted" \
    || not_ok "sweep --ranks without a link: the JSON says why nothing is predicted"

# --progress-lines: every rank's progress as JSON lines on stdout (mpirun
# forwards them), each rank's last one done at the last step
check "--progress-lines over 2 ranks: runs" 0 "$NNLAB" train --preset mnist-mlp-128 --ranks 2 --batch 16 \
    --steps 400 --no-validation -q --progress-lines
python3 -c 'import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert lines and all(l["progress"] == 1 and l["ranks"] == 2 for l in lines), lines[:3]
for r in (0, 1):
    mine = [l for l in lines if l["rank"] == r]
    assert mine, "no line from rank %d" % r
    last = mine[-1]
    assert last["state"] == "done" and last["step"] == last["steps"] == 400, last
    assert last["allreduce_us"] > 0 and last["us_per_step"] > 0 and last["loss"] > 0, last
    steps = [l["step"] for l in mine]
    assert steps == sorted(steps), steps' "$tmp/out" >"$tmp/err" 2>&1 \
    && ok "--progress-lines: each rank its lines, in order, its last one done" \
    || not_ok "--progress-lines: each rank its lines, in order, its last one done"

# A rank killed mid-run: the others end, the status is not 0, a line says
# which, and no --save-params file (nor its temporary) is left.
mark=nnlab-ranks-test-$$
NNLAB_TEST_MARK=$mark "$NNLAB" train --preset mnist-mlp-128 --ranks 2 --batch 32 --steps 1000000 -q \
    --save-params "$tmp/killed.npy" >"$tmp/out" 2>"$tmp/err" &
job=$!
victim=
for _ in $(seq 1 100); do           # rank 1, found by its environment, once it trains
    for e in $(grep -lsxz "NNLAB_TEST_MARK=$mark" /proc/[0-9]*/environ); do
        if grep -qsxz "OMPI_COMM_WORLD_RANK=1" "$e"; then
            victim=${e#/proc/}; victim=${victim%/environ}
        fi
    done
    [ -n "$victim" ] && break
    sleep 0.1
done
sleep 2
if [ -n "$victim" ]; then kill -KILL "$victim"; fi
wait "$job"; got=$?
if [ -n "$victim" ] && [ "$got" -ne 0 ]; then ok "a rank killed: exit status $got"; else
    echo "# victim '$victim', exit $got"; not_ok "a rank killed: exit status not 0"; fi
grep_ok "a rank killed: said" "$tmp/err" "rank 1.*\(exited on signal 9\|Killed\)"
if ls "$tmp" | grep -q killed; then not_ok "a rank killed: no saved file"; else ok "a rank killed: no saved file"; fi

echo "1..$n"
[ "$failed" -eq 0 ]
