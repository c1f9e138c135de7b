#!/bin/sh
# tests/tui_pytorch.sh - the lab's "Measure PyTorch" setting,
# through tmux: switched on, it names the PyTorch that will measure; the
# sweep then measures the framework way with it beside nnlab's own points,
# its column unstarred (measured) and its source said; a race against a
# predicted GPU measures the CPU's framework lane with it once its job has
# ended, and the write-ups' verdict rests on that figure. PyTorch is the
# stand-in helper (tests/fixtures/torch-helper-stub.py: a 123.5 us step, no
# torch needed). Speaks TAP.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}"
. "$top_srcdir/tests/tui-lib.sh"
python=$(command -v python3 || true)
if [ -z "$python" ]; then
    echo "1..0 # SKIP no python3 for the stand-in helper"
    exit 0
fi
tui_begin pytorch 240

stub="$top_srcdir/tests/fixtures/torch-helper-stub.py"
T -f "$tmp/tmux.conf" new-session -d -s lab -x 200 -y 40 \
    "NNLAB_PYTHON='$python' NNLAB_TORCH_HELPER='$stub' NNLAB_TORCH_STUB_PARAMS=101770 '$NNLAB'; exec sleep 300" ||
    { echo "1..0 # SKIP tmux cannot start"; exit 0; }
wait_for "Presets \([0-9]+\)" 10 || { echo "1..0 # SKIP the lab does not open in tmux"; exit 0; }
select_preset mnist-mlp-128
wait_for "cpu +(unavailable|available)" 10
keys Tab
wait_for ">Device" 3
expect_field() { if field "$2"; then ok "$1"; else not_ok "$1"; fi; }

expect_field "the setting is there, after the sweep's" "Measure PyTorch"
expect "off at first: the framework way predicted only" ">Measure PyTorch +\[ \] off: predicted" 3
keys Right
expect "on: names the PyTorch that measures" ">Measure PyTorch +\[x\] PyTorch 9\.9: races, sweeps" 10
field "Sweep from" && keys 1 6 Enter
field "Sweep to" && keys 3 2 Enter
field "Sweep steps" && keys 2 Enter
expect "a small sweep" "Sweep to +32" 5
keys w
expect "the sweep runs to its end" "done: [0-9]+ of [0-9]+ points" 90
expect "PyTorch's curve, measured (no star)" "━+ cpu fw ─" 5
expect "its source said" "fw without \*: measured with" 5
expect "its points: 16 and 32 at the stand-in's 123.5 us" "│ +32 .* 259\.1k" 5
keys Escape

# a race against a predicted GPU: nnlab's CPU job, then PyTorch's step on the CPU
field "Device"
i=0
while ! wait_for ">Device +gpu \(predicted\)" 1 && [ $i -lt 6 ]; do keys Right; i=$((i + 1)); done
field "Steps" && keys 3 0 Enter
wait_for ">Steps +30" 3
keys Enter
expect "the race's job ends, then PyTorch measures the CPU's framework lane" \
    "PyTorch 9\.9 measures the framework way on cpu|cpu framework: 124 us a step" 60
expect "the lane says it was measured with PyTorch" "cpu framework: 124 us a step, measured with PyTorch 9\.9" 30
expect "the write-ups' verdict rests on it: its CPU lane unstarred (measured)" "│ cpu fw 124 us/step" 10
expect "... under the framework's verdict" "│ GPU [0-9.]+x slower" 2
if grep -q "cpu fw\*" "$tmp/screen"; then not_ok "no predicted bar left for the measured lane"
else ok "no predicted bar left for the measured lane"; fi
keys Escape
wait_for ">Device" 5
field "Measure PyTorch"
keys Right
expect "off again" ">Measure PyTorch +\[ \] off: predicted" 5
echo "1..$n"
exit $((failed > 0))
