#!/bin/sh
# tests/tui_ranks.sh - the lab's ranks (docs/ranks.md "In the lab") through
# tmux at 80x24 on the CPU: Ranks 2 on mnist-mlp-128 races 1 rank at 2x
# the batch against 2 ranks at the batch, one after the other; the 2 ranks'
# job (a child `nnlab train --ranks 2 --progress-lines` under mpirun) shows
# a bar per rank with its all-reduce's share of its step, measured; pause
# is refused with its reason; at the end the pair's ratio, and the model's
# beside it, labelled (this CPU calibrated at a rank's thread once the lanes
# ended, cached apart from its own calibration). A rank killed fails the
# job with mpirun's line naming it; 3 ranks at 80x24 show rank 0's row and
# one summing up the rest. A cancel of a
# longer run leaves no rank, mpirun or preset file behind. Skips where
# nnlab was built without MPI or mpirun is missing. Speaks TAP.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}" "${top_builddir:=.}"
. "$top_srcdir/tests/cli-lib.sh"     # skip_without_mpi, ranks_env
. "$top_srcdir/tests/tui-lib.sh"     # after it: its ok and not_ok show the screen
tui_begin ranks 400
ranks_env
"$NNLAB" train --preset mnist-mlp-128 --steps 2 --ranks 2 --quiet >/dev/null 2>"$tmp/err" || skip_without_mpi
TMPDIR="$tmp/private"; mkdir -p "$TMPDIR"; export TMPDIR   # where the ranks' preset file goes

T -f "$tmp/tmux.conf" new-session -d -s lab -x 80 -y 24 "'$NNLAB'; exec sleep 600" ||
    { echo "1..0 # SKIP tmux cannot start"; exit 0; }
wait_for "Presets \([0-9]+\)" 10 || { echo "1..0 # SKIP the lab does not open in tmux"; exit 0; }
select_preset mnist-mlp-128
expect "the devices surveyed" "cpu +available" 20
keys Tab
wait_for ">Device" 3
field "Ranks" && keys Right
expect "Ranks 2: 1 rank against 2" ">Ranks +2 \(1 vs 2 ranks\)" 5
field "Steps" && keys 4 0 0 Enter
expect "400 steps a job" "Steps +400" 5

keys Enter
expect "the title names both lanes" "cpu 1 rank vs cpu 2 ranks" 30
expect "the 2 ranks' job runs: a bar per rank" "│ +rank 1 .*[0-9]+%" 90
grep_screen "rank 0's bar" "│ +rank 0 .*[0-9]+%"
keys p
expect "pause refused with its reason" "ranks cannot pause" 5
expect "each rank's all-reduce share, measured" "│ +rank 1 .*allreduce [0-9]+ of [0-9]+ us \([0-9]+%\) measured" 60
grep_screen "the 2 ranks' phases: the all-reduce a part of the step" "│ +phases .* a [0-9]+.*= [0-9]+ us"
grep_screen "the 1 rank's job done" "│cpu 1 rank .*100%.*done"
expect "the 2 ranks' job done" "│cpu 2 ranks .*100%.*done" 120
grep_screen "both ranks at their last step" "│ +rank 1 .*100% 400/400"
# "cpu 2 ranks 1.08x faster than cpu 1 rank: ...", or at 80x24 "cpu 2 ranks 1.08x: 0.150/0.139"
if tr -d '\n│ ' <"$tmp/screen" | grep -q -E "cpu(1rank|2ranks)[0-9.]+x(fasterthancpu(1rank|2ranks))?:"; then
    ok "the pair's ratio"
