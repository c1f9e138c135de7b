#!/bin/sh
# tests/cli_race.sh - `nnlab train --race` (src/cli/cli_race.c, nnlab/race.h)
# on the emulated GPU (NNLAB_GPU_EMULATION=1): with no GPU switch the race
# measures three jobs, cpu nnlab, gpu eager and gpu graph, each with its own
# switches; --graph or --no-graph measures one GPU job; the framework way is
# and nnlab's pair are set side by side in a race of ways, the framework way
# predicted from the calibrations of the CPU and the GPU (the race measures
# them when none is cached); no GPU here exits 2 pointing to --race-predicted.
# NNLAB, top_srcdir and the presets' and profiles' folders come from `make
# check`. Speaks TAP.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}"
n=0 failed=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/cli-lib.sh"
# the framework way predicted, whatever python3 has: with torch a race would measure it
# (tests/cli_ways.sh covers that through a stand-in helper)
export NNLAB_PYTHON=/nonexistent
# no_grep_ok NAME FILE PATTERN: the pattern must not be there
no_grep_ok() { if grep -q -e "$3" "$2"; then echo "# '$3' in $2"; not_ok "$1"; else ok "$1"; fi; }
# count_ok NAME FILE PATTERN N: exactly N lines match
count_ok() {
    got=$(grep -c -e "$3" "$2")
    if [ "$got" -eq "$4" ]; then ok "$1"; else echo "# $got lines match '$3', wanted $4"; not_ok "$1"; fi
}

# no calibration cached: the race measures both devices' for its predictions
export XDG_CACHE_HOME="$tmp/cache"
job="--preset mnist-mlp-128 --batch 4 --steps 6 --no-validation"

# shellcheck disable=SC2086  # $job is words on purpose
NNLAB_GPU_EMULATION=1 check "race on the emulated GPU exits 0" 0 "$NNLAB" train $job --race --json
count_ok "three jobs measured" "$tmp/out" '"source": "measured", "label"' 3
grep_ok "cpu: nnlab's own way, no GPU switches" "$tmp/out" \
    '"device": "cpu", "way": "nnlab", "source": "measured", "label": "cpu nnlab".*"graph_us": null, "switches": null'
grep_ok "gpu eager: no graph, data on the device" "$tmp/out" \
    '"device": "gpu", "way": "eager", "source": "measured", "label": "gpu eager", "state": "done".*"graph_us": null, "switches": {"data_on_device": true, "pinned": false, "sync_every_step": false, "graph": false}'
grep_ok "gpu graph: its graph timed" "$tmp/out" \
    '"device": "gpu", "way": "graph", "source": "measured", "label": "gpu graph", "state": "done".*"graph_us": [0-9][0-9.]*, "switches": {"data_on_device": true, "pinned": false, "sync_every_step": false, "graph": true}'
grep_ok "the jobs in turn: cpu, gpu eager, gpu graph" "$tmp/err" "race 3/3: gpu graph"
grep_ok "the framework way on the GPU, predicted from its calibration" "$tmp/out" \
    '"label": "gpu framework", "device": "gpu", "way": "framework", "source": "predicted from this GPU.s calibration", "measured": false, "us_per_step": [0-9]'
grep_ok "the framework way on the CPU, predicted from its calibration" "$tmp/out" \
    '"label": "cpu framework", "device": "cpu", "way": "framework", "source": "predicted from this CPU.s calibration", "measured": false, "us_per_step": [0-9]'
grep_ok "nnlab's lanes measured: the CPU's" "$tmp/out" '"label": "cpu nnlab", "device": "cpu", "way": "nnlab", "source": "measured", "measured": true'
grep_ok "nnlab's lanes measured: the faster GPU way" "$tmp/out" '"label": "gpu [a-z]*", "device": "gpu", "way": "[a-z]*", "source": "measured", "measured": true'
grep_ok "the race calibrated the CPU" "$XDG_CACHE_HOME/nnlab/calibration-cpu.txt" "^device = cpu"
grep_ok "the race calibrated the GPU" "$XDG_CACHE_HOME/nnlab/calibration-gpu.txt" "^device = gpu"
grep_ok "the framework verdict first" "$tmp/err" "^as a framework runs it: "
grep_ok "then nnlab's" "$tmp/err" "^nnlab's own code: .*(cpu nnlab [0-9]* us measured, gpu [a-z]* [0-9]* us measured)"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["jobs"]) == 3 and len(d["ways"]) == 4' \
    "$tmp/out" && ok "JSON: three jobs, four lanes" || not_ok "JSON: three jobs, four lanes"
for pair in "cpu nnlab.*gpu eager\|gpu eager.*cpu nnlab" "cpu nnlab.*gpu graph\|gpu graph.*cpu nnlab" \
    "gpu eager.*gpu graph\|gpu graph.*gpu eager"; do
    grep_ok "a ratio for the pair $pair" "$tmp/err" "^  \($pair\)"
done
grep_ok "every ratio says what it divides" "$tmp/err" "x faster than .*: [0-9.]* s / [0-9.]* s"

# shellcheck disable=SC2086
NNLAB_GPU_EMULATION=1 check "--graph: one GPU job" 0 "$NNLAB" train $job --race --graph --json
count_ok "--graph: two jobs measured" "$tmp/out" '"source": "measured", "label"' 2
grep_ok "--graph: the GPU's is graph" "$tmp/out" '"device": "gpu", "way": "graph", "source": "measured"'
no_grep_ok "--graph: no eager job" "$tmp/out" '"way": "eager"'
# shellcheck disable=SC2086
NNLAB_GPU_EMULATION=1 check "--no-graph: one GPU job" 0 "$NNLAB" train $job --race --no-graph --json
count_ok "--no-graph: two jobs measured" "$tmp/out" '"source": "measured", "label"' 2
grep_ok "--no-graph: the GPU's is eager" "$tmp/out" '"device": "gpu", "way": "eager", "source": "measured".*"graph_us": null'
no_grep_ok "--no-graph: no graph job" "$tmp/out" '"way": "graph", "source": "measured", "label"'

mkdir "$tmp/no-module"
# shellcheck disable=SC2086
NNLAB_MODULE_DIR="$tmp/no-module" check "no GPU here: exit 2" 2 "$NNLAB" train $job --race
one_line_err "no GPU here: one line"
grep_ok "no GPU here: said plainly, with the predicted race" "$tmp/err" "no GPU here.*--race-predicted"
# shellcheck disable=SC2086
NNLAB_GPU_EMULATION=1 check "--race with --race-predicted: refused" 2 "$NNLAB" train $job --race --race-predicted
grep_ok "--race with --race-predicted: says why" "$tmp/err" "not with --race-predicted"
echo "1..$n"
[ "$failed" -eq 0 ]
