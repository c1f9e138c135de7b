#!/usr/bin/env python3
"""bench/torch_grid.py - PyTorch's step of one nnlab preset at many batches and
thread counts, in one process.

Importing torch takes 2-5 s; a benchmark that asks for 30 points of one preset
(bench/gpu.sh on a lent GPU machine with minutes to spend, bench/threads.sh)
pays it once here instead of 30 times. Each point is the helper's own step and
timing (tools/nnlab-torch-step.py's `run`: the same network, loss, optimiser,
read-back and median as `nnlab bench --with-pytorch` and bench/pytorch_step.py),
written as that helper's one JSON object to its own file:

    OUT/torch-PRESET-DEVICE-BATCH.json           (no --threads: PyTorch's default)
    OUT/torch-PRESET-DEVICE-tTHREADS-BATCH.json  (--threads given)
    OUT/torch-PRESET-cuda-framework-BATCH.json   (on a GPU, the batch copied each step)

The helper's framework way copies each batch to the device as `.to(device)` does;
--data-on-device keeps the batches there (its way framework-data-on-device). On
the CPU the two are one step (`.to("cpu")` is the tensor itself), so the CPU's
files carry no way; on a GPU the data-on-device step keeps the plain name (what
every recorded run before 2026-11-30 measured) and the copied one is tagged
"framework-".

    python3 bench/torch_grid.py PRESET.ini --out DIR --batches 1,4,16 [--threads 1,4,16]
        [--device cpu|cuda] [--steps 20] [--warmup 3] [--rounds 1] [--deadline EPOCH_SECONDS]

A point that fails writes the helper's error object instead; --deadline (a
time.time() value) stops before a point that would start after it, so that a
budgeted run (bench/gpu.sh --budget) ends on time with what it measured.
Before the grid the process is warmed by its first point, measured once and
not kept. --rounds R measures the whole grid R times, round after round; each
file then holds the median of its point's rounds (`rounds_us`: every round's
median), rewritten after each round so that a deadline keeps what was done.
"""
import argparse
import importlib.util
import json
import os
import sys
import time

HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tools",
                      "nnlab-torch-step.py")


def load_helper():
    sys.path.insert(0, os.path.dirname(HELPER))     # its nnlab_torch_net beside it
    spec = importlib.util.spec_from_file_location("nnlab_torch_step", HELPER)
    helper = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helper)
    return helper


def int_list(text):
    return [int(v) for v in text.split(",") if v.strip()]


def way_tag(args):
    """The way's part of a point's file name (the module's docstring)."""
    if args.way != "eager":
        return f"{args.way}-"
    return "" if args.data_on_device or args.device == "cpu" else "framework-"


def combine(results):
    """One point's rounds as one helper object: the median of the rounds' medians
    (the mean of their means), every round's median kept in rounds_us; a failed
    round's error object when any failed."""
    for r in results:
        if r.get("us_per_step_median") is None:
            return r
    medians = sorted(r["us_per_step_median"] for r in results)
    k = len(medians)
    median = round(medians[k // 2] if k % 2 else (medians[k // 2 - 1] + medians[k // 2]) / 2, 3)   # as the helper's
    out = dict(results[-1])
    out.update(us_per_step=median, us_per_step_median=median, rounds=k,
               rounds_us=[r["us_per_step_median"] for r in results])
    if all(r.get("us_per_step_mean") is not None for r in results):
        out["us_per_step_mean"] = round(sum(r["us_per_step_mean"] for r in results) / k, 3)
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("preset")
    ap.add_argument("--out", required=True)
    ap.add_argument("--batches", type=int_list, required=True)
    ap.add_argument("--threads", type=int_list, default=None)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--deadline", type=float, default=0.0)
    ap.add_argument("--rounds", type=int, default=1,
                    help="measure the grid R times, round after round; a point's figure is the median of its rounds")
    ap.add_argument("--way", default="eager", choices=("eager", "graph", "compile"),
                    help="the helper's --way; a way but eager names its files torch-P-D-WAY-B.json")
    ap.add_argument("--data-on-device", action="store_true",
                    help="the helper's way framework-data-on-device (else each batch copied, as .to() does)")
    args = ap.parse_args(argv)

    helper = load_helper()
    name = os.path.splitext(os.path.basename(args.preset))[0]
    try:
        preset = helper.Preset(args.preset)
        torch = helper.import_torch()
    except helper.Failure as f:
        print(json.dumps(f.as_json()))
        return f.status
    os.makedirs(args.out, exist_ok=True)
    points = [(threads, batch) for threads in args.threads or [0] for batch in args.batches]
    rounds = {pt: [] for pt in points}

    def measure(threads, batch):
        try:
            # the helper's own parser: every option it has gets its default
            # (a Namespace built here missed one it gained, and every point failed)
            point = helper.parse_args([args.preset, "--batch", str(batch), "--steps", str(args.steps),
                                       "--warmup", str(args.warmup), "--threads", str(threads),
                                       "--device", args.device, "--seed", "1", "--way", args.way]
                                      + (["--data-on-device"] if args.data_on_device else []))
            return helper.run(torch, preset, point)
        except helper.Failure as f:
            return f.as_json()

    # the process warmed first: the grid's first point once, not kept (the first point a
    # process measured ran 1.2-1.6x its own repeat with PyTorch 1.13 on 2 threads)
    if not (args.deadline and time.time() > args.deadline):
        measure(*points[0])
    for r in range(args.rounds):
        for threads, batch in points:      # round after round: a drift shows in every point alike
            if args.deadline and time.time() > args.deadline:
                print(f"torch_grid: {name}: the deadline passed before batch {batch}, threads {threads}"
                      f" (round {r + 1} of {args.rounds})", file=sys.stderr)
                return 1
            rounds[(threads, batch)].append(measure(threads, batch))
            tag = (f"t{threads}-" if args.threads else "") + way_tag(args)
            path = os.path.join(args.out, f"torch-{name}-{args.device}-{tag}{batch}.json")
            with open(path, "w") as f:
                f.write(json.dumps(combine(rounds[(threads, batch)])) + "\n")
    return 1 if any("us_per_step_median" not in combine(v) for v in rounds.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
