#!/usr/bin/env python3
"""bench/fit_profile.py - refit some [kernels] figures of a GPU profile to a
recorded bench/gpu.sh run, by the model itself.

    python3 bench/fit_profile.py PROFILE.ini RAWDIR --keys k1,k2 --presets p1,p2
        [--nnlab build/nnlab] [--fixed k=v,...]

RAWDIR is bench/gpu.sh's raw folder (sweep-P-graph.json: the measured graph
and eager ways, data on the device; sweep-P-eager*.json: the write-ups' eager
way, --no-graph --no-data-on-device --sync-every-step, once per --eager-runs,
fitted as the way "synced": each batch's median over those runs, priced with
the same switches). The predicted steps come from `nnlab
sweep --devices gpu --gpu-profile` on a copy of the profile (no GPU needed:
the model prices them), so the fit and the lab price alike. The objective is
the one the h200 profile was fitted with (docs/decisions/0096, "The GPU cost
model prices each call by its kind"): the mean squared log(predicted / measured) plus 300x
the mean squared excess of |predicted / measured - 1| over 0.22, over every
measured point of the given presets, graph and eager. A coordinate descent
over the keys, each scaled by factors from 4 down to 1.02; prints the
figures, then each point's error."""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import tempfile

from sweep_fixture import eager_repeats, gpu_points, median_by_batch


def measured(raw, preset):
    """The graph file's ways, and the write-ups' eager way as "synced": each
    batch's median over its runs (bench/sweep_fixture.py reads them alike)."""
    synced = median_by_batch(eager_repeats(raw, preset))
    return {**gpu_points(os.path.join(raw, f"sweep-{preset}-graph.json")),
            **{("synced", b): us for b, us in synced.items()}}


def write_profile(src, dst, values):
    text = open(src).read()
    for k, v in values.items():
        text, n = re.subn(rf"(?m)^{re.escape(k)}\s*=.*$", f"{k} = {v:.6g}", text)
        if n != 1:
            raise SystemExit(f"fit_profile: {k} is not in {src} once")
    open(dst, "w").write(text)


SYNCED = ["--no-graph", "--no-data-on-device", "--sync-every-step"]


def predict(nnlab, pdir, stem, preset, batches, env, switches=(), way_as=None):
    out = subprocess.run([nnlab, "sweep", "--preset", preset, "--devices", "gpu", "--gpu-profile", stem,
                          "--batches", ",".join(map(str, batches)), "--steps", "1", "--warmup", "0", "--json",
                          *switches], capture_output=True, text=True, env=dict(env, NNLAB_PROFILES_DIR=pdir))
    d = json.loads(out.stdout)
    return {(way_as or p["way"], p["batch"]): p["us_per_step"] for p in d["points"]
            if p["device"] == "gpu" and (way_as is None or p["way"] == "eager")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("raw")
    ap.add_argument("--keys", required=True)
    ap.add_argument("--presets", required=True)
    ap.add_argument("--nnlab", default="build/nnlab")
    ap.add_argument("--fixed", default="")
    ap.add_argument("--ways", default="graph,eager", help="the measured ways fitted: graph, eager, synced")
    ap.add_argument("--exclude", default="", help="points left out: preset:way:batch,...")
    a = ap.parse_args()
    keys, presets = a.keys.split(","), a.presets.split(",")
    text = open(a.profile).read()
    values = {k: float(re.search(rf"(?m)^{re.escape(k)}\s*=\s*(\S+)", text).group(1)) for k in keys}
    fixed = {kv.split("=")[0]: float(kv.split("=")[1]) for kv in a.fixed.split(",") if kv}
    ways = set(a.ways.split(","))
    left_out = {tuple(x.split(":")) for x in a.exclude.split(",") if x}
    meas = {p: {k: v for k, v in measured(a.raw, p).items()
                if k[0] in ways and (p, k[0], str(k[1])) not in left_out} for p in presets}
    pdir = tempfile.mkdtemp()
    stem = os.path.splitext(os.path.basename(a.profile))[0]
    for f in os.listdir(os.path.dirname(os.path.abspath(a.profile))):
        shutil.copy(os.path.join(os.path.dirname(os.path.abspath(a.profile)), f), pdir)
    env = dict(os.environ)

    def errors(v):
        write_profile(a.profile, os.path.join(pdir, stem + ".ini"), {**v, **fixed})
        errs = []
        for p in presets:
            pr = predict(a.nnlab, pdir, stem, p, sorted({b for w, b in meas[p] if w != "synced"}), env)
            if "synced" in ways:
                pr.update(predict(a.nnlab, pdir, stem, p, sorted({b for w, b in meas[p] if w == "synced"}),
                                  env, SYNCED, "synced"))
            for (way, b), us in sorted(meas[p].items()):
                if (way, b) in pr:
                    errs.append((p, way, b, pr[(way, b)], us))
        return errs

    def cost(v):
        e = errors(v)
        logs = [math.log(pr / us) ** 2 for _, _, _, pr, us in e]
        excess = [max(0.0, abs(pr / us - 1) - 0.22) ** 2 for _, _, _, pr, us in e]
        return sum(logs) / len(logs) + 300 * sum(excess) / len(excess)

    best = cost(values)
    for factor in (4.0, 2.0, 1.4, 1.15, 1.05, 1.02):
        improved = True
        while improved:
            improved = False
            for k in keys:
                for f in (factor, 1 / factor):
                    trial = dict(values, **{k: values[k] * f})
                    c = cost(trial)
                    if c < best - 1e-9:
                        best, values, improved = c, trial, True
    print("cost", round(best, 5))
    for k in keys:
        print(f"{k} = {values[k]:.4g}")
    for p, way, b, pr, us in errors(values):
        print(f"{p} {way} {b}: predicted {pr:.1f} measured {us:.1f} {pr / us - 1:+.1%}")


if __name__ == "__main__":
    main()
