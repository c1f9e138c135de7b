#!/bin/sh
# bench/signal-soak.sh - signals at random moments, to the CLI and to the lab,
# with and without an address-space limit (ulimit -v): every run must end,
# within GRACE seconds of its signal, with the shell's code for that signal
# (128 + its number) or, when the job was refused before the signal came,
# with the refusal's code (2), and leave no process behind.
#
#   bench/signal-soak.sh [-n ROUNDS] [-b BUILDDIR]
#
# The hang's reproducers (a job thread stuck in OpenBLAS's allocation under
# ulimit -v ignored every signal) are among the cases. A SIGINT to the lab
# while a job runs only asks (a second one quits): the soak sends it twice. Prints one line per
# run and a summary; exits 1 when any run broke the rule. Needs tmux for the
# lab's cases (skipped without it). Not a unit test: it takes minutes.
set -u
rounds=20
build=build
while getopts n:b: opt; do
    case $opt in
        n) rounds=$OPTARG ;;
        b) build=$OPTARG ;;
        *) echo "usage: $0 [-n ROUNDS] [-b BUILDDIR]" >&2; exit 2 ;;
    esac
done
top=$(cd "$(dirname "$0")/.." && pwd)
nnlab=$(cd "$top/$build" 2>/dev/null && pwd)/nnlab
[ -x "$nnlab" ] || { echo "$0: no $nnlab: build first" >&2; exit 2; }
GRACE=${GRACE:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache" XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data"
bad=0 runs=0 slowest=0

# rand N: a number in [0, N)
rand() { od -An -N2 -tu2 /dev/urandom | awk -v n="$1" '{ print $1 % n }'; }

# signum NAME: the signal's number
signum() { case $1 in HUP) echo 1 ;; INT) echo 2 ;; TERM) echo 15 ;; esac; }

# now_ms: milliseconds since the epoch
now_ms() { date +%s%3N; }

# One CLI run: LIMIT (KB, 0 none), a preset, a signal, a delay in ms.
cli_case() {
    limit=$1 preset=$2 sig=$3 delay_ms=$4 extra=${5:-}
    (
        [ "$limit" -gt 0 ] && ulimit -v "$limit"
        # shellcheck disable=SC2086 # extra holds options, split on purpose
        exec "$nnlab" train --preset "$top/presets/$preset.ini" --steps 100000 --json $extra
    ) >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    sleep "$(awk -v ms="$delay_ms" 'BEGIN { printf "%.3f", ms / 1000 }')"
    sent=$(now_ms)
    kill -s "$sig" "$pid" 2>/dev/null
    # wait at most GRACE s (and a second for the shell) for it to end
    waited=0
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt $(( (GRACE + 1) * 10 )) ]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        verdict "cli $preset$extra ulimit=$limit $sig after ${delay_ms}ms" 999 "still running after ${GRACE}s"
        return
    fi
    wait "$pid"
    rc=$?
    took=$(( $(now_ms) - sent ))
    want=$((128 + $(signum "$sig")))
    if [ "$rc" -eq "$want" ] || [ "$rc" -eq 2 ] || [ "$rc" -eq 0 ]; then
        verdict "cli $preset$extra ulimit=$limit $sig after ${delay_ms}ms" "$took" "" "$rc"
    else
        verdict "cli $preset$extra ulimit=$limit $sig after ${delay_ms}ms" "$took" "exit $rc, want $want (or 2: refused)" "$rc"
    fi
}

