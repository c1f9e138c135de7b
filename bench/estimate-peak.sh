#!/bin/sh
# bench/estimate-peak.sh - the memory estimate against the measured peak:
# for every shipped preset and the deep ones of the hardening issue (ten
# linear 4096 layers, SGD and Adam), the host memory nnlab's size check
# predicts against the maximum resident set size /usr/bin/time measures
# over a short run. The estimate must hold the peak and be at most 15%
# above it. Not a unit test: it trains (the deep ones need about 3.5 GB),
# so it is run by hand; it prints a table for docs/results.md, whose rows
# tests/fixtures/measured-peaks.txt keeps for tests/test_engine.c.
#
#   bench/estimate-peak.sh [BUILD]     (BUILD: the build folder, ../build)
#
# The estimate is bench/memest's (made on demand): the one the size check
# uses, unrounded. It counts what the job adds to the process; the process
# holds its libraries and the preset already when it checks (the check is
# against the memory still available), so the verdict sets the estimate
# plus that, measured, against the peak: "at the check" is the peak
# resident set of the same command refused under ulimit -v 200000 (the
# size check is all it runs). Sixty linear 4096 layers (16 GB with SGD)
# are left out: past what a shared 24 GiB machine may take at once.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd) || exit 1
nnlab=$build/nnlab
export NNLAB_PRESETS_DIR=${NNLAB_PRESETS_DIR:-$here/../presets}
make -s -C "$build" bench/memest >/dev/null || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0

# deep OPT: ten linear 4096 layers on 4096 random features, optimizer OPT
deep() {
    f=$tmp/deep-$1.ini
    { printf '[preset]\nname = "deep-%s"\n[data]\nset = random\nrows = 2048\nval_rows = 256\n' "$1"
      printf 'features = 4096\ntargets = 4096\n[train]\nloss = mse\nbatch = 64\nepochs = 1\n'
      printf '[optimizer]\ntype = %s\n' "$1"
      for i in 1 2 3 4 5 6 7 8 9 10; do printf '[layer%d]\ntype = linear\nout = 4096\n' "$i"; done; } >"$f"
    echo "$f"
}

# peak MB (decimal) of COMMAND..., from /usr/bin/time's KiB
peak_of() {
    /usr/bin/time -f '%M' -o "$tmp/time" "$@" >/dev/null 2>&1
    tail -n 1 "$tmp/time" | awk '{ printf "%.1f", $1 * 1024 / 1e6 }'
}

printf '| preset | estimate (MB) | at the check (MB) | sum (MB) | measured peak (MB) | sum / peak | verdict |\n'
printf '|---|---:|---:|---:|---:|---:|---|\n'
for p in $(ls "$NNLAB_PRESETS_DIR" | sed -n 's/\.ini$//p') "$(deep sgd)" "$(deep adam)"; do
    name=$(basename "$p" .ini)
    est_mb=$("$build/bench/memest" "$p" 1 | sed -n 's/^host=\([0-9]*\) .*/\1/p' | awk '{ printf "%.1f", $1 / 1e6 }')
    if [ -z "$est_mb" ]; then printf '| %s | ? | | | | | no estimate |\n' "$name"; failed=$((failed + 1)); continue; fi
    cmd=train
    grep -q '^kind *= *jacobian' "$NNLAB_PRESETS_DIR/$name.ini" 2>/dev/null && cmd=jacobian
    if [ "$cmd" = train ]; then set -- train --preset "$p" --steps 3 --threads 1
    else set -- jacobian --preset "$p" --threads 1; fi
    check_mb=$(peak_of sh -c 'ulimit -v 200000 && exec "$@"' sh "$nnlab" "$@")
    peak_mb=$(peak_of "$nnlab" "$@")
    verdict=$(awk -v e="$est_mb" -v c="$check_mb" -v m="$peak_mb" 'BEGIN { s = e + c;
        if (e < 20 && s < m) print "small: the process dominates";
        else if (s < m) print "FAIL: below the peak";
        else if (s > 1.15 * m) print "FAIL: more than 15% above";
        else print "PASS" }')
    case $verdict in FAIL*) failed=$((failed + 1)) ;; esac
    awk -v n="$name" -v e="$est_mb" -v c="$check_mb" -v m="$peak_mb" -v v="$verdict" 'BEGIN {
        printf "| %s | %.1f | %.1f | %.1f | %.1f | %.3f | %s |\n", n, e, c, e + c, m, (e + c) / m, v }'
done
[ "$failed" -eq 0 ]
