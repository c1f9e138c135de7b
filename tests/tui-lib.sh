# tests/tui-lib.sh - the TAP helpers of the lab's tmux tests (tests/tui.sh,
# tests/tui_jacobian.sh), sourced by them. The caller sets n=0 failed=0,
# $tmp, T (tmux on the test's own socket, the lab in session "lab") and
# $deadline (when the whole script gives up, so that a lab that died early
# fails fast instead of waiting out every step).
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
    n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
    sed 's/^/# /' "$tmp/screen" 2>/dev/null
}
cap() { T capture-pane -p -t lab >"$tmp/screen" 2>/dev/null; }
# wait_for PATTERN [SECONDS]: polls the screen until PATTERN (grep -E) shows
wait_for() {
    end=$(($(date +%s) + ${2:-10}))
    [ "$end" -gt "$deadline" ] && end=$deadline
    while :; do
        cap
        grep -q -E -e "$1" "$tmp/screen" && return 0
        [ "$(date +%s)" -ge "$end" ] && return 1
        sleep 0.1
    done
}
# expect NAME PATTERN [SECONDS]
expect() { if wait_for "$2" "$3"; then ok "$1"; else echo "# waited for: $2"; not_ok "$1"; fi; }
keys() { T send-keys -t lab "$@"; }
# field NAME: moves the focus down the settings to the field NAME (the list
# scrolls to keep the focused field on screen); 1 when it is not there
field() {
    i=0
    while [ $i -lt 20 ]; do      # more than the settings' fields
        wait_for ">$1 " 1 && return 0
        keys Down
        i=$((i + 1))
    done
    return 1
}