# One lab run in tmux: the default preset, Enter to start its job, then a
# signal to the lab's process.
lab_case() {
    limit=$1 sig=$2 delay_ms=$3
    sess=soak$$
    tmux kill-session -t "$sess" 2>/dev/null
    tmux new-session -d -s "$sess" -x 100 -y 30 \
        "sh -c '[ $limit -gt 0 ] && ulimit -v $limit; XDG_CACHE_HOME=$XDG_CACHE_HOME XDG_CONFIG_HOME=$XDG_CONFIG_HOME NNLAB_PRESETS_DIR=$top/presets exec $nnlab'; echo exit=\$? > $tmp/lab-rc; sleep 30"
    sleep 1
    tmux send-keys -t "$sess" Enter
    sleep "$(awk -v ms="$delay_ms" 'BEGIN { printf "%.3f", ms / 1000 }')"
    pid=$(pgrep -f "^$nnlab\$" | head -1)
    rm -f "$tmp/lab-rc"
    sent=$(now_ms)
    [ -n "$pid" ] && kill -s "$sig" "$pid" 2>/dev/null
    if [ "$sig" = INT ] && [ -n "$pid" ]; then sleep 0.3; kill -s INT "$pid" 2>/dev/null; fi
    waited=0
    while [ ! -s "$tmp/lab-rc" ] && [ "$waited" -lt $(( (GRACE + 1) * 10 )) ]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    took=$(( $(now_ms) - sent ))
    rc=$(sed -n 's/^exit=//p' "$tmp/lab-rc" 2>/dev/null)
    tmux kill-session -t "$sess" 2>/dev/null
    want=$((128 + $(signum "$sig")))
    if [ -z "$pid" ]; then
        verdict "lab ulimit=$limit $sig after ${delay_ms}ms" "$took" "the lab was not running" "-"
    elif [ -z "$rc" ]; then
        pkill -9 -f "^$nnlab\$" 2>/dev/null
        verdict "lab ulimit=$limit $sig after ${delay_ms}ms" 999 "still running after ${GRACE}s" "-"
    elif [ "$rc" -eq "$want" ]; then
        verdict "lab ulimit=$limit $sig after ${delay_ms}ms" "$took" "" "$rc"
    else
        verdict "lab ulimit=$limit $sig after ${delay_ms}ms" "$took" "exit $rc, want $want" "$rc"
    fi
}

# verdict WHAT MS PROBLEM [RC]: one line; an orphan (an nnlab of this build
# still running) is a problem too.
verdict() {
    runs=$((runs + 1))
    problem=$3
    if pgrep -f "^$nnlab( |\$)" >/dev/null 2>&1; then
        problem="${problem:+$problem; }a process left behind"
        pkill -9 -f "^$nnlab( |\$)" 2>/dev/null
    fi
    [ "$2" -gt "$slowest" ] && [ "$2" -ne 999 ] && slowest=$2
    if [ -n "$problem" ]; then
        bad=$((bad + 1))
        printf 'BAD  %-58s %6s ms  %s\n' "$1" "$2" "$problem"
    else
        printf 'ok   %-58s %6s ms  exit %s\n' "$1" "$2" "${4:-?}"
    fi
}

echo "# $(date -u +%FT%TZ) $(git -C "$top" rev-parse --short HEAD 2>/dev/null) load $(cut -d' ' -f1-3 /proc/loadavg)"
# The hang's reproducers first, each signal once
for sig in TERM INT HUP; do
    cli_case 700000 tabnet-regression "$sig" 1000
    cli_case 700000 mnist-mlp-1000 "$sig" 1000 " --batch 1024"
    cli_case 750000 conv1d-regression "$sig" 1000
    cli_case 600000 mnist-mlp-128 "$sig" 1000
done
presets="tabnet-regression mnist-mlp-128 mnist-mlp-1000 conv1d-regression lenet-cifar10"
i=0
while [ "$i" -lt "$rounds" ]; do
    set -- $presets
    shift "$(rand 5)"
    preset=$1
    case $(rand 3) in 0) sig=INT ;; 1) sig=TERM ;; *) sig=HUP ;; esac
    case $(rand 2) in 0) limit=0 ;; *) limit=700000 ;; esac
    cli_case "$limit" "$preset" "$sig" "$(( 100 + $(rand 1900) ))"
    i=$((i + 1))
done
if command -v tmux >/dev/null 2>&1; then
    for sig in INT TERM HUP; do
        for limit in 0 700000; do
            lab_case "$limit" "$sig" "$(( 300 + $(rand 1500) ))"
        done
    done
else
    echo "# no tmux: the lab's cases skipped"
fi
echo "# $runs runs, $bad broke the rule; the slowest ended ${slowest} ms after its signal"
[ "$bad" -eq 0 ]
