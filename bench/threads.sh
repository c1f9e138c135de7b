#!/bin/bash
# bench/threads.sh - nnlab against PyTorch on the CPU at every thread count:
# the many-core target against PyTorch ("at or above PyTorch at every batch
# and every thread count"), for a machine with more cores than these 2 (the
# lent GPU machine's 16-core host).
#
#   bench/threads.sh [--budget S] [--presets LIST] [--batches LIST]
#                    [--threads LIST] [--steps N] [--rounds R] [--torch-rounds R]
#                    [--no-torch] [--out DIR]
#
# Per preset: nnlab's step at each batch and thread count (`nnlab bench
# --device cpu --threads T`, median us; also with no --threads, nnlab's own
# choice), then PyTorch's at the same points in one process
# (bench/torch_grid.py: torch.set_num_threads(T), the helper's step and
# median), then nnlab's again (--rounds R: R rounds of nnlab in all, the
# first before PyTorch; default 2): the fastest of nnlab's rounds is
# compared, every round is shown (a drift of the machine shows as different
# figures). --torch-rounds R: PyTorch's grid measured R times, round after
# round, each point the median of its rounds (default 1). --no-torch times
# nnlab alone. The table ends with the many-core
# target's count: in how many cells nnlab's own choice ("auto") is within 10%
# of its best fixed thread count, and which are not. Before the presets, this
# CPU's calibration at each thread count (calibrate-cpu-tT.json: the framework
# way's CPU terms are priced from it, docs/ways.md). Nothing runs beside
# anything else; nnlab's JSON goes to a file. --budget S ends within S
# seconds: a preset that finds the time spent is left out, and said so.
# Writes DIR/threads-<cores>c-<date>.md (default bench/results) and keeps the
# raw JSON in DIR/threads-<cores>c-<date>/.
#
# NNLAB names the program (default: build/nnlab); NNLAB_PRESETS_DIR the presets.
set -u
here=$(cd "$(dirname "$0")" && pwd)
budget=0 steps=10 rounds=2 torch_rounds=1 torch=1 out_dir=$here/results
presets="mnist-mlp-1000 mnist-mlp-128 lenet-cifar10 tabnet-regression lenet5-cifar10 conv1d-regression"
batches="4,64,1024"
cores=$(nproc)
threads=""
while [ $# -gt 0 ]; do
    case $1 in
        --budget) budget=$2; shift ;;
        --presets) presets=$(echo "$2" | tr ',' ' '); shift ;;
        --batches) batches=$2; shift ;;
        --threads) threads=$2; shift ;;
        --steps) steps=$2; shift ;;
        --rounds) rounds=$2; shift ;;
        --torch-rounds) torch_rounds=$2; shift ;;
        --no-torch) torch=0 ;;
        --out) out_dir=$2; shift ;;
        -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "threads.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
if [ -z "$threads" ]; then      # 1, 2, 4, ... up to the cores, and the cores
    t=1; threads=""
    while [ "$t" -lt "$cores" ]; do threads="$threads,$t"; t=$((t * 2)); done
    threads="${threads#,},$cores"
fi
nnlab=${NNLAB:-$here/../build/nnlab}
[ -x "$nnlab" ] || { echo "threads.sh: no nnlab program at $nnlab (set NNLAB)" >&2; exit 2; }
export NNLAB_PRESETS_DIR=${NNLAB_PRESETS_DIR:-$here/../presets}
case $rounds in ''|*[!0-9]*|0) echo "threads.sh: --rounds wants a count from 1" >&2; exit 2 ;; esac
case $torch_rounds in ''|*[!0-9]*|0) echo "threads.sh: --torch-rounds wants a count from 1" >&2; exit 2 ;; esac
if [ "$torch" = 1 ]; then
    python3 -c 'import torch' 2>/dev/null || { echo "threads.sh: python3 cannot import torch (--no-torch: nnlab alone)" >&2; exit 2; }
fi

start=$(date +%s) load_before=$(cut -d' ' -f1 /proc/loadavg)
left() { if [ "$budget" -gt 0 ]; then echo $((start + budget - $(date +%s))); else echo 86400; fi; }
timed() { local s; s=$(left); [ "$s" -gt 1 ] || return 124; timeout -k 2 "$s" "$@"; }
stamp=$(date -u +%Y-%m-%d)
raw=$out_dir/threads-${cores}c-$stamp
mkdir -p "$raw" || exit 1
json_field() { sed -n "s/.*\"$1\": *\([0-9.e+-]*\).*/\1/p" "$2" 2>/dev/null | head -n 1; }

# nnlab_round PRESET ROUND: every batch and thread count (and nnlab's own choice)
nnlab_round() {
    local p=$1 r=$2 b t
    for b in $(echo "$batches" | tr ',' ' '); do
        for t in $(echo "$threads" | tr ',' ' ') auto; do
            local opt="--threads $t"
            [ "$t" = auto ] && opt=""
            # shellcheck disable=SC2086
            timed "$nnlab" bench --preset "$p" --device cpu --batch "$b" $opt --steps "$steps" --warmup 2 \
                --json >"$raw/nnlab-$p-t$t-$b-$r.json" 2>"$raw/nnlab-$p-t$t-$b-$r.err"
        done
    done
}

