#!/bin/sh
# tests/setup-progress.sh - `./setup.sh run` says what it is doing while it
# builds: each step with the time so far, and make's lines condensed into
# "building N/M". setup.sh's functions are read alone and run against a
# make that only pretends (a shell function: nothing is built or installed).
# Speaks TAP.
: "${top_srcdir:=.}"
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$tmp/out"; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
grep_ok() { if grep -q -e "$3" "$2"; then ok "$1"; else echo "# no '$3'"; not_ok "$1"; fi; }

NNLAB_SETUP_FUNCTIONS_ONLY=1
. "$top_srcdir/setup.sh"
set +e
# the fake: -n lists what it would run (30 compiles and a link, as automake's
# silent rules print them), else it prints those lines, a warning, and exits
# $FAKE_MAKE_STATUS
make() {
    i=0
    case " $* " in
    *" -n "*)
        while [ $i -lt 30 ]; do echo "echo \"  CC      \" src/f$i.lo;gcc -c src/f$i.c"; i=$((i + 1)); done
        echo 'echo "  CCLD    " nnlab;gcc -o nnlab'
        return 0 ;;
    esac
    while [ $i -lt 30 ]; do echo "  CC       src/f$i.lo"; i=$((i + 1)); done
    echo "src/f3.c:1:1: warning: a warning the user must see"
    echo "  CCLD     nnlab"
    return "${FAKE_MAKE_STATUS:-0}"
}
configure_into() { :; }

(build_with_progress) >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then ok "a build that works: status 0"; else not_ok "a build that works: status 0 (got $rc)"; fi
grep_ok "the step configuring is said, with the time" "$tmp/out" "^setup.sh \[0:[0-9][0-9]\] configuring"
grep_ok "the files to build are counted before" "$tmp/out" "^setup.sh \[0:[0-9][0-9]\] building 31 files on [0-9]* cores"
grep_ok "make's lines condensed: N/M and the file" "$tmp/out" "^setup.sh \[0:[0-9][0-9]\] building [0-9]*/31  CC src/f[0-9]*\.lo$"
grep_ok "the last one reached" "$tmp/out" "building 31/31  CCLD nnlab"
progress=$(grep -c "building [0-9]*/31" "$tmp/out")
if [ "$progress" -ge 5 ] && [ "$progress" -le 11 ]; then ok "condensed: a line a tenth of the way ($progress)"
else not_ok "condensed: a line a tenth of the way ($progress)"; fi
if grep -q "^  CC " "$tmp/out"; then not_ok "no raw make line left"; else ok "no raw make line left"; fi
grep_ok "a warning still shows" "$tmp/out" "^src/f3.c:1:1: warning: a warning the user must see$"
grep_ok "the end is said" "$tmp/out" "^setup.sh \[0:[0-9][0-9]\] built$"

FAKE_MAKE_STATUS=2
(build_with_progress) >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then ok "a build that fails: setup.sh fails"; else not_ok "a build that fails: setup.sh fails"; fi
grep_ok "it says make's status" "$tmp/out" "the build failed (make exited 2)"
FAKE_MAKE_STATUS=0

# on a terminal: one line redrawn
printf '  CC       a.lo\n  CC       b.lo\nan error line\n' | condense 2 1 >"$tmp/out"
if grep -q "$(printf '\r')setup.sh \[0:[0-9][0-9]\] building 2/2  CC b.lo" "$tmp/out"; then ok "a terminal gets one line redrawn"
else not_ok "a terminal gets one line redrawn"; fi
grep_ok "and another line on a line of its own" "$tmp/out" "^an error line$"

# the usage still names every command; `check` (which .ci/run execs) is unchanged in name
sh "$top_srcdir/setup.sh" >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -eq 2 ]; then ok "no command: usage, status 2"; else not_ok "no command: usage, status 2 (got $rc)"; fi
grep_ok "the usage names check" "$tmp/out" "^  ./setup.sh check "
grep_ok "and run, with its progress" "$tmp/out" "says each step with the time"
grep_ok ".ci/run still execs setup.sh check" "$top_srcdir/.ci/run" "^exec ./setup.sh check$"
echo "1..$n"
[ "$failed" -eq 0 ]
