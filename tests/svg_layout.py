#!/usr/bin/env python3
"""tests/svg_layout.py - the slides laid out, not just drawn: every SVG the
CLI exports for the shipped presets (each training preset's sweep, cpu
against a GPU predicted for the T4 with its three ways, and its race of ways
predicted from the recorded CPU calibration; a run with its validation
panel) is read back and checked from the file alone: no text leaves the
viewBox, no two texts' boxes overlap, no text under 18 px, and each
crossover ring's batch is the one the sweep's JSON names for its pair.
Widths are estimated per glyph class with the table the writer uses
(src/analysis/report/svg_draw.c), rounded up from DejaVu Sans. rsvg-convert
(librsvg2-bin) renders one file to a PNG to prove it renders; that case is
skipped where it is not installed. And the one palette: each curve its own
colour, a predicted one dashed. Speaks TAP."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True
top = os.environ.get("top_srcdir", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
build = os.environ.get("top_builddir", top)
nnlab = os.environ.get("NNLAB", os.path.join(build, "nnlab"))
SVG = "{http://www.w3.org/2000/svg}"
n = 0
failed = 0


def report(good, name, why=""):
    global n, failed
    n += 1
    print(("ok %d - %s" if good else "not ok %d - %s") % (n, name))
    if not good:
        failed += 1
        for line in str(why).splitlines()[:20]:
            print("# " + line)


def glyph_em(c):
    """The writer's table: a glyph's advance in em, rounded up."""
    o = ord(c)
    if o >= 0x80:
        return 1.0
    if c in "mw":
        return 0.98
    if "a" <= c <= "z":
        return 0.64
    if c in "MW":
        return 1.0
    if "A" <= c <= "Z":
        return 0.78
    if "0" <= c <= "9":
        return 0.66
    if c == " ":
        return 0.34
    if c in ".,:;'|!":
        return 0.4
    if c in "()[]{}-/\\":
        return 0.45
    if c in "%@":
        return 1.0
    return 0.85


def text_box(t):
    """A text's box (left, top, right, bottom) as drawn, a turned one turned."""
    px = float(t.get("font-size"))
    s = t.text or ""
    w = sum(glyph_em(c) for c in s) * px * (1.1 if t.get("font-weight") == "bold" else 1.0)
    x, y = float(t.get("x")), float(t.get("y"))
    anchor = t.get("text-anchor") or "start"
    left = x - w / 2 if anchor == "middle" else x - w if anchor == "end" else x
    box = (left, y - 0.8 * px, left + w, y + 0.25 * px)
    m = re.match(r"rotate\(-90 ([-0-9.]+) ([-0-9.]+)\)", t.get("transform") or "")
    if m:                            # turned a quarter back about (cx, cy)
        cx, cy = float(m.group(1)), float(m.group(2))
        l, tp, r, b = box
        box = (cx + (tp - cy), cy - (r - cx), cx + (b - cy), cy - (l - cx))
    return box


def layout_problems(path):
    root = ET.parse(path).getroot()
    vb = [float(v) for v in root.get("viewBox").split()]
    texts = [t for t in root.iter(SVG + "text") if (t.text or "").strip()]
    boxes = [(text_box(t), t.text, t.get("class")) for t in texts]
    bad = []
    for t in texts:
        if float(t.get("font-size")) < 18:
            bad.append("too small: %s px %r" % (t.get("font-size"), t.text))
    for (l, tp, r, b), s, c in boxes:
        if l < vb[0] or tp < vb[1] or r > vb[0] + vb[2] or b > vb[1] + vb[3]:
            bad.append("outside the viewBox: %r (%s) at %.0f,%.0f-%.0f,%.0f" % (s, c, l, tp, r, b))
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            a, b = boxes[i][0], boxes[j][0]
            if a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5:
                bad.append("overlap: %r (%s) and %r (%s)" % (boxes[i][1], boxes[i][2], boxes[j][1], boxes[j][2]))
    return bad, root


