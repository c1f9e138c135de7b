#!/bin/sh
# tests/tui_fit.sh - nothing cut at 80x24 or 200x50: the lab through tmux at
# both sizes, every screen visited: setup (its preset list scrolled to its
# end, its settings scrolled to theirs, the Data folder's hint and dialog),
# the help (scrolled to its end), the save dialog and its question for a
# shipped preset's name, a race of ways beside a predicted GPU (a row a
# job) with its Explain panel and its export, the calibration dialog (the
# reference's first use) and its result, a race of two jobs at once, a
# sweep with the predicted GPU's series in its legend and its Explain panel,
# the Jacobian beside a predicted GPU (and that once more at 160x48). A
# screen fails on any text the lab had to cut to its room: the lab writes
# each to $NNLAB_CUT_LOG where it cuts it (ui/draw.c's ui_put, and a word
# broken by a wrap), so a cut is found where it is made, not guessed from
# the screen; on a box's border overwritten (tests/screen_fit.py); and on
# the strings it once drew over a border (tests/fixtures/known-cuts.txt).
# Also: the lists say what they hide, a missing NVIDIA driver is one row,
# and the Jacobian's predicted GPU lane counts rows of J (rows/s), not
# training steps. The recorded 2-core CPU calibration is installed
# (tests/cal_install): only the reference calibrates. NNLAB_FIT_SIZES
# (default "80x24 200x50") picks the sizes, NNLAB_FIT_SCREENS a folder
# that keeps every screen checked. Speaks TAP; a check still failing on a
# cut not yet fixed is marked TODO.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}" "${top_builddir:=.}"
. "$top_srcdir/tests/tui-lib.sh"
tui_begin fit 600
# the framework way predicted (its lanes starred), even where a python3 imports torch
export NNLAB_PYTHON=/nonexistent
command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP no python3"; exit 0; }
"$top_builddir/tests/cal_install" calibration-cpu-dev2.txt || { echo "1..0 # SKIP the fixture does not install"; exit 0; }
known="$top_srcdir/tests/fixtures/known-cuts.txt"

cut_log_start                  # tests/tui-lib.sh: fits reads the cuts since its last call

