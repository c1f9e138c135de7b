#!/bin/sh
# tests/tui_fit.sh - nothing cut at 80x24 or 200x50: the lab through tmux at
# both sizes, every screen visited (setup, its settings scrolled to the end,
# the Data folder's hint, a race of ways on the run screen, an export, a
# small sweep, the help, the save dialog), each screen checked by
# tests/screen_fit.py: no word cut at a panel's right border, no border
# overwritten, none of the strings the lab once cut
# (tests/fixtures/known-cuts.txt). Also: the preset list says what it
# hides, and a missing NVIDIA driver is one row. The recorded 2-core CPU
# calibration is installed (tests/cal_install): nothing calibrates. Speaks
# TAP; a check still failing on a cut not yet fixed is marked TODO.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}" "${top_builddir:=.}"
. "$top_srcdir/tests/tui-lib.sh"
tui_begin fit 300
command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP no python3"; exit 0; }
"$top_builddir/tests/cal_install" calibration-cpu-dev2.txt || { echo "1..0 # SKIP the fixture does not install"; exit 0; }
known="$top_srcdir/tests/fixtures/known-cuts.txt"

# fits WHAT [TODO]: the screen now has nothing cut (TODO: a known cut, not yet fixed)
fits() {
    cap
    if python3 "$top_srcdir/tests/screen_fit.py" "$W" "$tmp/screen" "$known" >"$tmp/found"; then
        ok "${W}x$H: $1"
    else
        n=$((n + 1))
        if [ -n "${2:-}" ]; then echo "not ok $n - ${W}x$H: $1 # TODO $2"
        else failed=$((failed + 1)); echo "not ok $n - ${W}x$H: $1"; sed 's/^/# /' "$tmp/screen"; fi
        sed 's/^/#   /' "$tmp/found"
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
    # not yet fixed: at 80 columns the settings' value column cuts "cpu + gpu (predicted)"
    device_cut=
    [ "$W" -eq 80 ] && device_cut="the Device value cpu + gpu (predicted) is cut at 80 columns"
    fits "the settings, cpu + gpu predicted" "$device_cut"
    field "Data folder"
    fits "the Data folder's hint" "$device_cut"
    field "Steps" && keys 4 0 Enter
    wait_for ">Steps +40" 3
    i=0
    while [ $i -lt 20 ]; do keys Down; i=$((i + 1)); done
    fits "the settings scrolled to the last" "$device_cut"
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
done
echo "1..$n"
[ "$failed" -eq 0 ]
