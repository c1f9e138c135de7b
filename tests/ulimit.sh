#!/bin/sh
# tests/ulimit.sh - under any address-space limit (ulimit -v from 40 to 400
# MB), `nnlab --version`, a short `train`, `presets` and the lab each end by
# themselves within 5 s, with success or one line saying what they needed.
# They used to hang from about 55 to 180 MB, --version included: OpenBLAS's
# pool, started as the library loads, spun on a buffer that never fit, and
# exit() waited for it. Speaks TAP.
#
# `make check` sets OPENBLAS_NUM_THREADS=1, which hides exactly that: the
# commands here run without it, as a user's would. At 40 MB the dynamic
# loader itself cannot map the libraries: its own one line (no code of
# nnlab's runs) is taken as the line. A sanitizer's build cannot start under
# such a limit (its shadow memory): everything skips there.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}"
n=0 failed=0
tmp=$(mktemp -d) || exit 99
sock=nnlab-ulimit-$$
trap 'tmux -L "$sock" kill-server >/dev/null 2>&1; rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/cli-lib.sh"
XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="$tmp/cache" XDG_DATA_HOME="$tmp/data"
export XDG_CONFIG_HOME XDG_CACHE_HOME XDG_DATA_HOME
unset OPENBLAS_NUM_THREADS

limits="40 55 80 120 180 260 400"
if ! (ulimit -v 700000 && exec "$NNLAB" --help) >/dev/null 2>&1; then
    echo "1..0 # SKIP cannot run under ulimit -v (a sanitizer's build)"
    exit 0
fi

# What a command that did not succeed may say: nnlab's own "needs" line, or
# the loader's when the libraries do not fit.
said_need='^nnlab: .*needs|error while loading shared libraries: .*(failed to map|cannot allocate)'

# within NAME MB COMMAND...: runs it under ulimit -v MB, killed after 10 s;
# it must end within 5 s with 0, or with one line on stderr saying its need.
within() {
    name=$1 mb=$2; shift 2
    start=$(date +%s%N)
    (ulimit -v $((mb * 1000)) && exec timeout -s KILL 10 "$@") >"$tmp/out" 2>"$tmp/err"
    got=$? ms=$((($(date +%s%N) - start) / 1000000))
    if [ "$ms" -gt 5000 ]; then
        echo "# exit $got after $ms ms"; not_ok "$mb MB: $name ends within 5 s"; return
    fi
    if [ "$got" -eq 0 ]; then ok "$mb MB: $name succeeds ($ms ms)"
    elif [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -E "$said_need" "$tmp/err"; then
        ok "$mb MB: $name says what it needs ($ms ms, exit $got)"
    else echo "# exit $got after $ms ms"; not_ok "$mb MB: $name: success or one line saying what it needs"; fi
}

# lab MB: the lab under ulimit -v MB in tmux: it opens (then q quits it) or
# refuses; either way it ends within 5 s, with 0 or one line saying its need.
lab() {
    mb=$1
    rm -f "$tmp/rc" "$tmp/err"
    tmux -L "$sock" new-session -d -s lab -x 100 -y 30 \
        "sh -c 'ulimit -v $((mb * 1000)) && exec \"\$0\" 2>\"\$1\"' '$NNLAB' '$tmp/err'; echo \$? >'$tmp/rc'; exec sleep 60" ||
        { ok "$mb MB: the lab # SKIP tmux cannot start"; return; }
    start=$(date +%s%N) opened=0
    while [ ! -f "$tmp/rc" ] && [ $(($(date +%s%N) - start)) -lt 5000000000 ]; do
        if tmux -L "$sock" capture-pane -p -t lab 2>/dev/null | grep -q "Presets ("; then opened=1; break; fi
        sleep 0.1
    done
    [ "$opened" -eq 1 ] && tmux -L "$sock" send-keys -t lab q
    start=$(date +%s%N)
    while [ ! -f "$tmp/rc" ] && [ $(($(date +%s%N) - start)) -lt 5000000000 ]; do sleep 0.1; done
    ms=$((($(date +%s%N) - start) / 1000000))
    got=$(cat "$tmp/rc" 2>/dev/null)
    tmux -L "$sock" kill-server >/dev/null 2>&1
    if [ -z "$got" ]; then echo "# opened $opened, still running $ms ms after"; not_ok "$mb MB: the lab ends within 5 s"
    elif [ "$got" -eq 0 ] && [ "$opened" -eq 1 ]; then ok "$mb MB: the lab opens, q ends it ($ms ms)"
    elif [ "$got" -ne 0 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -E "$said_need" "$tmp/err"; then
        ok "$mb MB: the lab says what it needs (exit $got)"
    else echo "# exit $got, opened $opened"; not_ok "$mb MB: the lab: opens, or one line saying what it needs"; fi
}

have_tmux=0
command -v tmux >/dev/null 2>&1 && have_tmux=1
for mb in $limits; do
    within "--version" "$mb" "$NNLAB" --version
    within "train" "$mb" "$NNLAB" train --preset "$top_srcdir/tests/fixtures/graph-net.ini" --steps 3 --threads 1
    within "presets" "$mb" "$NNLAB" presets
    if [ "$have_tmux" -eq 1 ]; then lab "$mb"; else ok "$mb MB: the lab # SKIP tmux not installed"; fi
done
# Not only the commands' last words: the version is printed whole where it runs
within "--version prints" 120 "$NNLAB" --version
grep_ok "120 MB: --version prints the version" "$tmp/out" "^nnlab "

echo "1..$n"
[ "$failed" -eq 0 ]
