#!/bin/sh
# tests/tui_slides.sh - the slides in the lab, through tmux: a
# GPU that is not here races the CPU as predicted (at 80x24 and 200x50
# every GPU figure says "predicted for"), the GPU profile picker, the
# session's earlier runs overlaid with `o`, `x` writing an SVG (parsed with
# python3's XML parser), and a learning rate of 1000 said in a banner while
# the validation table keeps its columns. Speaks TAP.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}"
. "$top_srcdir/tests/tui-lib.sh"
tui_begin slides 240

# open COLS ROWS: the lab in a fresh session of that size, mnist-mlp-128 chosen, focus on Device
opened=0
open_lab() {
    T kill-server >/dev/null 2>&1    # each lab on a server of its own: a dying one is not reused
    opened=$((opened + 1))
    sock=$sock_base-$opened
    T -f "$tmp/tmux.conf" new-session -d -s lab -x "$1" -y "$2" "'$NNLAB'; exec sleep 300" || return 1
    wait_for "Presets \([0-9]+\)" 10 || return 1
    select_preset mnist-mlp-128
    wait_for "gpu +(unavailable|available)" 10
    keys Tab
    wait_for ">Device" 3
}
# gpu_labelled NAME: every row of a predicted GPU lane says predicted for the profile
gpu_labelled() {
    if grep -E "gpu (graph|eager|fw)\* +[^ ]" "$tmp/screen" | grep -v -q "predicted for"; then
        echo "# a GPU lane without its label:"; not_ok "$1"
    elif grep -q -E "gpu graph\* .*(step|done) .*predicted for T4" "$tmp/screen"; then ok "$1"
    else echo "# no predicted GPU row"; not_ok "$1"; fi
}

open_lab 100 30 || { echo "1..0 # SKIP the lab does not open in tmux"; exit 0; }
if ! grep -q -E "gpu +unavailable: ." "$tmp/screen"; then
    echo "1..0 # SKIP a GPU is here: the predicted race is for machines without one"
    exit 0
fi

# --- the predicted race at 80x24 and at 200x50 ---------------------------------------------------
for size in "80 24" "200 50"; do
    set -- $size
    open_lab "$1" "$2"
    keys Right Right
    expect "$1x$2: gpu alone is offered as a predicted race" ">Device +gpu \(predicted\)" 5
    keys Enter
    expect "$1x$2: Enter starts the CPU against a predicted GPU" "gpu graph\* .*predicted for T4" 40
    wait_for "gpu graph\* .*done in .*predicted for T4" 10
    gpu_labelled "$1x$2: every GPU figure says predicted for T4"
    expect "$1x$2: the framework way races on both devices" "cpu fw\* .*(step|done).*" 3
    expect "$1x$2: ... on the GPU too" "gpu fw\* .*(step|done).*" 3
    expect "$1x$2: the row under them says nothing was measured" "\* predicted, not measured \(gpu: T4; cpu fw: this CPU's calibration\)" 3
    expect "$1x$2: the real CPU job trains beside it" "cpu nnlab .*(running|done)" 5
done

# --- the profile picker: the GeForce 940M of seed 003 --------------------------------------------
open_lab 200 50
field "GPU profile"
expect "the settings show the GPU profile, T4 by default" ">GPU profile +T4 \(predicts a GPU not here\)" 3
i=0
while ! grep -q -E ">GPU profile +GeForce 940M" "$tmp/screen" && [ $i -lt 10 ]; do keys Right; i=$((i + 1)); wait_for ">GPU profile +GeForce 940M" 1; done
expect "Right walks the profiles to the GeForce 940M" ">GPU profile +GeForce 940M" 2
mkdir -p "$XDG_CONFIG_HOME/nnlab/profiles"
sed 's/^name = .*/name = "Class GPU"/' "$top_srcdir/profiles/t4.ini" >"$XDG_CONFIG_HOME/nnlab/profiles/class-gpu.ini"
i=0
while ! grep -q -E ">GPU profile +Class GPU" "$tmp/screen" && [ $i -lt 10 ]; do keys Right; i=$((i + 1)); wait_for ">GPU profile +Class GPU" 1; done
expect "the user's own profiles are offered too" ">GPU profile +Class GPU, yours" 2
i=0
while ! grep -q -E ">GPU profile +GeForce 940M" "$tmp/screen" && [ $i -lt 10 ]; do keys Left; i=$((i + 1)); wait_for ">GPU profile +GeForce 940M" 1; done
field "Device"
keys Right Right Enter
expect "the race is predicted for the profile picked" "gpu graph\* .*predicted for GeForce 940M" 40
keys Escape
wait_for "Cancel it and go back" 3 && keys y
wait_for "Presets \([0-9]+\)" 10

# --- earlier runs overlaid, and x writes the SVG ---------------------------------------------------
field "Device"
keys Left Left
field "Steps"
keys 3 0 0 Enter
wait_for ">Steps +300" 2
keys Enter
expect "a first run of 300 steps ends" "finished: Enter/Esc back" 30
keys Escape
wait_for "Presets \([0-9]+\)" 10
field "Batch size"
keys 6 4 Enter
wait_for ">Batch size +64" 2
keys Enter
expect "a second run ends" "finished: Enter/Esc back" 30
keys o
expect "o overlays the earlier runs" "[0-9]+ earlier runs? dimmed on the loss chart \(o hides\)" 3
expect "its legend names its settings (the preset is the same)" "cpu, batch 32, lr 0.001" 3
keys x
expect "x exports CSV, JSON and SVG" "exported .*\.\{csv,json,svg\}" 5
svg=$(ls "$XDG_DATA_HOME"/nnlab/exports/*.svg 2>/dev/null | head -n 1)
if [ -n "$svg" ] && python3 - "$svg" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
lines = [p for p in root.iter("{http://www.w3.org/2000/svg}polyline")]
past = [p for p in lines if p.get("class") == "curve past"]
now = [p for p in lines if p.get("class") == "curve"]
assert past and past[0].get("data-label") == "cpu, batch 32, lr 0.001", [p.get("data-label") for p in past]
assert now and len(now[0].get("points").split()) >= 2
title = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text") if t.get("class") == "title"]
assert title and "batch 64" in title[0], title
PY
then ok "the SVG holds the run and the earlier one, dimmed and labelled"; else not_ok "the SVG holds the run and the earlier one, dimmed and labelled"; fi
keys o
expect "o again hides them" "earlier runs hidden \(o shows\)" 3
keys Escape
wait_for "Presets \([0-9]+\)" 10

# --- a learning rate of 1000: a banner, and a table that keeps its columns -------------------------
field "Learning rate"
keys 1 0 0 0 Enter
wait_for ">Learning rate +1000" 2
keys Enter
expect "lr 1000: a banner says the loss blew up" "cpu: loss blowing up by step [0-9]+: [0-9.e+]+" 30
expect "lr 1000: and what to do, on a row of its own" "│lower the learning rate" 3
wait_for "finished: Enter/Esc back" 30
cap
if grep -E "^│ *1 " "$tmp/screen" | grep -q -E "[0-9.e+]{12,}"; then
    not_ok "the validation table keeps its columns"
else
    ok "the validation table keeps its columns"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
