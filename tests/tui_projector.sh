#!/bin/sh
# tests/tui_projector.sh - the lab at a projector's 80x24 and at 200x50,
# in a tmux session on its own socket: every panel that overflows says so
# on its edge and scrolls to its last line (the help, a training run's
# Explain panel, a Jacobian run's panels, tabnet's layer list), no
# conclusion is cut ("..." or mid-word), a figure keeps its unit (ms/step),
# the status keys are whole; at 200x50 the layer list and the help fit
# whole, and a smoothed race's legend names both jobs. Speaks TAP; skips
# without tmux.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}"
. "$top_srcdir/tests/tui-lib.sh"
tui_begin proj-test 300

# select NAME: moves the preset list to NAME (the focus on the list first).
# A second try: right after a resize the screen read to find the focus may
# not be redrawn yet (the ASan build's CI run moved the settings, not the
# list), and then the focus is looked for again on the redrawn screen.
select_preset() {
    for try in 1 2; do
        cap
        grep -q '^│>[A-Za-z]' "$tmp/screen" && keys Tab
        keys Home
        wait_for "> [a-z]" 2             # 2 s: a sanitizer build redraws slowly
        i=0
        while [ $i -lt 12 ]; do
            grep -q "> $1 " "$tmp/screen" && return 0
            step_list Down               # tui-lib.sh: waits for the selection to move
            i=$((i + 1))
        done
        wait_for "> $1 " 2 && return 0
    done
    return 1
}
# page_to_end KEY MARKER: presses KEY until MARKER ("more (PgDn)") is gone
page_to_end() {
    i=0
    while cap && grep -q -F "$2" "$tmp/screen" && [ $i -lt 30 ]; do keys "$1"; sleep 0.2; i=$((i + 1)); done
    ! grep -q -F "$2" "$tmp/screen"
}
# no_cut NAME ROWS: no row in ROWS (sed range) ends a sentence in "..." 
no_cut() {
    if sed -n "$2p" "$tmp/screen" | grep -q '\.\.\.[│ ]*$'; then not_ok "$1"; else ok "$1"; fi
}
# both calibrations once, as a first run would measure them
"$NNLAB" calibrate --device cpu >/dev/null 2>&1
"$NNLAB" calibrate --device cpu-ref >/dev/null 2>&1
T -f "$tmp/tmux.conf" new-session -d -s lab -x 80 -y 24 \
    "'$NNLAB'; echo \"nnlab exited with status \$?\"; exec sleep 300" || { echo "1..0 # SKIP tmux cannot start"; exit 0; }
expect "80x24: the setup screen" "Presets \([0-9]+\)"

# --- the help ----------------------------------------------------------------------
keys '?'
marker="[▼v] [0-9]+ more \(PgDn\)"
expect "80x24: the help says there is more" "$marker" 5
if grep -q "Batch sweep" "$tmp/screen"; then not_ok "80x24: the help's last section is below"; else ok "80x24: the help's last section is below"; fi
keys End
expect "End reaches the help's last section" "│ *│Batch sweep" 5
expect "and its last line" "x +export CSV \+ JSON +Enter Esc +back to setup" 5
expect "the edge says it is the end" "top \(PgUp\)" 5
keys Home
expect "Home goes back to its top" "│ *│Everywhere" 5
keys x
i=0
while wait_for "any other key closes" 0 && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
if grep -q "any other key closes" "$tmp/screen"; then not_ok "another key closes the help"; else ok "another key closes the help"; fi

# --- tabnet's layer list -----------------------------------------------------------
select_preset tabnet-regression
expect "80x24: tabnet's details say there is more" "more \(\]\)" 5
if page_to_end ']' 'more (])'; then ok "] pages to the end of tabnet's layers"; else not_ok "] pages to the end of tabnet's layers"; fi
expect "the list's last line, its total, is shown" "│total +[0-9.]+[kM]? +[0-9.]+[kM]? *│" 5
expect "the edge says it is the end" "top \(\[\)" 5
keys '['
keys '['
select_preset mnist-mlp-128
no_cut "80x24: the setup's details end no sentence in ..." "2,11"