# fits WHAT [TODO]: the screen now has nothing cut (TODO: a cut not yet fixed):
# no text the lab cut to its room, none of the strings it once cut
fits() {
    cap
    new_cuts
    if [ -n "${NNLAB_FIT_SCREENS:-}" ]; then     # each screen checked, kept for a person to look at
        cp "$tmp/screen" "$NNLAB_FIT_SCREENS/$(printf '%02d' $((n + 1)))-${W}x$H-$(echo "$1" | tr -c 'a-zA-Z0-9\n' '-').txt"
    fi
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

# to_list: the focus on the preset list; pick NAME: the preset NAME selected
to_list() { cap; grep -q '│>[A-Z]' "$tmp/screen" && keys Tab; wait_for '│> [a-z]' 3; }
pick() {
    to_list
    keys Home
    i=0
    while ! wait_for "> $1 " 1 && [ $i -lt 12 ]; do keys Down; i=$((i + 1)); done
}
# back_to_setup: Esc from a screen whose jobs have ended
back_to_setup() { keys Escape; wait_for "Presets \([0-9]+\)" 5; }

# The setup screen, its list scrolled, its settings, their dialogs, the help
visit_setup() {
    keys End
    wait_for '> tabnet-regression ' 3
    fits "the preset list scrolled to its end"
    if [ "$W" -eq 80 ]; then
        expect "${size}: the scrolled list says what it hides" "(▲|\^) [0-9]+ more \(Up\)|(▲|\^) top \(Up\)" 2
    fi
    pick mnist-mlp-128
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
    field "Device" && set_to "cpu \+ gpu \(pre" Right
    fits "the settings, cpu + gpu predicted"
    field "Steps" && keys 4 0 Enter
    wait_for ">Steps +40" 3
    field "Data folder"
    fits "the Data folder's hint"
    keys Space
    wait_for "Folder: " 3
    fits "the data-folder dialog"
    keys Escape
    i=0
    while [ $i -lt 20 ]; do keys Down; i=$((i + 1)); done
    wait_for ">Measure PyTorch" 3
    fits "the settings scrolled to the last"
    keys '?'
    wait_for "any other key closes|Help" 3
    fits "the help on the setup screen"
    keys End
    wait_for "(▲|\^) top \(PgUp\)|graph\); at the end" 3
    fits "the help scrolled to its end"
    keys Escape
    keys s
    wait_for "Name: " 3
    fits "the save dialog"
    i=0
    while [ $i -lt 30 ]; do keys BSpace; i=$((i + 1)); done
    keys m n i s t - m l p - 1 2 8 Enter
    wait_for "Hide the shipped preset" 3
    fits "the save dialog's question: a shipped preset's name"
    keys n Escape
    wait_for "Presets \([0-9]+\)" 3
}

# A race of ways beside a predicted GPU (a row a job: cpu, the framework's,
# the GPU's predicted ones), its Explain panel, its help, its export
visit_race_of_ways() {
    keys Enter
    expect "${size}: a race of ways runs" "cpu fw\* .*(step|done)" 30
    fits "the run screen, a race running"
    wait_for "gpu fw\* .*100% done" 30
    fits "the run screen, the race done"
    keys e
    wait_for "Explain \(e" 3
    fits "the Explain panel on the run screen"
    keys End
    sleep 0.3
    fits "the Explain panel scrolled to its end"
    keys e
    keys '?'
    wait_for "any other key closes|Help" 3
    fits "the help on the run screen"
    keys Escape
    keys x
    wait_for "exported " 5
    fits "the export's message"
    back_to_setup
}

# Two jobs at once (cpu and cpu-ref, the cores split): the reference is not
# calibrated, so the lab calibrates it first under its dialog; the cache's
# file is a folder here, so the result is kept in memory only and said
visit_calibration_race() {
    mkdir -p "$XDG_CACHE_HOME/nnlab/calibration-cpu-ref.txt"
    to_fields
    field "Device" && set_to "cpu \+ cpu-ref" Right
    field "Side by side" && set_to "race \(cores" Right
    keys Enter
    expect "${size}: the reference calibrates first" "Calibrating cpu-ref" 10
    wait_for "now: [a-z]" 5
    fits "the calibration dialog"
    expect "${size}: the calibration's result is said" "Calibrated, with a note|cpu-ref: calibration not cached" 30
    fits "the calibration's result"
    grep -q "Calibrated, with a note" "$tmp/screen" && keys Space   # the box: any key closes it
    expect "${size}: then both jobs race" "│cpu-ref +[^ ]+ +[0-9]+%" 30
    fits "the race running"
    i=0      # both rows done
    while [ "$(grep -c 'done│' "$tmp/screen")" -lt 2 ] && [ $i -lt 600 ]; do sleep 0.1; cap; i=$((i + 1)); done
    fits "the race done"
    back_to_setup
    to_fields
    field "Side by side" && set_to "one after" Left
}

# A sweep on the CPU beside the GPU predicted from its profile: its chart,
# legend, table and its Explain panel
visit_sweep() {
    to_fields
    field "Device" && set_to "cpu \+ gpu \(pre" Left
    field "Sweep from" && keys 1 6 Enter
    field "Sweep to" && keys 3 2 Enter
    field "Sweep steps" && keys 3 Enter
    wait_for "Sweep to +32" 3
    keys w
    expect "${size}: a sweep runs" "done: [0-9]+ of [0-9]+ points" 60
    fits "the sweep screen"
    grep_screen "${size}: the sweep shows the predicted GPU's series" "gpu [a-z]+\*"
    keys e
    wait_for "Explain" 3
    fits "the Explain panel on the sweep screen"
    keys e
    back_to_setup
}

# The Jacobian at val 20 beside a predicted GPU: its panel, its table and its
# lanes, whose GPU one counts rows of J, not training steps
visit_jacobian() {
    pick mlp-jacobian
    to_fields
    field "Device" && set_to "cpu \+ gpu \(pre" Right
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
}

opened=0
for size in ${NNLAB_FIT_SIZES:-80x24 200x50}; do
    W=${size%x*} H=${size#*x}
    T kill-server >/dev/null 2>&1
    opened=$((opened + 1))
    sock=$sock_base-$opened
    T -f "$tmp/tmux.conf" new-session -d -s lab -x "$W" -y "$H" "'$NNLAB'; exec sleep 300" ||
        { echo "1..0 # SKIP tmux cannot start"; exit 0; }
    wait_for "Presets \([0-9]+\)" 10 || { not_ok "${size}: the lab opens"; continue; }
    visit_setup
    visit_race_of_ways
    visit_calibration_race
    visit_sweep
    visit_jacobian
done
echo "1..$n"
[ "$failed" -eq 0 ]
