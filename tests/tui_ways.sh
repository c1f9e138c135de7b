#!/bin/sh
# tests/tui_ways.sh - the lab's race of ways at 80x24 without a GPU, through
# tmux: with a recorded CPU calibration installed as this machine's (dev7's:
# one thread of the 2-core Zen 5, measured beside PyTorch; tests/cal_install:
# a busy machine cannot flip a verdict), each preset at
# its write-up's batch races nnlab's CPU step against the GPU and the
# framework way predicted, and its summary answers the write-up's question
# first, as a framework runs it: lenet-cifar10, lenet5-cifar10 and
# mnist-mlp-128 the GPU slower, mnist-mlp-1000, conv1d-regression and
# tabnet-regression faster; then nnlab's own pair (the T4, and the GeForce
# 940M on the MLP its write-up ran on), each verdict the CLI's for the same
# job; and the lab's sweep names the framework crossover the CLI's does.
# Speaks TAP.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}" "${top_builddir:=.}"
. "$top_srcdir/tests/tui-lib.sh"
tui_begin ways 420
# the framework way predicted on both sides: a python3 with torch here would measure it
# in the CLI's race (tests/tui_pytorch.sh covers the lab's measured lanes)
export NNLAB_PYTHON=/nonexistent
"$top_builddir/tests/cal_install" calibration-cpu-dev7.txt || { echo "1..0 # SKIP the fixture does not install"; exit 0; }

# race PRESET PROFILE: a fresh lab at 80x24, PRESET at its own batch, 40
# steps, the GPU predicted (PROFILE 940: the GeForce 940M; else T4), Enter;
# 1 when the lab does not get there
opened=0
race() {
    T kill-server >/dev/null 2>&1
    opened=$((opened + 1))
    sock=$sock_base-$opened
    T -f "$tmp/tmux.conf" new-session -d -s lab -x 80 -y 24 "'$NNLAB'; exec sleep 300" || return 1
    wait_for "Presets \([0-9]+\)" 10 || return 1
    select_preset "$1" Up || select_preset "$1"
    wait_for "gpu +(unavailable|available)" 10
    keys Tab
    wait_for ">Device" 3 || return 1
    i=0
    while ! wait_for ">Device +gpu \(predicted\)" 1 && [ $i -lt 6 ]; do keys Right; i=$((i + 1)); done
    field "Steps" && keys 4 0 Enter
    wait_for ">Steps +40" 3 || return 1
    if [ "$2" = 940 ]; then
        field "GPU profile"
        j=0
        while ! wait_for ">GPU profile +GeForce 940M" 1 && [ $j -lt 10 ]; do keys Right; j=$((j + 1)); done
        grep -q -E ">GPU profile +GeForce 940M" "$tmp/screen" || return 1
    fi
    keys Enter
}

# the CLI's test (tests/cli_ways.sh) runs all six presets with both profiles;
# here one of each kind, the GeForce 940M on the MLP its write-up ran on
for run in lenet-cifar10:slower:4:0 mnist-mlp-1000:faster:32:0 conv1d-regression:faster:1024:0 \
    mnist-mlp-128:slower:32:940; do
    IFS=: read -r preset dir batch prof <<EOT
$run
EOT
    name="$preset ($([ "$prof" = 940 ] && echo "GeForce 940M" || echo T4))"
    race "$preset" "$prof" || { not_ok "$name: the race starts"; continue; }
    ok "$name: the race starts"
    expect "$name: nnlab's CPU step races the predicted lanes" "cpu fw\* .*(step|done)" 10
    expect "$name: at its end, as a framework runs it: the GPU $dir" "│ GPU [0-9.]+x $dir +│" 60
    expect "$name: the framework verdict comes first" "│As a framework runs it: " 2
    expect "$name: nnlab's own pair after it" "│nnlab's own code: " 2
    expect "$name: at the write-up's batch" "batch $batch" 2
    # the same verdict as the CLI's for the same preset, batch, profile and calibration
    # (the framework pair's verdict, "GPU 1.49x slower"; a "too close to call" compared too)
    lab_ratio=$(grep -A1 "│As a framework runs it: " "$tmp/screen" | tail -n 1 |
        grep -o -E "GPU [0-9.]+x (slower|faster)|too close to call" | sed 's/^GPU //')
    profile_arg=t4
    [ "$prof" = 940 ] && profile_arg=geforce-940m
    "$NNLAB" train -p "$preset" --race-predicted --steps 3 --no-validation -q --gpu-profile "$profile_arg" \
        >/dev/null 2>"$tmp/cli"
    cli_ratio=$(grep "^as a framework runs it: " "$tmp/cli" |
        grep -o -E "the GPU is [0-9.]+x (slower|faster)|too close to call" | head -n 1 | sed 's/^the GPU is //')
    if [ -n "$lab_ratio" ] && [ "$lab_ratio" = "$cli_ratio" ]; then ok "$name: the CLI says the same ($cli_ratio)"
    else echo "# lab '$lab_ratio', CLI '$cli_ratio'"; not_ok "$name: the CLI says the same"; fi
done

# --- the sweep: the lab's framework crossover in the CLI's words ---------------------------------
T kill-server >/dev/null 2>&1
opened=$((opened + 1))
sock=$sock_base-$opened
T -f "$tmp/tmux.conf" new-session -d -s lab -x 200 -y 50 "'$NNLAB'; exec sleep 300"   # its words on one row
wait_for "Presets \([0-9]+\)" 10
select_preset mnist-mlp-128
keys Tab
field "Sweep from" && keys 1 6 Enter
field "Sweep to" && keys 2 5 6 Enter
field "Sweep steps" && keys 3 Enter
expect "the sweep range is set" "Sweep to +256" 5
keys w
expect "the lab's sweep ends" "done: [0-9]+ of [0-9]+ points" 120
lab_words=$(grep -o -E "framework: gpu fw\* (overtakes from batch [0-9]+ on|is faster at every batch|does not overtake)" "$tmp/screen" | head -n 1)
"$NNLAB" sweep -p mnist-mlp-128 --devices cpu,gpu --batches 16,32,64,128,256 --steps 3 --warmup 1 >"$tmp/sweep" 2>&1
cli_words=$(grep -o -E "^framework: gpu framework .*: (overtakes from batch [0-9]+ on|is faster at every batch|does not overtake)" "$tmp/sweep" |
    grep -o -E "(overtakes from batch [0-9]+ on|is faster at every batch|does not overtake)")
if [ -n "$cli_words" ] && [ "${lab_words#framework: gpu fw\* }" = "$cli_words" ]; then
    ok "the lab's sweep and the CLI's name the same framework crossover ($cli_words)"
else
    echo "# lab '$lab_words', CLI '$cli_words'"; not_ok "the lab's sweep and the CLI's name the same framework crossover"
fi
T kill-server >/dev/null 2>&1
echo "1..$n"
[ "$failed" -eq 0 ]
