#!/bin/sh
# tests/tui_jacobian.sh - the lab with the Jacobian preset, in a
# tmux session on its own socket: the preset is listed with val and Method
# fields (no training fields), its run shows rows of J done and the time,
# the predicted val sweep with a verdict per method, each method's FLOPs,
# and Explain names the waste and the methods that remove it; a method
# picked in the setup is the one the next run uses. Speaks TAP; skips
# without tmux.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}"
. "$top_srcdir/tests/tui-lib.sh"
tui_begin jac-test 210

# the sweep needs the CPU's calibration: measured once here, as the lab would
"$NNLAB" calibrate --device cpu >/dev/null 2>&1
T new-session -d -s lab -x 132 -y 40 "$NNLAB" || { echo "1..0 # SKIP tmux cannot start a session"; exit 0; }
expect "the preset is listed" "mlp-jacobian" 10
select_preset mlp-jacobian Up
expect "selected" "> mlp-jacobian " 2
expect "the setup names the task" "task   Jacobian by rows at val 100 " 5
expect "the batch field is val" "^│ val +100 " 2
expect "the method is a field" "^│ Method +rows " 2
if grep -q -E "^│ (Epochs|Steps|Learning rate) " "$tmp/screen"; then not_ok "no training fields"; else ok "no training fields"; fi
# a small val keeps the run short
keys Tab
i=0
while ! wait_for "^│>val " 1 && [ $i -lt 14 ]; do keys Down; i=$((i + 1)); done
keys 2 0 Enter
expect "val takes a typed value" "val set" 5
keys Enter
expect "Enter runs the Jacobian job" "Jacobian by rows at val 20" 60
expect "the run shows rows of J done and the time" "all 8.0k rows of J in [0-9.]+ s" 60
expect "the job row counts rows of J" "rows 8.0k/8.0k" 5
expect "the FLOPs and the passes" "FLOPs 2.71e\+09 in 8000 passes over 20 rows" 5
expect "the share on zeros per method" "95.0% on zeros" 5
expect "the predicted val sweep" "val sweep, seconds, predicted" 5
expect "the framework-eager line for the run's method" "rows as a framework runs it eagerly" 5
expect "the framework's verdict" "rows fw +(GPU overtakes CPU|CPU faster up to)" 5
if [ "$(grep -c -E "(GPU overtakes CPU at val [0-9]+|CPU faster up to val [0-9]+) \(predicted\)" "$tmp/screen")" -eq 5 ]; then
    ok "a verdict per method, and the framework's for the run's"
else
    not_ok "a verdict per method, and the framework's for the run's"
fi
expect "each method's FLOPs beside" "Methods: FLOPs" 5
# wide enough for Explain beside the panels; e toggles it
cap
grep -q "Explain" "$tmp/screen" || keys e
expect "Explain names the waste" "95% of these FLOPs multiply zeros" 5
expect "and the methods that remove it" "remove the waste" 5

# the Jacobian's own fields and keys on the run screen, and
# `x` writing its own CSV and JSON (the CLI's writer), read back by python3
expect "the job row: method, val, FLOPs, the waste" "rows, val 20 .*FLOPs 2.71e\+09 +95.0% on zeros" 5
if grep -q "phases" "$tmp/screen"; then not_ok "no training phases"; else ok "no training phases"; fi
if grep -q -E "l log|s smooth" "$tmp/screen"; then not_ok "no training keys"; else ok "no training keys"; fi
keys x
expect "x exports the Jacobian" "exported .*-jacobian-" 5
json=$(ls "$tmp"/data/nnlab/exports/*-jacobian-*.json 2>/dev/null | head -n 1)
csv=${json%.json}.csv
if [ -n "$json" ] && python3 - "$json" "$csv" <<'PY'
import csv, json, sys
d = json.load(open(sys.argv[1]))
assert d["method"] == "rows" and d["val"] == 20 and d["state"] == "done", d
assert d["rows"] == 8000 and d["rows_done"] == 8000 and d["seconds"] > 0
assert abs(d["flops"] - 2.71e9) < 0.01e9 and abs(d["waste"] - 0.95) < 0.001, d
assert "multiply zeros" in d["explain"]
sw = d["sweep"]
assert sw["source"] == "predicted" and len(sw["val"]) == 9
assert len(sw["cpu_s"]["nnlab"]["rows"]) == 9 and len(sw["gpu_s"]["framework eager"]["forward"]) == 9
rows = list(csv.DictReader(open(sys.argv[2])))
own = [r for r in rows if r["source"] == "measured"]
assert len(own) == 1 and own[0]["method"] == "rows" and own[0]["val"] == "20" and float(own[0]["seconds"]) > 0
assert abs(float(own[0]["waste"]) - 0.95) < 0.001
assert len([r for r in rows if r["source"] == "predicted"]) == 2 * 4 * 2 * 9
PY
then ok "the export reads back: method, val, FLOPs, waste, the val sweep"
else not_ok "the export reads back: method, val, FLOPs, waste, the val sweep"; fi

# back in the setup, Right on Method picks the next one; the run uses it
keys Escape
expect "back to the setup" "^│ Method +rows " 10
i=0
while ! wait_for "^│>Method " 1 && [ $i -lt 14 ]; do keys Down; i=$((i + 1)); done
keys Right
expect "Right picks the next method" "^│>Method +batched " 2
keys Right
expect "and the next" "^│>Method +per-sample " 2
expect "the setup names the method picked" "task   Jacobian by per-sample at val 20 " 2
keys Enter
expect "the run uses the method picked" "Jacobian by per-sample at val 20" 60
expect "per-sample's passes: one per output" "in 400 passes over 20 rows" 60

# a job predicted over 10 minutes (rows at val 100000): the prediction and a
# question first; n leaves it unstarted, y starts it; c cancels it within a
# second and the status row then says it ended
wait_for "all 8.0k rows of J in" 30
keys Escape
expect "back to the setup again" "task   Jacobian by per-sample at val 20 " 10
i=0
while ! wait_for "^│>Method " 1 && [ $i -lt 14 ]; do keys Up; i=$((i + 1)); done
i=0
while ! wait_for "^│>Method +rows " 1 && [ $i -lt 4 ]; do keys Right; i=$((i + 1)); done
i=0
while ! wait_for "^│>val " 1 && [ $i -lt 14 ]; do keys Up; i=$((i + 1)); done
keys 1 0 0 0 0 0 Enter
expect "val 100000" "val set" 5
keys Enter
expect "a long job is asked about first" "A long job: start it\?" 10
expect "with its prediction" "predicted to take .* on cpu" 2
keys n
expect "n: not started, said so" "not started: predicted to take" 5
keys Enter
expect "asked again" "A long job: start it\?" 10
keys y
expect "y starts it" "Jacobian by rows at val 100000" 20
expect "its row shows the prediction" "rows, val 100000 .*predicted [0-9:]+" 10
sleep 2
keys c
t0=$(date +%s)
expect "the status row ends the cancel" "cancelled after [0-9]+ of 40000000 rows of J" 10
echo "# the cancel was said $(($(date +%s) - t0)) s after c"
if grep -q "cancelling" "$tmp/screen"; then not_ok "no cancelling... left"; else ok "no cancelling... left"; fi
keys q
echo "1..$n"
[ "$failed" -eq 0 ]