def run(args, env, out=None):
    """nnlab's result; a program that cannot start fails like a command that failed."""
    try:
        with open(out or os.devnull, "w") as o:
            return subprocess.run([nnlab] + args, env=env, stdout=o, stderr=subprocess.PIPE, text=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as e:
        return subprocess.CompletedProcess(args, 1, "", str(e))


def presets():
    """The shipped presets that train (a Jacobian preset has its own sweep)."""
    names = []
    for f in sorted(os.listdir(os.path.join(top, "presets"))):
        text = open(os.path.join(top, "presets", f), encoding="utf-8").read()
        if f.endswith(".ini") and not re.search(r"^kind\s*=\s*jacobian", text, re.M):
            names.append(f[:-4])
    return names


def check(name, path):
    bad, root = layout_problems(path)
    report(not bad, name + ": every text inside the canvas, none over another", "\n".join(bad))
    check_palette(name, root)
    return root


def check_palette(name, root):
    """The one palette: every series a colour of its own, and a predicted
    curve dashed (its label says predicted)."""
    curves = [c for c in root.iter(SVG + "polyline") if c.get("class") == "curve"]
    series = {}                      # a series drawn in two panels (a run's loss and validation) is one
    for c in curves:
        series.setdefault(c.get("stroke"), set()).add(c.get("data-label"))
    bad = ["%s share %s" % (" and ".join(sorted(labels)), colour) for colour, labels in series.items()
           if len(labels) > 1]
    bad += ["%s: predicted but not dashed" % c.get("data-label") for c in curves
            if "predicted" in (c.get("data-label") or "") and not c.get("stroke-dasharray")]
    report(curves and not bad, name + ": each curve its own colour, a predicted one dashed",
           "\n".join(bad) or "no curve")


def check_rings(name, root, jsonl):
    """Each ring at a batch the JSON's pairs name (nn_sweep_pairs), each labelled."""
    rings = [r.get("data-batch") for r in root.iter(SVG + "circle") if r.get("class") == "crossover"]
    try:
        doc = json.load(open(jsonl, encoding="utf-8"))
    except (OSError, ValueError) as e:
        report(False, name + ": the sweep's JSON read", e)
        return
    want = sorted(str(b) for b in crossover_batches(doc))
    labels = [t.text for t in root.iter(SVG + "text") if t.get("class") == "crossover-label"]
    good = sorted(rings) == want and all(any(("at batch %s" % b) in l or "every batch" in l for l in labels)
                                         for b in rings)
    report(good, name + ": the rings where the JSON's crossovers are", "rings %s, JSON %s, labels %s"
           % (rings, want, labels))


def crossover_batches(doc):
    """The batches the JSON's pairs name a crossover at (0: none)."""
    return [p["batch"] for p in doc["crossovers"] if p["batch"] > 0]


def main():
    tmp = tempfile.mkdtemp()
    try:
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"), XDG_DATA_HOME=os.path.join(tmp, "data"),
                   NNLAB_PYTHON="/nonexistent")
        try:
            cal = subprocess.run([os.path.join(build, "tests", "cal_install"), "calibration-cpu-dev2.txt"], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            report(cal.returncode == 0, "the recorded calibration installed", cal.stderr)
        except OSError as e:
            report(False, "the recorded calibration installed", e)
        first = None
        for p in presets():
            svg = os.path.join(tmp, p + "-sweep.svg")
            r = run(["sweep", "-p", p, "--devices", "cpu,gpu", "--gpu-profile", "t4", "--batches", "1,8,64",
                     "--steps", "2", "--warmup", "0", "--json", "--svg", svg], env, svg + ".json")
            report(r.returncode == 0, p + ": sweep --svg", r.stderr)
            if r.returncode == 0:
                check_rings(p + " sweep", check(p + " sweep", svg), svg + ".json")
                first = first or svg
            svg = os.path.join(tmp, p + "-race.svg")
            r = run(["train", "-p", p, "--race-predicted", "--steps", "3", "--no-validation", "-q", "--svg", svg],
                    env)
            report(r.returncode == 0, p + ": train --race-predicted --svg", r.stderr)
            if r.returncode == 0:
                check(p + " race of ways", svg)
        svg = os.path.join(tmp, "run.svg")
        r = run(["train", "-p", "mnist-mlp-128", "--steps", "40", "--log-every", "10", "-q", "--svg", svg], env)
        report(r.returncode == 0, "train --svg", r.stderr)
        if r.returncode == 0:
            check("a run with its validation", svg)
        rsvg = shutil.which("rsvg-convert")
        if not rsvg or not first:
            n_skip = "rsvg-convert not installed (librsvg2-bin)" if not rsvg else "no sweep SVG"
            globals()["n"] += 1
            print("ok %d - # SKIP rsvg-convert renders a slide: %s" % (n, n_skip))
        else:
            png = os.path.join(tmp, "slide.png")
            r = subprocess.run([rsvg, "-o", png, first], stderr=subprocess.PIPE, text=True)
            head = open(png, "rb").read(8) if os.path.exists(png) else b""
            report(r.returncode == 0 and head == b"\x89PNG\r\n\x1a\n", "rsvg-convert renders a slide to a PNG",
                   r.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
