# tests/tui-lib.sh - the TAP helpers of the lab's tmux tests (tests/tui*.sh),
# sourced by them first. tui_begin sets up what every such test starts from:
# n=0 failed=0, $tmp, T (tmux on the test's own socket, the lab in session
# "lab"), $deadline (when the whole script gives up, so that a lab that died
# early fails fast instead of waiting out every step), private XDG folders
# and $tmp/tmux.conf.

# tui_begin NAME SECONDS: skips the whole test (TAP "1..0 # SKIP") without
# tmux; else the state above, on the socket nnlab-NAME-PID. A test that opens
# each lab on a server of its own sets sock to "$sock_base-K": the trap
# removes those sockets too.
tui_begin() {
    if ! command -v tmux >/dev/null 2>&1; then
        echo "1..0 # SKIP tmux not installed"
        exit 0
    fi
    n=0 failed=0
    tmp=$(mktemp -d) || exit 99
    sock_base=nnlab-$1-$$
    sock=$sock_base
    sock_dir="${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)"
    # the server's socket files: removed with the server, whatever state it is in
    trap 'T kill-server >/dev/null 2>&1; rm -f "$sock_dir/$sock_base" "$sock_dir/$sock_base"-*; rm -rf "$tmp"' EXIT
    # an empty cache (the first run calibrates the CPU); exports (x) go to
    # $XDG_DATA_HOME/nnlab/exports
    XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="$tmp/cache" XDG_DATA_HOME="$tmp/data"
    export XDG_CONFIG_HOME XDG_CACHE_HOME XDG_DATA_HOME
    deadline=$(($(date +%s) + $2))
    printf 'set -g default-terminal screen\nset -g status off\nset -g escape-time 0\n' >"$tmp/tmux.conf"
}
T() { tmux -L "$sock" "$@"; }
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
# wait_whole TEXT [SECONDS]: polls until TEXT (fixed) shows with the screen's
# rows joined, borders and blanks dropped (a path drawn a row at a time)
wait_whole() {
    end=$(($(date +%s) + ${2:-10}))
    [ "$end" -gt "$deadline" ] && end=$deadline
    while :; do
        cap
        tr -d '\n│ ' <"$tmp/screen" | grep -q -F -e "$1" && return 0
        [ "$(date +%s)" -ge "$end" ] && return 1
        sleep 0.1
    done
}
# expect NAME PATTERN [SECONDS]
expect() { if wait_for "$2" "$3"; then ok "$1"; else echo "# waited for: $2"; not_ok "$1"; fi; }
keys() { T send-keys -t lab "$@"; }
# grep_screen NAME PATTERN: a check that PATTERN (grep -E) is on screen,
# polled for up to 3 s: tmux can catch a frame half drawn (a box's title
# before its rows), so a one-shot look right after another wait can miss
# rows that are a moment away. Checks of absence grep the screen directly.
grep_screen() { if wait_for "$2" 3; then ok "$1"; else echo "# no: $2"; not_ok "$1"; fi; }
# focused: the focused setting's row, up to its border ("│>Steps   40 ")
focused() { grep -o '│>[A-Za-z][^│]*' "$tmp/screen" | head -n 1; }
# until_moved ROW KEY: sends KEY and waits (up to 2 s) until what the function
# ROW reads off the screen changes, so that the next look sees the key's
# effect, not the screen before it
until_moved() {
    cap
    before=$($1)
    keys "$2"
    end=$(($(date +%s) + 2))
    while cap && [ "$($1)" = "$before" ] && [ "$(date +%s)" -lt "$end" ]; do sleep 0.05; done
}
# press KEY: KEY, then the focused setting's row changes
press() { until_moved focused "$1"; }
# selected: the preset list's selected row ("│> mnist-mlp-128")
selected() { grep -o '│> [^ │]*' "$tmp/screen" | head -n 1; }
# step_list KEY: KEY, then the selected preset changes: each preset passed
# costs a redraw, not a timeout (waiting for the name after every key cost
# the full wait at each preset that was not it)
step_list() { until_moved selected "$1"; }
# select_preset NAME [KEY]: moves the preset list (KEY: Down, the default, or
# Up) until NAME is selected; 1 when it never is
select_preset() {
    i=0
    cap
    while ! grep -q "> $1 " "$tmp/screen" && [ $i -lt 12 ]; do
        step_list "${2:-Down}"; i=$((i + 1))
    done
    wait_for "> $1 " 1
}
# field NAME: moves the focus down the settings to the field NAME (the list
# scrolls to keep the focused field on screen); 1 when it is not there
field() {
    i=0
    while [ $i -lt 20 ]; do      # more than the settings' fields
        cap
        grep -q -E -e ">$1 " "$tmp/screen" && return 0
        press Down
        i=$((i + 1))
    done
    return 1
}
# focus_field LABEL: moves the focus into the settings (Tab, from the preset
# list), then down to the field LABEL, each key waiting for the focus to move
# (press), not for LABEL; 1 when it is not there
focus_field() {
    cap
    grep -q '^│>[A-Za-z]' "$tmp/screen" || { keys Tab; wait_for '^│>[A-Za-z]' 2; }
    i=0
    while [ $i -lt 20 ]; do      # more than the settings' fields
        grep -q "^│>$1 " "$tmp/screen" && return 0
        press Down
        i=$((i + 1))
    done
    wait_for "^│>$1 " 1
}
# set_to PATTERN KEY: presses KEY (Left or Right) on the focused setting until
# its row matches PATTERN (grep -E); 1 when it never does
set_to() {
    i=0
    while [ $i -lt 8 ]; do       # more than any setting's values
        cap
        focused | grep -q -E -e "$1" && return 0
        press "$2"
        i=$((i + 1))
    done
    return 1
}

# The lab writes every text it had to cut to $NNLAB_CUT_LOG (ui/draw.c's
# ui_put: what it kept, what it lost). cut_log_start sets it up; new_cuts
# puts the lines written since its last call, the cuts of the screen just
# checked, in $tmp/cut-now.
cut_log_start() {
    export NNLAB_CUT_LOG="$tmp/cuts"
    : >"$NNLAB_CUT_LOG"
    seen=0
}
new_cuts() {
    total=$(wc -l <"$NNLAB_CUT_LOG")
    tail -n "+$((seen + 1))" "$NNLAB_CUT_LOG" | head -n "$((total - seen))" >"$tmp/cut-now"
    seen=$total
}
