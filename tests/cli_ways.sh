#!/bin/sh
# tests/cli_ways.sh - the race of ways on the CLI (`nnlab train
# --race-predicted`, src/cli/cli_ways.c, nnlab/race_ways.h), without a GPU:
# with a recorded CPU calibration installed as this machine's cache (dev7's:
# one thread of the 2-core Zen 5, measured beside PyTorch; tests/cal_install,
# so that a busy machine cannot flip a verdict), each
# preset at its write-up's batch answers the write-up's question first, as a
# framework runs it (lenet-cifar10, lenet5-cifar10 and mnist-mlp-128: the GPU
# slower; mnist-mlp-1000, conv1d-regression and tabnet-regression: faster),
# then nnlab's own pair; for the T4 and the GeForce 940M profiles. The JSON
# holds the four lanes and both verdicts. Speaks TAP.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}" "${top_builddir:=.}"
n=0 failed=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/cli-lib.sh"
no_grep_ok() { if grep -q -e "$3" "$2"; then echo "# '$3' in $2"; not_ok "$1"; else ok "$1"; fi; }

export XDG_CACHE_HOME="$tmp/cache"
# the framework way predicted, as the verdicts below expect, even where a python3 imports torch
# (a race measures it with PyTorch there: the stand-in helper's case at the end)
export NNLAB_PYTHON=/nonexistent
if ! "$top_builddir/tests/cal_install" calibration-cpu-dev7.txt 2>"$tmp/err"; then
    not_ok "the recorded calibration installed"
    echo "1..$n"; exit 1
fi
ok "the recorded calibration installed"

# preset and the write-up's direction for the framework pair
for profile in t4 geforce-940m; do
    for pair in lenet-cifar10:slower lenet5-cifar10:slower mnist-mlp-128:slower mnist-mlp-1000:faster \
        conv1d-regression:faster tabnet-regression:faster; do
        preset=${pair%%:*} dir=${pair#*:}
        check "$preset, $profile: the race ends" 0 "$NNLAB" train -p "$preset" --race-predicted --steps 3 \
            --no-validation -q --gpu-profile "$profile" --json
        batch=$(sed -n 's/^batch = //p' "$top_srcdir/presets/$preset.ini")
        verdict="the GPU is [0-9.]*x $dir than the CPU at batch $batch"
        json_verdict="gpu $dir"
        grep_ok "$preset, $profile: as a framework runs it, the GPU is $dir at batch $batch" "$tmp/err" \
            "^as a framework runs it: $verdict[ :].*cpu framework [0-9]* us predicted from this CPU's calibration, gpu framework [0-9]* us predicted for "
        grep_ok "$preset, $profile: then nnlab's own pair, measured beside predicted" "$tmp/err" \
            "^nnlab's own code: .*(cpu nnlab [0-9]* us measured, gpu graph [0-9]* us predicted for "
        grep_ok "$preset, $profile: the framework verdict before nnlab's" "$tmp/err" "^as a framework"
        if [ "$(grep -n '^as a framework' "$tmp/err" | cut -d: -f1)" -lt "$(grep -n "^nnlab's own" "$tmp/err" | cut -d: -f1)" ]; then
            ok "$preset, $profile: the write-ups' question first"
        else
            not_ok "$preset, $profile: the write-ups' question first"
        fi
        grep_ok "$preset, $profile: JSON: the framework verdict" "$tmp/out" "\"framework\": {\"cpu\": \"cpu framework\", \"gpu\": \"gpu framework\", \"verdict\": \"$json_verdict\""
    done
done

# the JSON: four lanes, each with its source; no GPU figure without "predicted"
check "JSON of a predicted race" 0 "$NNLAB" train -p lenet-cifar10 --race-predicted --steps 3 --no-validation -q --json
for lane in "cpu framework" "gpu framework" "cpu nnlab" "gpu graph"; do
    grep_ok "JSON: the $lane lane" "$tmp/out" "{\"label\": \"$lane\""
done
grep_ok "JSON: cpu nnlab measured" "$tmp/out" '"label": "cpu nnlab", "device": "cpu", "way": "nnlab", "source": "measured", "measured": true'
no_grep_ok "JSON: no GPU lane says measured" "$tmp/out" '"device": "gpu", "way": "[a-z]*", "source": "measured"'
# nnlab's pair rests on the CPU's measured step (3 steps: about 120-160 us
# here, as near the T4's predicted graph step as a loaded or quiet machine
# makes it), so its verdict is checked against its own two figures, not for
# one direction
if python3 - "$tmp/out" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))["verdicts"]["nnlab"]
lanes = {l["label"]: l["us_per_step"] for l in json.load(open(sys.argv[1]))["ways"]}
cpu, gpu = lanes["cpu nnlab"], lanes["gpu graph"]
assert (v["cpu"], v["gpu"]) == ("cpu nnlab", "gpu graph"), v
assert abs(v["gpu_over_cpu"] - gpu / cpu) < 1e-3 * gpu / cpu, (v, cpu, gpu)
want = {"gpu faster"} if gpu < cpu / 1.1 else {"gpu slower"} if gpu > cpu * 1.1 else {"gpu faster", "gpu slower", "too close"}
assert v["verdict"] in want, (v, cpu, gpu)
PY
then ok "JSON: the nnlab verdict agrees with its two lanes"; else not_ok "JSON: the nnlab verdict agrees with its two lanes"; fi
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out" && ok "JSON: parses" || not_ok "JSON: parses"