# --- a training run: the job row, the status keys, Explain ----------------------------
focus_field "Steps" && keys 4 0 0 0 Enter
keys Enter
expect "80x24: the run starts" "running│|running\|" 30
expect "the job row keeps the unit of its step time" "[0-9]+(us|ms|s)/step +running" 20
if grep -q -E "[0-9][mu] +running" "$tmp/screen"; then not_ok "no unit cut (6m for 6ms/step)"; else ok "no unit cut (6m for 6ms/step)"; fi
expect "the status keys end whole" "\? help +q quit *$" 5
keys p
expect "paused" "paused│|paused\|" 10
keys e
expect "e shows Explain, saying there is more" "$marker" 10
expect "its first page: the conclusion, why and advice" "^│advice: " 5
no_cut "no Explain row ends in ..." "2,13"
keys End
expect "End reaches Explain's last line" "top \(PgUp\)" 5
expect "a detail is there" "(ops a step|work: FLOPs|calibration: )" 5
no_cut "no Explain row ends in ... at its end" "2,13"
keys Home
expect "Home: Explain's head again" "│cpu, batch 32: " 5
keys c
expect "cancelled" "cancelled│|cancelled\|" 15
keys Escape
expect "back to setup" "Presets \([0-9]+\)" 10
focus_field "Steps" && keys 0 Enter

# --- a small sweep: its conclusion whole ------------------------------------------------
focus_field "Sweep from" && keys 1 6 Enter
focus_field "Sweep to" && keys 3 2 Enter
focus_field "Sweep steps" && keys 3 Enter
keys w
expect "80x24: the sweep finishes" "done: 2 of 2 points" 60
expect "its conclusion" "(overtake|is faster at every batch)" 5
no_cut "80x24: the sweep's conclusion is not cut" "1,24"
if grep -q -E "[^ ]gpu\*?/cpu" "$tmp/screen"; then not_ok "the ratio's header stands apart"; else ok "the ratio's header stands apart"; fi
keys Escape
expect "back to setup after the sweep" "Presets \([0-9]+\)" 10

# --- a Jacobian run at 80x24 -----------------------------------------------------------
select_preset mlp-jacobian
focus_field "val" && keys 2 0 Enter
keys Enter
expect "80x24: the Jacobian run starts" "Jacobian by rows at val 20" 60
cap
grep -q "Explain (e: back" "$tmp/screen" && keys e   # its main panel, not Explain
expect "80x24: the Jacobian run ends" "all 8.0k rows of J in [0-9.]+ s" 60
expect "its job row ends whole" "rows 8.0k/8.0k .* rows/s .* done│" 5
expect "its panel says there is more" "$marker" 5
keys End
expect "End reaches its last verdict" "top \(PgUp\)" 5
expect "a verdict is there" "(GPU overtakes CPU at val [0-9]+|CPU faster up to val [0-9]+) \(predicted\)" 5
no_cut "no Jacobian row ends in ..." "2,14"
keys e
expect "e: its Explain" "Explain \(e: back\)" 5
cap
if grep -q -E "$marker" "$tmp/screen"; then keys End; wait_for "top \(PgUp\)" 5; fi
expect "Explain's last words: the methods that remove the waste" "remove the waste" 5
no_cut "no Explain row ends in ..." "2,14"
keys Escape
expect "back to setup after the Jacobian run" "Presets \([0-9]+\)" 10

# --- 200x50 ---------------------------------------------------------------------------
T resize-window -t lab -x 200 -y 50
select_preset tabnet-regression
expect "200x50: tabnet's layers" "│ +1  batchnorm 84 " 10
if page_to_end ']' 'more (])'; then ok "200x50: ] pages to the end of tabnet's layers"; else not_ok "200x50: ] pages to the end of tabnet's layers"; fi
expect "its total is shown" "│ +total +[0-9.]+[kM]? +[0-9.]+[kM]? *│" 5
expect "with its last layer, numbered" "│ +[0-9][0-9]  linear [0-9]+->1 " 5
keys '?'
expect "200x50: the help" "Keys \(PgDn scrolls" 5
if grep -q -E "$marker" "$tmp/screen"; then not_ok "200x50: the help fits whole"; else ok "200x50: the help fits whole"; fi
keys x
select_preset mnist-mlp-128
focus_field "Steps" && keys 3 0 0 Enter
focus_field "Device" && keys Right Right Right Right
expect "cpu and cpu-ref side by side" ">Device +cpu \+ cpu-ref" 5
focus_field "Side by side" && keys Right
keys Enter
expect "200x50: the race runs" "RACE" 60
keys s
expect "smoothed, said on the bottom edge" "seconds of training, smoothed" 5
if grep -E "(─|-) loss" "$tmp/screen" | grep -q "cpu-ref val"; then ok "the smoothed legend names cpu-ref"; else not_ok "the smoothed legend names cpu-ref"; fi
keys q
expect "q asks" "Quit and cancel it\?|nnlab exited" 5
keys y
expect "the lab ends" "nnlab exited with status 0" 20
echo "1..$n"
[ "$failed" -eq 0 ]