# this CPU calibrated at each thread count (a few seconds each): what prices the
# framework way's CPU terms of these steps, so that PyTorch's steps here can join
# tests/fixtures/framework-cpu-fit.csv as a host a thread count
# (tools/fit_framework_cpu.py --convert turns each into the fixture's calibration)
for t in $(echo "$threads" | tr ',' ' '); do
    timed "$nnlab" calibrate --device cpu --threads "$t" --json \
        >"$raw/calibrate-cpu-t$t.json" 2>"$raw/calibrate-cpu-t$t.err"
done

done_presets="" left_out=""
for p in $presets; do
    if [ "$(left)" -le 1 ]; then left_out="$left_out $p"; continue; fi
    echo "threads.sh: $p" >&2
    nnlab_round "$p" 1
    deadline=0; [ "$budget" -gt 0 ] && deadline=$((start + budget))
    [ "$torch" = 1 ] &&
        timed python3 "$here/torch_grid.py" "$NNLAB_PRESETS_DIR/$p.ini" --out "$raw" --device cpu \
            --batches "$batches" --threads "$threads" --steps "$steps" --warmup 2 --rounds "$torch_rounds" \
            --deadline "$deadline" \
            >"$raw/torch-$p.err" 2>&1
    r=2
    while [ "$r" -le "$rounds" ]; do nnlab_round "$p" "$r"; r=$((r + 1)); done
    cut -d' ' -f1 /proc/loadavg >"$raw/load-$p.txt"     # this preset's load, as it ended
    done_presets="$done_presets $p"
done

min2() { awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN { if (a <= 0) print b; else if (b <= 0 || a < b) print a; else print b }'; }
# cell P T B: sets $ours, the fastest of nnlab's rounds ("" when none ran),
# and $runs, every round's figure
cell() {
    local r=1 v
    ours="" runs=""
    while [ "$r" -le "$rounds" ]; do
        v=$(json_field us_per_step "$raw/nnlab-$1-t$2-$3-$r.json")
        runs="$runs${runs:+ / }${v:--}"
        ours=$(min2 "$ours" "$v")
        r=$((r + 1))
    done
    [ "$ours" = 0 ] && ours=""
}
table=$out_dir/threads-${cores}c-$stamp.md
{
    echo "# nnlab against PyTorch on the CPU by thread count, µs per training step (median)"
    echo
    echo "- date: $stamp; $("$nnlab" --version 2>/dev/null); $cores cores: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
    echo "- nnlab's CPU: $("$nnlab" devices 2>/dev/null | grep -m1 '^cpu ' | sed 's/  */ /g')"
    echo "- nnlab: \`nnlab bench --device cpu --batch B --threads T --steps $steps --warmup 2 --json\` (to a file),"
    echo "  $rounds round(s), one preset's points in turn each round$([ "$torch" = 1 ] && echo ", the first before PyTorch"): the fastest is compared, all shown; \"auto\": no --threads"
    if [ "$torch" = 1 ]; then
        echo "- PyTorch: bench/torch_grid.py ($(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null)), every pool at T threads, the same step, median; $torch_rounds round(s) of the grid, the median of them"
    else
        echo "- PyTorch: not run (--no-torch)"
    fi
    echo "- load average (1 min): $load_before before the first run; as each preset's runs ended, below its rows"
    echo
    echo "| preset | batch | threads | nnlab µs | (runs) | PyTorch µs | PyTorch / nnlab |"
    echo "|---|---:|---:|---:|---|---:|---:|"
} >"$table"
cells=0 within=0 outside=""
for p in $done_presets; do
    for b in $(echo "$batches" | tr ',' ' '); do
        fixed_best=""
        for t in $(echo "$threads" | tr ',' ' ') auto; do
            cell "$p" "$t" "$b"
            theirs=""
            [ "$t" != auto ] && theirs=$(json_field us_per_step "$raw/torch-$p-cpu-t$t-$b.json")
            ratio=$(awk -v a="${theirs:-0}" -v b="${ours:-0}" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else print "-" }')
            echo "| $p | $b | $t | ${ours:--} | $runs | ${theirs:--} | $ratio |" >>"$table"
            if [ "$t" != auto ]; then
                fixed_best=$(min2 "$fixed_best" "$ours")
            elif [ -n "$ours" ] && [ -n "$fixed_best" ] && [ "$fixed_best" != 0 ]; then
                cells=$((cells + 1))
                q=$(awk -v a="$ours" -v b="$fixed_best" 'BEGIN { printf "%.2f", a / b }')
                if awk -v q="$q" 'BEGIN { exit !(q <= 1.10) }'; then within=$((within + 1))
                else outside="$outside, $p b$b ${q}x"; fi
            fi
        done
    done
    echo "| (load $(cat "$raw/load-$p.txt" 2>/dev/null)) | | | | | | |" >>"$table"
done
echo "- nnlab's own thread count within 10% of its best fixed count ($threads): $within of $cells cells${outside:+; outside:${outside#,}}" >>"$table"
[ -n "$left_out" ] && echo "- not run (--budget $budget s spent):$left_out" >>"$table"
echo "$table"