# --svg: the loss curve, and the four lanes with both verdicts in the validation's place
check "--race-predicted --svg" 0 "$NNLAB" train -p lenet-cifar10 --race-predicted --steps 3 --no-validation -q \
    --svg "$tmp/race.svg"
if python3 - "$tmp/race.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
texts = {t.get("class"): [] for t in root.iter("{http://www.w3.org/2000/svg}text")}
for t in root.iter("{http://www.w3.org/2000/svg}text"):
    texts[t.get("class")].append(t.text or "")
lanes = texts.get("lane", [])
assert len(lanes) == 4, lanes
assert any(l.startswith("cpu framework*") for l in lanes) and any(l.startswith("gpu graph*") for l in lanes)
assert any(l.startswith("cpu nnlab ") for l in lanes), lanes          # measured: no star
assert texts["verdict"][0].startswith("framework way: GPU "), texts["verdict"]
assert texts["verdict"][1].startswith("nnlab's own code: "), texts["verdict"]
assert "predicted for T4" in texts["lane-source"] and "measured" in texts["lane-source"]
assert len([r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("class") == "lane-bar"]) == 4
PY
then ok "the SVG: the four lanes labelled, both verdicts"; else not_ok "the SVG: the four lanes labelled, both verdicts"; fi

# where a python3 imports torch a race measures the framework way on the CPU: through the
# stand-in helper, which needs no torch (tests/fixtures/torch-helper-stub.py: 123.5 us a step)
if python=$(command -v python3); then
    check "PyTorch measures the CPU's framework lane" 0 env NNLAB_PYTHON="$python" \
        NNLAB_TORCH_HELPER="$top_srcdir/tests/fixtures/torch-helper-stub.py" NNLAB_TORCH_STUB_PARAMS=101770 \
        "$NNLAB" train -p mnist-mlp-128 --race-predicted --steps 3 --no-validation
    grep_ok "the lane says it was measured, and with what" "$tmp/err" \
        "^  cpu framework  *124 us/step .*measured with PyTorch 9.9$"
    grep_ok "the verdict rests on it" "$tmp/err" "^as a framework runs it: .*(cpu framework 124 us measured with PyTorch 9.9, gpu framework [0-9]* us predicted for T4)"
    check "a helper that fails: the race still ends" 0 env NNLAB_PYTHON="$python" \
        NNLAB_TORCH_HELPER="$top_srcdir/tests/fixtures/torch-helper-stub.py" NNLAB_TORCH_STUB_PARAMS=101770 \
        NNLAB_TORCH_STUB=crash "$NNLAB" train -p mnist-mlp-128 --race-predicted --steps 3 --no-validation
    grep_ok "... its lane stays predicted, and says why" "$tmp/err" "cpu framework way not measured: .*(it stays predicted)"
    grep_ok "... predicted from the calibration" "$tmp/err" "^  cpu framework .*predicted from this CPU's calibration$"
else
    n=$((n + 1)); echo "ok $n # SKIP no python3: the stand-in helper's cases"
fi
echo "1..$n"
[ "$failed" -eq 0 ]
