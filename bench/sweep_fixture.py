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
               on a lent machine (docs/decisions.md), the median of three
               by much less.
Each point is the sweep's mean step ("us_per_step_stat": "mean"); MACHINE
says where and when, with nnlab's commit."""
import json
import os
import re
import statistics
import sys


def gpu_points(path, way):
    d = json.load(open(path))
    return {p["batch"]: p["us_per_step"] for p in d["points"]
            if p["device"] == "gpu" and p.get("source") == "measured" and p["way"] == way}


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
        print(line(f"{p} default", machine + " (the graph way, data on the device)",
                   gpu_points(os.path.join(raw, f"sweep-{p}-graph.json"), "graph")))
        runs = [gpu_points(os.path.join(raw, f), "eager") for f in sorted(os.listdir(raw))
                if re.fullmatch(rf"sweep-{re.escape(p)}-eager\d*\.json", f)]
        runs = [r for r in runs if r]
        if not runs:
            continue
        batches = sorted({b for r in runs for b in r})
        median = {b: statistics.median(r[b] for r in runs if b in r) for b in batches}
        print(line(f"{p} eager", machine + f" (the write-ups' eager way: the median of {len(runs)} runs)",
                   median, runs))


if __name__ == "__main__":
    main()
