#!/bin/sh
# tests/tui_jacobian.sh - the lab with the Jacobian preset (issue 13), in a
# tmux session on its own socket: the preset is listed with val and Method
# fields (no training fields), its run shows rows of J done and the time,
# the predicted val sweep with a verdict per method, each method's FLOPs,
# and Explain names the waste and the methods that remove it; a method
# picked in the setup is the one the next run uses. Speaks TAP; skips
# without tmux.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}"
if ! command -v tmux >/dev/null 2>&1; then
    echo "1..0 # SKIP tmux not installed"
    exit 0
fi
n=0 failed=0
tmp=$(mktemp -d) || exit 99
sock=nnlab-jac-test-$$
T() { tmux -L "$sock" "$@"; }
sock_file="${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$sock"
trap 'T kill-server >/dev/null 2>&1; rm -f "$sock_file"; rm -rf "$tmp"' EXIT
XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="$tmp/cache"
export XDG_CONFIG_HOME XDG_CACHE_HOME

deadline=$(($(date +%s) + 150))
. "$top_srcdir/tests/tui-lib.sh"

# the sweep needs the CPU's calibration: measured once here, as the lab would
"$NNLAB" calibrate --device cpu >/dev/null 2>&1
T new-session -d -s lab -x 132 -y 40 "$NNLAB" || { echo "1..0 # SKIP tmux cannot start a session"; exit 0; }
expect "the preset is listed" "mlp-jacobian" 10
i=0
while ! grep -q '> mlp-jacobian ' "$tmp/screen" && [ $i -lt 12 ]; do keys Up; i=$((i + 1)); wait_for '> mlp-jacobian ' 1; done
expect "selected" "> mlp-jacobian " 2
expect "the setup names the task" "task   Jacobian by rows at val 100 " 5
expect "the batch field is val" "^│ val +100 " 2
expect "the method is a field" "^│ Method +rows " 2
if grep -q -E "^│ (Epochs|Steps|Learning rate) " "$tmp/screen"; then not_ok "no training fields"; else ok "no training fields"; fi
# a small val keeps the run short
keys Tab
i=0
while ! wait_for "^│>val " 1 && [ $i -lt 14 ]; do keys Down; i=$((i + 1)); done
keys 2 0 Enter
expect "val takes a typed value" "val set" 5
keys Enter
expect "Enter runs the Jacobian job" "Jacobian by rows at val 20" 60
expect "the run shows rows of J done and the time" "all 8.0k rows of J in [0-9.]+ s" 60
expect "the job row counts rows of J" "rows 8.0k/8.0k" 5
expect "the FLOPs and the passes" "FLOPs 2.71e\+09 in 8000 passes over 20 rows" 5
expect "the share on zeros per method" "95.0% on zeros" 5
expect "the predicted val sweep" "val sweep, seconds, predicted" 5
expect "the framework-eager line for the run's method" "rows as a framework runs it eagerly" 5
expect "the framework's verdict" "rows fw +(GPU overtakes CPU|CPU faster up to)" 5
if [ "$(grep -c -E "(GPU overtakes CPU at val [0-9]+|CPU faster up to val [0-9]+) \(predicted\)" "$tmp/screen")" -eq 5 ]; then
    ok "a verdict per method, and the framework's for the run's"
else
    not_ok "a verdict per method, and the framework's for the run's"
fi
expect "each method's FLOPs beside" "Methods: FLOPs" 5
# wide enough for Explain beside the panels; e toggles it
cap
grep -q "Explain" "$tmp/screen" || keys e
expect "Explain names the waste" "95% of these FLOPs multiply zeros" 5
expect "and the methods that remove it" "remove the waste" 5

# back in the setup, Right on Method picks the next one; the run uses it
keys Escape
expect "back to the setup" "^│ Method +rows " 10
i=0
while ! wait_for "^│>Method " 1 && [ $i -lt 14 ]; do keys Down; i=$((i + 1)); done
keys Right
expect "Right picks the next method" "^│>Method +batched " 2
keys Right
expect "and the next" "^│>Method +per-sample " 2
expect "the setup names the method picked" "task   Jacobian by per-sample at val 20 " 2
keys Enter
expect "the run uses the method picked" "Jacobian by per-sample at val 20" 60
expect "per-sample's passes: one per output" "in 400 passes over 20 rows" 60
keys q
echo "1..$n"
[ "$failed" -eq 0 ]
