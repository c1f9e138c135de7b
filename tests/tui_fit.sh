#!/bin/sh
# tests/tui_fit.sh - nothing cut at 80x24 or 200x50: the lab through tmux at
# both sizes, every screen visited (setup, its settings scrolled to the end,
# the Data folder's hint, a race of ways on the run screen, an export, a
# small sweep, the help, the save dialog, the Jacobian beside a predicted
# GPU, and that once more at 160x48). A screen fails on any text the lab had
# to cut to its room: the lab writes each to $NNLAB_CUT_LOG where it cuts it
# (ui/draw.c's ui_put), so a cut is found where it is made, not guessed from
# the screen; and on the strings it once drew over a border
# (tests/fixtures/known-cuts.txt, through tests/screen_fit.py, whose
# heuristics print notes). Also: the preset list says what it hides, a
# missing NVIDIA driver is one row, and the Jacobian's predicted GPU lane
# counts rows of J (rows/s), not training steps. The recorded 2-core CPU
# calibration is installed (tests/cal_install): nothing calibrates. Speaks
# TAP; a check still failing on a cut not yet fixed is marked TODO.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}" "${top_builddir:=.}"
. "$top_srcdir/tests/tui-lib.sh"
tui_begin fit 600
# the framework way predicted (its lanes starred), even where a python3 imports torch
export NNLAB_PYTHON=/nonexistent
command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP no python3"; exit 0; }
"$top_builddir/tests/cal_install" calibration-cpu-dev2.txt || { echo "1..0 # SKIP the fixture does not install"; exit 0; }
known="$top_srcdir/tests/fixtures/known-cuts.txt"

# The lab writes every text it had to cut to $NNLAB_CUT_LOG (ui/draw.c's
# ui_put: what it kept, what it lost); fits takes the lines written since
# its last call, the cuts of the screen it checks.
export NNLAB_CUT_LOG="$tmp/cuts"
: >"$NNLAB_CUT_LOG"
seen=0
new_cuts() {
    total=$(wc -l <"$NNLAB_CUT_LOG")
    tail -n "+$((seen + 1))" "$NNLAB_CUT_LOG" | head -n "$((total - seen))" >"$tmp/cut-now"
    seen=$total
}

# fits WHAT [TODO]: the screen now has nothing cut (TODO: a cut not yet fixed):
# no text the lab cut to its room, none of the strings it once cut
fits() {
    cap
    new_cuts
    if python3 "$top_srcdir/tests/screen_fit.py" "$W" "$tmp/screen" "$known" >"$tmp/found" && ! [ -s "$tmp/cut-now" ]; then
        ok "${W}x$H: $1"
    else
        n=$((n + 1))
        if [ -n "${2:-}" ]; then echo "not ok $n - ${W}x$H: $1 # TODO $2"
        else failed=$((failed + 1)); echo "not ok $n - ${W}x$H: $1"; sed 's/^/# /' "$tmp/screen"; fi
        sed 's/^/#   /' "$tmp/found"
        sort -u "$tmp/cut-now" | sed 's/^/#   /'
    fi
}

# to_fields: the focus on the settings (Tab toggles it with the preset list)
to_fields() { cap; grep -q '│>[A-Z]' "$tmp/screen" || keys Tab; wait_for '│>[A-Z]' 3; }

