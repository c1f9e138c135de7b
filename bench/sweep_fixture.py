#!/usr/bin/env python3
"""bench/sweep_fixture.py - a recorded bench/gpu.sh run as a cost-model test
fixture (tests/model_fixture.c reads it).

    python3 bench/sweep_fixture.py RAWDIR "MACHINE" > tests/fixtures/NAME.jsonl

Per preset of RAWDIR (gpu.sh's raw folder), two lines:
  "P default": the graph way of sweep-P-graph.json (a CUDA graph, the data
               on the device: nnlab's defaults);
  "P eager":   the write-ups' eager way (--no-graph --no-data-on-device
               --sync-every-step), each batch's median over the runs
               recorded (sweep-P-eager.json, -eager2.json, ...): one synced
               run of these steps varies by up to 60% a point from the next
               on a lent machine (docs/decisions/0113-synced-eager-way-median-of-repeats.md), the median of three
               by much less.
Each point is the sweep's mean step ("us_per_step_stat": "mean"); MACHINE
says where and when, with nnlab's commit."""
import json
import os
import re
import statistics
import sys


def gpu_points(path):
    """A sweep file's measured GPU points: {(way, batch): us per step}."""
    d = json.load(open(path))
    return {(p["way"], p["batch"]): p["us_per_step"] for p in d["points"]
            if p["device"] == "gpu" and p.get("source") == "measured"}


def eager_repeats(raw, preset):
    """The write-ups' eager way's runs of a preset (sweep-P-eager*.json), each {batch: us}."""
    runs = [gpu_points(os.path.join(raw, f)) for f in sorted(os.listdir(raw))
            if re.fullmatch(rf"sweep-{re.escape(preset)}-eager\d*\.json", f)]
    return [r for r in ({b: us for (w, b), us in run.items() if w == "eager"} for run in runs) if r]


def median_by_batch(runs):
    """Each batch's median over the runs that measured it."""
    batches = sorted({b for r in runs for b in r})
    return {b: statistics.median(r[b] for r in runs if b in r) for b in batches}


def line(tag, machine, points, runs=None):
    pts = []
    for b in sorted(points):
        pt = {"device": "gpu", "batch": b, "source": "measured",
              "way": "graph" if tag.endswith("default") else "eager", "us_per_step": round(points[b], 4)}
        if runs:
            pt["runs_us"] = [round(r[b], 4) for r in runs if b in r]
        pts.append(pt)
    return json.dumps({"tag": tag, "machine": machine, "us_per_step_stat": "mean", "points": pts})


def main():
    raw, machine = sys.argv[1], sys.argv[2]
    presets = sorted(m.group(1) for f in os.listdir(raw) if (m := re.fullmatch(r"sweep-(.+)-graph\.json", f)))
    for p in presets:
        graph = {b: us for (w, b), us in gpu_points(os.path.join(raw, f"sweep-{p}-graph.json")).items()
                 if w == "graph"}
        print(line(f"{p} default", machine + " (the graph way, data on the device)", graph))
        runs = eager_repeats(raw, p)
        if runs:
            print(line(f"{p} eager", machine + f" (the write-ups' eager way: the median of {len(runs)} runs)",
                       median_by_batch(runs), runs))


if __name__ == "__main__":
    main()
