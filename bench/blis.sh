#!/bin/sh
# bench/blis.sh - OpenBLAS against BLIS on every product shape of the
# shipped presets: for each preset at batches 4 and 256,
# bench/blisbench times each of its linear and convolution layers' products
# (forward, input gradient, weight gradient: the shapes the calibration
# contests) on one thread with each library, the two alternated, the median
# of each, and says which nn_blas_choose picks (BLIS only when more than 5%
# faster). Writes a Markdown table, with the machine, the commit, both
# libraries' versions and the load average at each row, to
# bench/results/blis-DATE-COMMIT.md, and a summary per preset and batch.
#
# A benchmark, not a test: run it on a machine with nothing else running.
#
#   bench/blis.sh [-p "PRESET ..."] [-b "BATCH ..."] [-t SECONDS_A_SHAPE] [-o FILE]
#
# Defaults: every shipped preset, batches "4 256", 0.5 s a shape. Needs
# libblis.so.4 (Debian: apt-get install libblis4-pthread) and
# `make bench/blisbench` in build/ (done here when missing).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
presets='' batches="4 256" seconds=0.5 out=''
while getopts p:b:t:o: opt; do
    case $opt in
        p) presets=$OPTARG ;;
        b) batches=$OPTARG ;;
        t) seconds=$OPTARG ;;
        o) out=$OPTARG ;;
        *) sed -n '14,14p' "$0" >&2; exit 2 ;;
    esac
done
build=$here/../build
bench=$build/bench/blisbench
[ -x "$bench" ] || make -C "$build" bench/blisbench >/dev/null
presets_dir=${NNLAB_PRESETS_DIR:-$here/../presets}
if [ -z "$presets" ]; then
    presets=$(cd "$presets_dir" && ls ./*.ini | sed 's|^\./||; s|\.ini$||')
fi
commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
date=$(date -u +%Y-%m-%d)
[ -n "$out" ] || out="$here/results/blis-$date-$commit.md"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

machine=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
{
    echo "# OpenBLAS against BLIS per product shape ($date, $commit)"
    echo
    echo "Machine: $machine, $(nproc) cores; $("$build/nnlab" devices | sed -n 's/^cpu  *available: //p')."
    echo "BLIS: $("$build/nnlab" devices | sed -n 's/^  BLIS:  *//p')"
    echo
    echo "bench/blis.sh: each shape timed $seconds s on one thread, OpenBLAS and BLIS alternated,"
    echo "the median of each; 'chosen' is nn_blas_choose's (BLIS when more than 5% faster)."
    echo
    echo "| preset | batch | m | n | k | op(A) op(B) | OpenBLAS GFLOP/s | BLIS GFLOP/s | BLIS/OpenBLAS | chosen | load avg |"
    echo "|---|---:|---:|---:|---:|---|---:|---:|---:|---|---:|"
} >"$tmp/table"
: >"$tmp/summary"
for preset in $presets; do
    for batch in $batches; do
        if ! "$bench" "$presets_dir/$preset.ini" "$batch" "$seconds" >"$tmp/rows"; then
            echo "blis.sh: $preset at batch $batch failed" >&2
            continue
        fi
        awk -v p="$preset" -v b="$batch" '{
            ratio = $5 > 0 ? sprintf("%.2f", $6 / $5) : "?"
            printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p, b, $1, $2, $3, $4, $5, $6, ratio, $7, $8
        }' "$tmp/rows" >>"$tmp/table"
        awk -v p="$preset" -v b="$batch" '{ n++; if ($7 == "blis") k++ }
            END { printf "- %s at batch %s: BLIS chosen for %d of %d shapes\n", p, b, k + 0, n + 0 }' \
            "$tmp/rows" >>"$tmp/summary"
    done
done
{ cat "$tmp/table"; echo; cat "$tmp/summary"; } >"$out"
echo "blis.sh: wrote $out"
