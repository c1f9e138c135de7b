#!/bin/sh
# tests/tui_data_dir.sh - the lab's Data folder, through
# tmux at 80x24: typed in a box of its own (letters would be the screen's
# keys), a folder that is not there refused naming it, an empty one taken and
# then the job's loader naming the file it misses, and the folder saved with
# the preset ([data] dir); and an unavailable device's reason whole at
# 80x24. Speaks TAP.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}"
. "$top_srcdir/tests/tui-lib.sh"
tui_begin datadir 180
mkdir -p "$tmp/cifar"

T -f "$tmp/tmux.conf" new-session -d -s lab -x 80 -y 24 "'$NNLAB'; exec sleep 300" ||
    { echo "1..0 # SKIP tmux cannot start"; exit 0; }
wait_for "Presets \([0-9]+\)" 10 || { echo "1..0 # SKIP the lab does not open in tmux"; exit 0; }
keys Home
select_preset lenet-cifar10
wait_for "cpu +(unavailable|available)" 10
if grep -q -E "gpu +unavailable" "$tmp/screen"; then
    if grep -q '\.\.\.│$' "$tmp/screen"
    then not_ok "80x24: an unavailable device's reason whole, not cut"
    else ok "80x24: an unavailable device's reason whole, not cut"; fi
else
    ok "80x24: an unavailable device's reason whole # SKIP every device is available"
fi
keys Tab
wait_for ">Device" 3
if field "Data folder"; then ok "a Data folder field for a CIFAR-10 preset"; else not_ok "a Data folder field for a CIFAR-10 preset"; fi
expect "its default said" ">Data folder +(\(default: Space to type one\)|default: Space sets)" 3
keys Space
expect "Space opens a box to type it in" "Folder: _" 3
keys -l "$tmp/nowhere"
keys Enter
expect "a folder that is not there: refused, naming it" "Data folder .*nowhere: No such file" 5
keys C-u Escape
wait_for ">Data folder" 3
keys Space
wait_for "Folder: _" 3
keys -l "$tmp/cifar"
keys Enter
expect "a folder that is there is taken" "Data folder set" 5
# (at 80 columns a long folder loses directories from its head: ".../cifar")
expect "the field shows it" ">Data folder +(/|…/|\.\.\./)" 3
keys s
wait_for "Name: lenet-cifar10-mine_" 5     # a shipped preset's name is not offered
keys BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace
keys -l "mine"
keys Enter
wait_for "saved " 5
f="$XDG_CONFIG_HOME/nnlab/presets/lenet-mine.ini"
if [ -f "$f" ] && grep -q "^dir = \"$tmp/cifar\"" "$f"; then ok "saved with the preset: [data] dir"
else echo "# $(cat "$f" 2>/dev/null | grep -n dir)"; not_ok "saved with the preset: [data] dir"; fi
keys Enter
expect "the job's loader names the file it misses" "data_batch_1\.bin" 20
echo "1..$n"
exit $((failed > 0))