else not_ok "the pair's ratio"; fi
# (Open MPI keeps its session folder there too: only the preset files are ours)
presets_left() { ls "$TMPDIR" | grep '^nnlab-ranks-.*[.]ini$'; }
if [ -z "$(presets_left)" ]; then ok "no preset file left"; else presets_left | sed 's/^/# /'; not_ok "no preset file left"; fi
# the model's figure beside it, once this CPU is calibrated at a rank's thread (after the lanes)
expect "the prediction beside the race, labelled" "│Predicted \(cost model\)" 10
expect "the predicted speedup, after a rank's calibration" "│ 2 ranks [0-9.]+x one rank" 90
if ls "$XDG_CACHE_HOME"/nnlab/calibration-cpu-1threads.txt >/dev/null 2>&1; then ok "a rank's calibration cached apart"
else not_ok "a rank's calibration cached apart"; fi
# x: the export names each lane as the lab does, the ranks' with its count
keys x
expect "x exports the race" "exported .*/nnlab/exports/mnist-mlp-128-run-" 10
json=$(ls "$XDG_DATA_HOME"/nnlab/exports/mnist-mlp-128-run-*.json 2>/dev/null | head -n 1)
if [ -n "$json" ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
jobs = d["jobs"]
assert [(j["way"], j["ranks"]) for j in jobs] == [("nnlab", 1), ("ranks", 2)], jobs
names = json.dumps(d.get("pairs", d))
assert "cpu 2 ranks" in names and "cpu 1 rank" in names and "cpu nnlab" not in names, names
' "$json" 2>"$tmp/err"; then ok "the export: each lane its way and ranks, the pair by the lab's names"
else sed 's/^/# /' "$tmp/err"; not_ok "the export: each lane its way and ranks, the pair by the lab's names"; fi
if [ -n "$json" ] && grep -q "cpu 1 rank vs cpu 2 ranks" "${json%.json}.svg"; then ok "the SVG's title: the lab's names"
else not_ok "the SVG's title: the lab's names"; fi

# --- a rank killed: the job fails with mpirun's word on it, nothing left behind ------------------
# this test's ranks only: their preset file is in its own $TMPDIR (make -j2
# check runs tests side by side, and tui_lesson.sh starts ranks of its own:
# a pattern without the folder once killed one of those)
ours="$TMPDIR/nnlab-ranks-[A-Za-z0-9]{6}[.]ini"
rank_pids() {   # the ranks themselves: not the lab's child (--ranks) nor mpirun
    pgrep -a -f "$ours" | grep -v -e "--ranks" -e "mpirun" | cut -d' ' -f1
}
keys Enter                           # back to setup (a sanitizer build is slow to get there)
expect_quiet() { wait_for "$1" "$2" || { echo "# waited for: $1"; not_ok "$3"; }; }
expect_quiet "Presets \([0-9]+\)" 30 "back to the setup screen"
field "Steps" && keys 2 0 0 0 0 Enter
expect "20000 steps" "Steps +20000" 5
keys Enter
# the ranks' processes polled, not the screen: the 2 ranks' lane lasts seconds
# in a plain build, and its rows can show only when it is nearly done
victim= end=$(($(date +%s) + 90))
while [ -z "$victim" ] && [ "$(date +%s)" -lt "$end" ]; do
    [ "$(rank_pids | wc -l)" -ge 2 ] && victim=$(rank_pids | tail -n 1)
    [ -z "$victim" ] && sleep 0.1
done
# a second for the ranks to start (cli_ranks.sh, too, waits for one to train): this test is
# of a rank killed mid-run. One killed while both still started (no line from either yet)
# once left mpirun or a rank running past this test's 30 s (CI's plain build, 2026-11-29, a
# loaded machine; not seen again in 4 runs here, loaded or not): docs/ranks.md says so
[ -n "$victim" ] && sleep 1
if [ -n "$victim" ] && kill -9 "$victim"; then ok "the 2 ranks' job runs: a rank killed"
else not_ok "the 2 ranks' job runs: a rank killed"; fi
expect "a rank killed: the job fails saying which rank died" "│cpu 2 ranks failed: .*rank 1" 30
sleep 1
if [ -n "$(rank_pids)" ] || pgrep -f "mpirun.*$ours" >/dev/null 2>&1; then not_ok "no rank or mpirun left after the kill"
else ok "no rank or mpirun left after the kill"; fi
if [ -z "$(presets_left)" ]; then ok "no preset file left after the kill"; else not_ok "no preset file left after the kill"; fi

# --- cancel: nothing left behind -----------------------------------------------------------------
keys Enter                           # back to setup
expect_quiet "Presets \([0-9]+\)" 30 "back to the setup screen"
keys Enter
expect "the 2 ranks' job runs, the 1 rank's done" "│ +rank 1 ██*[░ ]* +[0-9]+%" 90
keys c
expect "the cancel ends the 2 ranks' job" "│cpu 2 ranks .*cancelled│" 30
sleep 1
if pgrep -f "$ours" >/dev/null 2>&1; then
    pgrep -a -f "$ours" | sed 's/^/# /'; not_ok "no rank or mpirun left"
else ok "no rank or mpirun left"; fi
if [ -z "$(presets_left)" ]; then ok "no preset file left after the cancel"; else not_ok "no preset file left after the cancel"; fi

# --- 3 ranks at 80x24: rank 0's row, the other two summed up in one ----------------------------------
keys Enter                           # back to setup
expect_quiet "Presets \([0-9]+\)" 30 "back to the setup screen"
field "Ranks" && keys Right
expect "Ranks 3" ">Ranks +3 \(1 vs 3 ranks\)" 5
field "Steps" && keys 2 0 0 Enter
expect "200 steps" "Steps +200" 5
keys Enter
expect "3 ranks: the last row sums up ranks 1-2" "│ +ranks 1-2: steps [0-9]+ to [0-9]+ of [0-9]+ \([0-9] heard\)" 120
expect "3 ranks: rank 0's own row" "│ +rank 0 .*[0-9]+%" 5
expect "3 ranks: the job done" "│cpu 3 ranks .*100%.*done" 120
keys q
echo "1..$n"
[ "$failed" -eq 0 ]