opened=0
for size in 80x24 200x50; do
    W=${size%x*} H=${size#*x}
    T kill-server >/dev/null 2>&1
    opened=$((opened + 1))
    sock=$sock_base-$opened
    T -f "$tmp/tmux.conf" new-session -d -s lab -x "$W" -y "$H" "'$NNLAB'; exec sleep 300" ||
        { echo "1..0 # SKIP tmux cannot start"; exit 0; }
    wait_for "Presets \([0-9]+\)" 10 || { not_ok "${size}: the lab opens"; continue; }
    i=0
    while ! grep -q '> mnist-mlp-128 ' "$tmp/screen" && [ $i -lt 12 ]; do keys Down; i=$((i + 1)); wait_for '> mnist-mlp-128 ' 1; done
    expect "${size}: the devices surveyed" "gpu +(unavailable|available)" 10
    fits "the setup screen"
    if [ "$W" -eq 80 ]; then
        expect "${size}: the preset list says what it hides" "(▼|v) [0-9]+ more \(Down\)|(▲|\^) top \(Up\)" 2
    fi
    if grep -q -E "gpu +unavailable: " "$tmp/screen"; then
        if grep -q -E "gpu +unavailable: no NVIDIA driver *│" "$tmp/screen" ||
            ! grep -q "no NVIDIA driver" "$tmp/screen"; then ok "${size}: a missing driver is one row"
        else not_ok "${size}: a missing driver is one row"; fi
    else
        ok "${size}: a missing driver is one row # SKIP a GPU is here"
    fi
    to_fields
    field "Device"
    i=0
    while ! wait_for ">Device +cpu \+ gpu \(pre" 1 && [ $i -lt 6 ]; do keys Right; i=$((i + 1)); done
    fits "the settings, cpu + gpu predicted"
    field "Data folder"
    fits "the Data folder's hint"
    field "Steps" && keys 4 0 Enter
    wait_for ">Steps +40" 3
    i=0
    while [ $i -lt 20 ]; do keys Down; i=$((i + 1)); done
    fits "the settings scrolled to the last"
    keys '?'
    wait_for "any other key closes|Help" 3
    fits "the help on the setup screen"
    keys Escape
    keys s
    wait_for "Name: " 3
    fits "the save dialog"
    keys Escape
    wait_for "Presets \([0-9]+\)" 3
    keys Enter
    expect "${size}: a race of ways runs" "cpu fw\* .*(step|done)" 30
    fits "the run screen, a race running"
    wait_for "finished: Enter/Esc back" 60
    fits "the run screen, the race done"
    keys '?'
    wait_for "any other key closes|Help" 3
    fits "the help on the run screen"
    keys Escape
    keys x
    wait_for "exported " 5
    fits "the export's message"
    keys Escape
    wait_for "Presets \([0-9]+\)" 5
    to_fields
    field "Device"
    i=0
    while ! wait_for ">Device +cpu \(OpenBLAS\)" 1 && [ $i -lt 6 ]; do keys Left; i=$((i + 1)); done
    field "Sweep from" && keys 1 6 Enter
    field "Sweep to" && keys 3 2 Enter
    field "Sweep steps" && keys 3 Enter
    wait_for "Sweep to +32" 3
    keys w
    expect "${size}: a sweep runs" "done: [0-9]+ of [0-9]+ points" 60
    fits "the sweep screen"
    # the Jacobian at val 20 beside a predicted GPU: its panel, its table
    # and its lanes, whose GPU one counts rows of J, not training steps
    keys Escape
    wait_for "Presets \([0-9]+\)" 5
    grep -q '│>[A-Z]' "$tmp/screen" && keys Tab     # the focus on the preset list
    i=0
    while ! grep -q '> mlp-jacobian ' "$tmp/screen" && [ $i -lt 12 ]; do keys Up; i=$((i + 1)); wait_for '> mlp-jacobian ' 1; done
    to_fields
    field "Device"
    i=0
    while ! wait_for ">Device +cpu \+ gpu \(pre" 1 && [ $i -lt 6 ]; do keys Right; i=$((i + 1)); done
    field "val" && keys 2 0 Enter
    wait_for ">val +20" 3
    fits "the Jacobian's settings"
    keys Enter
    expect "${size}: the Jacobian runs" "all 8.0k rows of J in" 60
    wait_for "gpu graph\* .*done in" 30
    fits "the Jacobian run"
    if grep -q -E "gpu graph\* .*done in [0-9.e+-]+ s \([0-9.]+k? rows/s" "$tmp/screen" &&
        ! grep -q -E "gpu graph\* .*us/step" "$tmp/screen"; then ok "${size}: the Jacobian's GPU lane counts rows/s"
    else not_ok "${size}: the Jacobian's GPU lane counts rows/s"; fi
    if [ "$W" -eq 200 ]; then        # the width the Jacobian's table once lost its last column at
        T resize-window -t lab -x 160 -y 48 >/dev/null 2>&1
        W=160 H=48
        sleep 1
        fits "the Jacobian run"
    fi
done
echo "1..$n"
[ "$failed" -eq 0 ]
