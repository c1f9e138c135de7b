#!/bin/sh
# tests/tui_race.sh - the lab's race with a GPU here,
# through tmux (200 columns: the chart wide enough for every curve's name
# in its legend), on the emulated GPU (NNLAB_GPU_EMULATION=1): cpu + gpu with
# the switches at their defaults runs three jobs, cpu nnlab, gpu eager and
# gpu graph, each with its bar and label; the summary answers as a framework
# runs it first (predicted from the calibrations), then nnlab's pair, then
# names every pair measured with its ratio. With CUDA graph off (a way
# fixed) the GPU runs once, eager. The first run calibrates cpu and the
# emulated gpu (half a minute). Speaks TAP.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}"
. "$top_srcdir/tests/tui-lib.sh"
tui_begin race 400

T -f "$tmp/tmux.conf" new-session -d -s lab -x 200 -y 50 "NNLAB_GPU_EMULATION=1 '$NNLAB'; exec sleep 600" ||
    { echo "1..0 # SKIP tmux cannot start"; exit 0; }
wait_for "Presets \([0-9]+\)" 10 || { echo "1..0 # SKIP the lab does not open in tmux"; exit 0; }
select_preset mnist-mlp-128
expect "the emulated GPU is here" "gpu +available +emulated" 20
keys Tab
wait_for ">Device" 3
i=0
while ! wait_for ">Device +cpu \+ gpu " 1 && [ $i -lt 8 ]; do keys Right; i=$((i + 1)); done
expect "cpu and the GPU side by side" ">Device +cpu \+ gpu " 2
field "Steps" && keys 3 0 Enter
expect "30 steps a job" "Steps +30" 5

# --- the switches at their defaults: the GPU in both its ways -----------------------------------
keys Enter
expect "the title names the three jobs by device and way" \
    "cpu nnlab vs gpu eager vs gpu graph, one after the other" 150
expect "three bars, each labelled with its way" "│gpu graph .*(waiting|[0-9]+%)" 10
grep_screen "the cpu's bar" "│cpu nnlab .*[0-9]+%"
grep_screen "the gpu eager's bar" "│gpu eager "
expect "the run ends" "finished: Enter/Esc back" 120
for label in "cpu nnlab" "gpu eager" "gpu graph"; do
    grep_screen "$label: its bar at 100%" "│$label .* 100% .*done│"
    grep_screen "$label: its loss curve in the legend" "━ $label "
done
# a pair: "A 2.10x faster than B" or, narrow, "A 2.10x faster than" and B on the row below;
# one way or the other
pair_ok() {
    if awk -v a="$1" -v b="$2" '
        prev != "" && index($0, "│" other ":") { found = 1 }
        { prev = ""; other = "" }
        $0 ~ ("│" a " [0-9.]+x faster than " b) || $0 ~ ("│" b " [0-9.]+x faster than " a) { found = 1 }
        $0 ~ ("│" a " [0-9.]+x faster than *│") { prev = a; other = b }
        $0 ~ ("│" b " [0-9.]+x faster than *│") { prev = b; other = a }
        END { exit !found }' "$tmp/screen"; then ok "the summary names the pair $1, $2"
    else not_ok "the summary names the pair $1, $2"; fi
}
pair_ok "cpu nnlab" "gpu eager"
pair_ok "cpu nnlab" "gpu graph"
pair_ok "gpu eager" "gpu graph"
grep_screen "the summary's times, one row a job" "│gpu graph +[0-9.]+s "
grep_screen "the framework pair first, predicted" "│As a framework runs it: "
grep_screen "its lanes marked predicted" "│ cpu fw\* [0-9.]+ [mu]s/step"
grep_screen "nnlab's pair after it" "│nnlab's own code: "
grep_screen "nnlab's GPU lane measured" "│ gpu (graph|eager) [0-9.]+ [mu]s/step"
# a projector's 80x24: the verdicts still show, in the validation panel's place
T resize-window -t lab -x 80 -y 24
expect "at 80x24 the summary shows, in the validation panel's place" "─ Summary ─" 5
grep_screen "at 80x24: the framework verdict" "│ (GPU [0-9.]+x (slower|faster)|too close to call|cannot call.*) +│"
grep_screen "at 80x24: nnlab's verdict" "│nnlab's own code: "
T resize-window -t lab -x 200 -y 50
wait_for "│As a framework runs it" 5
# x: the exports say each job's way, and every pair's ratio
keys x
expect "x exports the race" "exported .*/nnlab/exports/mnist-mlp-128-run-" 10
csv=$(ls "$XDG_DATA_HOME"/nnlab/exports/mnist-mlp-128-run-*.csv 2>/dev/null | head -n 1)
for way in "cpu,.*,nnlab,measured," "gpu,.*,eager,measured," "gpu,.*,graph,measured,"; do
    if [ -n "$csv" ] && grep -q "^$way\$" "$csv"; then ok "the CSV's rows: $way"; else not_ok "the CSV's rows: $way"; fi
done
if [ -n "$csv" ] && [ "$(grep -c '^[cg]pu,lane,' "$csv")" -eq 4 ]; then ok "the CSV's four lanes of the race of ways"
else not_ok "the CSV's four lanes of the race of ways"; fi
if [ -n "$csv" ] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["ways"]) == 4 and d["verdicts"]["framework"]["verdict"]' "${csv%.csv}.json"; then
    ok "the JSON's lanes and verdicts"
else not_ok "the JSON's lanes and verdicts"; fi
if [ -n "$csv" ] && [ "$(grep -c '"faster": "[a-z]* [a-z]*", "than": "[a-z]* [a-z]*", "times": [0-9]' "${csv%.csv}.json")" -eq 3 ]; then
    ok "the JSON's ratios: the three pairs, each job named by device and way"
else not_ok "the JSON's ratios: the three pairs, each job named by device and way"; fi
if [ -n "$csv" ] && grep -q "gpu eager vs gpu graph" "${csv%.csv}.svg"; then ok "the SVG's title names each job's way"
else not_ok "the SVG's title names each job's way"; fi
keys Escape
expect "Esc goes back to setup" "Presets \([0-9]+\)" 10

# --- CUDA graph off: the way fixed, the GPU once ------------------------------------------------
field "CUDA graph" && keys Right
expect "CUDA graph off" ">CUDA graph +\[ \]" 5
keys Enter
expect "the title names two jobs" "cpu nnlab vs gpu eager, one after the other" 60
expect "the run ends" "finished: Enter/Esc back" 120
if grep -q "│gpu graph" "$tmp/screen"; then not_ok "no graph job with the way fixed"; else ok "no graph job with the way fixed"; fi
grep_screen "one pair: the faster named with its ratio" "│(cpu nnlab|gpu eager) [0-9.]+x( faster)?:"
echo "1..$n"
exit $((failed > 0))
