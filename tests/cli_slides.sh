#!/bin/sh
# tests/cli_slides.sh - the slides in the CLI: the SVG of a run
# and of a sweep (parsed with python3's XML parser: its curves, axes,
# labels, legend, title and crossover rings), a learning rate far too large
# said in one line, and the predicted GPU racing the CPU (every GPU figure
# labelled predicted). Speaks TAP.
: "${NNLAB:=./nnlab}" "${top_srcdir:=.}"
n=0 failed=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache" XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data"
. "$top_srcdir/tests/cli-lib.sh"
# the framework way predicted, whatever python3 has: with torch a race would measure it
# (tests/cli_ways.sh covers that through a stand-in helper)
export NNLAB_PYTHON=/nonexistent

# svg_ok NAME FILE KIND: the file parses and holds what KIND (run|sweep) needs
svg_ok() {
    if python3 - "$2" "$3" >"$tmp/svgcheck" 2>&1 <<'PY'
import sys, xml.etree.ElementTree as ET
path, kind = sys.argv[1], sys.argv[2]
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(path).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
assert root.get("width") == "1280" and root.get("height") == "720"
texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
def cls(c):
    return [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text") if c in (t.get("class") or "").split()]
# self-contained: no scripts, no links, no style sheets from elsewhere
for e in root.iter():
    assert not e.tag.endswith("script") and not e.tag.endswith("image"), e.tag
    for k, v in e.attrib.items():
        assert "href" not in k and "url(" not in v, (k, v)
title = cls("title")
assert len(title) == 1, title
# legible on a projector: no text under 20 px, curves at least 3 px wide
for t in root.iter("{http://www.w3.org/2000/svg}text"):
    assert int(t.get("font-size")) >= 20, t.get("font-size")
curves = [p for p in root.iter("{http://www.w3.org/2000/svg}polyline") if "curve" in p.get("class").split()]
assert curves, "no curve"
for p in curves:
    pts = [tuple(map(float, xy.split(","))) for xy in p.get("points").split()]
    assert pts and all(0 <= x <= 1280 and 0 <= y <= 720 for x, y in pts), p.get("points")
    assert float(p.get("stroke-width")) >= 3
labels = cls("axis-label")
assert len(cls("tick-label")) >= 6 and cls("legend")
if kind == "run":
    assert "cpu" in title[0] and "batch 32" in title[0] and "lr " in title[0], title
    assert "training step" in labels and any("loss" in l for l in labels), labels
    assert any("accuracy (%)" in l for l in labels), labels
    assert max(len(p.get("points").split()) for p in curves) >= 3
elif kind == "sweep":
    assert any("batch size" in l for l in labels) and any("samples/s" in l for l in labels), labels
    rings = root.findall(".//s:circle[@class='crossover']", ns)
    assert rings, "no crossover ring"
    marks = cls("crossover-label")
    # one label per batch and base: "gpu eager and gpu graph overtake cpu nnlab at batch 16"
    assert 0 < len(marks) <= len(rings) and all(any(("at batch " + r.get("data-batch")) in m or "every batch" in m
                                                    for m in marks) for r in rings), marks
    assert any("predicted for" in (p.get("data-label") or "") and p.get("stroke-dasharray") for p in curves)
print("ok")
PY
    then ok "$1"; else cat "$tmp/svgcheck" >"$tmp/err"; not_ok "$1"; fi
}

# --- a run as an SVG ----------------------------------------------------------------------------
check "train --svg writes the curves" 0 "$NNLAB" train -p mnist-mlp-128 --steps 300 --log-every 50 -q --svg "$tmp/run.svg"
svg_ok "the run's SVG: curves, axes with units, legend, title" "$tmp/run.svg" run
check "train --svg into a folder that cannot be made fails" 1 "$NNLAB" train -p mnist-mlp-128 --steps 2 -q \
    --svg /proc/nnlab-none/x.svg
grep_ok "--svg: the failure names the file" "$tmp/err" "nnlab: --svg: .*/proc/nnlab-none"

# --- a sweep as an SVG: a predicted GPU overtakes the CPU, the crossover ringed ------------------
check "sweep --svg" 0 "$NNLAB" sweep -p mnist-mlp-128 --devices cpu,gpu --batches 1,16,256 --steps 3 \
    --warmup 1 --gpu-profile t4 --svg "$tmp/sweep.svg"
if grep -q "overtakes from batch" "$tmp/out"; then
    svg_ok "the sweep's SVG: curves, axes, crossovers ringed and labelled" "$tmp/sweep.svg" sweep
else
    ok "the sweep's SVG # SKIP no crossover in this sweep"
fi

# --- a learning rate far too large ------------------------------------------------------------------
check "lr 1000 finishes" 0 "$NNLAB" train -p mnist-mlp-128 --lr 1000 --steps 300 --log-every 50
grep_ok "lr 1000: a line says the loss blew up and what to do" "$tmp/err" \
    "warning: loss blowing up by step [0-9]*: .* - lower the learning rate"
check "lr 1e30 diverges (exit 3)" 3 "$NNLAB" train -p mnist-mlp-128 --lr 1e30 --steps 20
grep_ok "lr 1e30: the shared sentence" "$tmp/err" "diverged at step 2: loss \(nan\|inf\) - lower the learning rate"

# --- the predicted GPU beside the CPU ------------------------------------------------------------------
if "$NNLAB" devices 2>/dev/null | grep -q "^gpu  *unavailable"; then
    check "gpu not here: refused, pointing to the predicted race" 2 "$NNLAB" train -p mnist-mlp-128 --device gpu
    grep_ok "the refusal names --race-predicted" "$tmp/err" "without a GPU, --race-predicted"
    one_line_err "the refusal is one line"
else
    ok "gpu not here # SKIP a GPU is available"; ok "# SKIP"; ok "# SKIP"
fi
check "--race-predicted on the CPU" 0 "$NNLAB" train -p mnist-mlp-128 --epochs 1 --steps 200 --race-predicted \
    --gpu-profile geforce-940m
grep_ok "each epoch: where the predicted GPU would be" "$tmp/err" "^  gpu predicted for GeForce 940M: \(step\|done\)"
grep_ok "the end: its time, labelled" "$tmp/err" "^gpu: predicted for GeForce 940M: done in "
grep_ok "the verdicts: the framework pair first" "$tmp/err" "^as a framework runs it: .*gpu framework [0-9]* us predicted for GeForce 940M"
grep_ok "the verdicts: nnlab's measured beside predicted" "$tmp/err" "^nnlab's own code: .*(cpu nnlab [0-9]* us measured, gpu graph [0-9]* us predicted for GeForce 940M)"
if grep "gpu" "$tmp/err" | grep -v "predicted for" | grep -q "[0-9]"; then
    grep gpu "$tmp/err" >"$tmp/out"; not_ok "every GPU figure says predicted"
else
    ok "every GPU figure says predicted"
fi
check "--race-predicted with an unknown profile" 2 "$NNLAB" train -p mnist-mlp-128 --race-predicted --gpu-profile nosuch
one_line_err "an unknown profile: one line"

echo "1..$n"
[ "$failed" -eq 0 ]
