#!/usr/bin/env python3
"""Refit the framework way's CPU figures (docs/ways.md, nnlab/framework.h) and tabulate them.

The terms of every row of tests/fixtures/framework-cpu-fit.csv are priced by nnlab's own model
from each host's calibration (tests/fixtures/calibration-cpu-HOST.txt); `tests/test_framework
--terms` prints them. This script fits the form to them as the C code does
(nn_framework_fit_cpu): least squares on relative errors, no figure negative, the eight figures
together on the fitted hosts (FIT_HOSTS below; the thread figures only where they ran more than
one thread count). It prints the figures as the profiles' [framework] keys, each host's root
mean square and largest relative error, each fitted host held out (the figures fitted on the
others), and a table per host: preset x batch, predicted / measured (us).

    make -C build check TESTS= NVCC_GENCODE=...        # builds tests/test_framework
    tools/fit_framework_cpu.py --build build
    tools/fit_framework_cpu.py --terms terms.csv --fit-hosts dev3,dev5,dev6,dev7,xeon16

A calibration recorded as JSON (`nnlab calibrate --device cpu --json`, as bench/results'
tarballs hold them) becomes a fixture in the cache file's form with
    tools/fit_framework_cpu.py --convert calibrate-cpu.json > tests/fixtures/calibration-cpu-HOST.txt
(add a comment block saying where and when it was measured).

No third-party modules: python3's standard library only.
"""
import argparse
import csv
import glob
import io
import json
import math
import os
import re
import subprocess
import sys

# The hosts the shipped figures are fitted to (tests/test_framework's, the fixture's header says
# why these): each one's calibration describes the nnlab measured beside PyTorch, and PyTorch ran
# the threads it was given. dev2 (a calibration of an older nnlab) and dev4 (PyTorch's products on
# both cores at "one thread") are checked, not fitted.
FIT_HOSTS = ("dev3", "dev5", "dev6", "dev7", "xeon16")
FIGURES = ("cpu_step_us", "cpu_op_ratio", "cpu_elem_passes", "cpu_param_passes", "cpu_work_ratio",
           "cpu_arith_ratio")


def columns(r):
    """The form's six columns (the thread figures' are apart): what each figure multiplies."""
    return [1.0, r["ops"] * r["op_us"], r["elem_us"], r["param_us"], r["nnlab_pred_us"], r["arith_us"]]


def solve(a, b):
    """Gaussian elimination with partial pivoting; None when singular."""
    k = len(b)
    a = [row[:] for row in a]
    b = b[:]
    for c in range(k):
        p = max(range(c, k), key=lambda r: abs(a[r][c]))
        if abs(a[p][c]) < 1e-300:
            return None
        a[c], a[p] = a[p], a[c]
        b[c], b[p] = b[p], b[c]
        for r in range(c + 1, k):
            f = a[r][c] / a[c][c]
            for j in range(c, k):
                a[r][j] -= f * a[c][j]
            b[r] -= f * b[c]
    x = [0.0] * k
    for r in range(k - 1, -1, -1):
        x[r] = (b[r] - sum(a[r][j] * x[j] for j in range(r + 1, k))) / a[r][r]
    return x


def fit_nonnegative(X, y, given=None):
    """min sum ((given + X . x) / y - 1)^2, x >= 0: the most negative figure held at 0, refitted."""
    given = given or [0.0] * len(y)
    k = len(X[0])
    free = list(range(k))
    while True:
        a = [[sum(X[i][p] * X[i][q] / y[i] ** 2 for i in range(len(y))) for q in free] for p in free]
        b = [sum(X[i][p] / y[i] * (1 - given[i] / y[i]) for i in range(len(y))) for p in free]
        s = solve(a, b)
        if s is None:
            sys.exit("fit_framework_cpu: singular system")
        x = [0.0] * k
        for j, c in enumerate(free):
            x[c] = s[j]
        neg = [c for c in free if x[c] < 0]
        if not neg:
            return x
        free.remove(min(neg, key=lambda c: x[c]))


SPLIT_FIGURES = ("step_us", "op_ratio", "linear_ratio", "conv_ratio", "act_ratio", "other_ratio", "param_passes")


def split_columns(r):
    """--form split: nnlab's predicted work split by the kind of op, a ratio to each (not shipped)."""
    return [1.0, r["ops"] * r["op_us"], r["linear_us"], r["conv_us"], r["act_us"], r["other_us"], r["param_us"]]


def split_thread_columns(r, t0):
    """The split form's two thread figures: the dispatch and the kinds' work, per thread beyond t0."""
    beyond = r["threads"] - t0
    return [r["ops"] * r["op_us"] * beyond,
            (r["linear_us"] + r["conv_us"] + r["act_us"] + r["other_us"]) * beyond]


def split_predict(r, x, thread=(0.0, 0.0), t0=None):
    extra = sum(c * v for c, v in zip(split_thread_columns(r, t0), thread)) if t0 is not None else 0.0
    return sum(c * v for c, v in zip(split_columns(r), x)) + extra + r["fresh_us"]


def split_errors(rows, x, thread=(0.0, 0.0), t0=None):
    e = [split_predict(r, x, thread, t0) / r["torch_us"] - 1 for r in rows]
    return math.sqrt(sum(v * v for v in e) / len(e)), max(abs(v) for v in e), sum(1 for v in e if abs(v) > 0.25)


def host_errors(rows, err, fit_hosts, thread_hosts, threads_column):
    """The table of each host's errors (err(its rows): rms, largest, beyond 25%); the hosts."""
    print("\n| host |%s steps | rms | largest | beyond 25%% |\n|---|%s---:|---:|---:|---:|" %
          ((" threads |", "---:|") if threads_column else ("", "")))
    hosts = list(dict.fromkeys(r["host"] for r in rows))
    for h in hosts:
        mine = [r for r in rows if r["host"] == h]
        rms, mx, n25 = err(mine)
        how = "fitted" if h in fit_hosts else "thread figures" if h in thread_hosts else "not fitted"
        threads = " %d |" % mine[0]["threads"] if threads_column else ""
        print("| %s (%s) |%s %d | %.1f%% | %.1f%% | %d |" % (h, how, threads, len(mine), 100 * rms, 100 * mx, n25))
    return hosts


def split_report(rows, fit_hosts, thread_hosts):
    """The split form fitted on fit_hosts (one thread count), its two thread figures on
    thread_hosts with those held, every host's errors, each host alone against the others of its
    thread count, and the fitted hosts' tables."""
    fitted = [r for r in rows if r["host"] in fit_hosts]
    threads = {r["threads"] for r in fitted}
    if len(threads) != 1:
        sys.exit("fit_framework_cpu: --form split fits hosts of one thread count, not %s" % threads)
    t0 = min(threads)
    x = fit_nonnegative([split_columns(r) for r in fitted], [r["torch_us"] for r in fitted],
                        [r["fresh_us"] for r in fitted])
    others = [r for r in rows if r["host"] in thread_hosts]
    thread = (fit_nonnegative([split_thread_columns(r, t0) for r in others], [r["torch_us"] for r in others],
                              [split_predict(r, x) for r in others]) if len(others) >= 2 else [0.0, 0.0])
    print("# --form split (not shipped), fitted on %s (%d steps, %d threads); thread figures on %s (%d steps)" %
          ("+".join(fit_hosts), len(fitted), t0, "+".join(thread_hosts) or "-", len(others)))
    for k, v in zip(SPLIT_FIGURES, x):
        print("%s = %.6g" % (k, v))
    print("thread_op_ratio = %.6g\nthread_work_ratio = %.6g" % tuple(thread))
    hosts = host_errors(rows, lambda mine: split_errors(mine, x, thread, t0), fit_hosts, thread_hosts, True)
    print("\nEach host of that thread count fitted alone:\n")
    for h in hosts:
        mine = [r for r in rows if r["host"] == h]
        if mine[0]["threads"] not in threads:
            continue
        xh = fit_nonnegative([split_columns(r) for r in mine], [r["torch_us"] for r in mine],
                             [r["fresh_us"] for r in mine])
        cells = []
        for o in hosts:
            other = [r for r in rows if r["host"] == o]
            if other[0]["threads"] in threads:
                rms, mx, n25 = split_errors(other, xh)
                cells.append("%s %.1f%% (largest %.1f%%, %d beyond 25%%)" % (o, 100 * rms, 100 * mx, n25))
        print("- fitted on %s alone (%s): %s" % (h, " ".join("%.4g" % v for v in xh), "; ".join(cells)))
    for h in fit_hosts:
        table(rows, h, lambda r: split_predict(r, x, thread, t0), "--form split, ")


THREAD_FIGURES = ("cpu_thread_op_ratio", "cpu_thread_work_ratio")


def joint_columns(r, with_threads):
    """The form's eight columns (six where the fitted steps ran one thread count: nothing then
    tells the thread figures from op_ratio and work_ratio)."""
    c = columns(r)
    if with_threads:
        extra = max(r["threads"] - 1, 0)
        c += [r["ops"] * r["op_us"] * extra, r["nnlab_pred_us"] * extra]
    return c


def fit_joint(rows):
    """The eight figures by one least squares on relative errors, none negative, as
    nn_framework_fit_cpu fits them; the thread figures 0 where the rows ran one thread count."""
    with_threads = len({r["threads"] for r in rows}) > 1
    x = fit_nonnegative([joint_columns(r, with_threads) for r in rows], [r["torch_us"] for r in rows],
                        [r["fresh_us"] for r in rows])
    return x if with_threads else x + [0.0, 0.0]


def predict(r, x):
    """The form with the eight figures x."""
    return sum(c * v for c, v in zip(joint_columns(r, True), x)) + r["fresh_us"]


def errors(rows, x):
    e = [predict(r, x) / r["torch_us"] - 1 for r in rows]
    rms = math.sqrt(sum(v * v for v in e) / len(e))
    return rms, max(abs(v) for v in e), sum(1 for v in e if abs(v) > 0.25)


def table(rows, host, pred, form=""):
    """host's rows, preset x batch: pred(row) / PyTorch's measured step."""
    mine = [r for r in rows if r["host"] == host]
    presets = list(dict.fromkeys(r["preset"] for r in mine))
    batches = sorted({r["batch"] for r in mine})
    print("\n%s, %spredicted / PyTorch measured (us a step):\n" % (host, form))
    print("| preset | " + " | ".join("b%d" % b for b in batches) + " |")
    print("|---|" + "---|" * len(batches))
    for p in presets:
        cells = []
        for b in batches:
            m = [r for r in mine if r["preset"] == p and r["batch"] == b]
            if not m:
                cells.append("-")
                continue
            pr = pred(m[0])
            cells.append("%.0f / %.0f (%+.0f%%)" % (pr, m[0]["torch_us"], 100 * (pr / m[0]["torch_us"] - 1)))
        print("| %s | %s |" % (p, " | ".join(cells)))


def monotone_conflicts(rows, tol=0.25):
    """The pairs of one host's points that no form growing with the batch can both hold within
    tol: a smaller batch measured slower than (1 + tol) / (1 - tol) x a larger one of the same
    preset. Every term of the form grows with the batch or stays (the operations, the bytes,
    nnlab's predicted step, the fresh pages: so on every row of the fixture), so its prediction
    at the smaller batch is at most that at the larger. Such a pair is the data's, not the
    form's: it needs measuring again."""
    out = []
    for a in rows:
        for b in rows:
            if (a["host"] == b["host"] and a["preset"] == b["preset"] and a["batch"] < b["batch"] and
                    (1 - tol) * a["torch_us"] > (1 + tol) * b["torch_us"]):
                out.append((a, b))
    return out


def read_terms(text):
    rows = []
    for r in csv.DictReader(io.StringIO(text)):
        for k in r:
            if k not in ("host", "preset"):
                r[k] = float(r[k])
        r["batch"] = int(r["batch"])
        r["threads"] = int(r["threads"])
        r.setdefault("fresh_us", 0.0)     # terms printed before the fresh pages priced none
        r.setdefault("arith_us", 0.0)     # or before the per-element arithmetic
        rows.append(r)
    return rows


def convert(path):
    """A `nnlab calibrate --json` object as the cache file's lines cal_fixture.c reads."""
    print(calibration_text(path))


def calibration_text(path):
    """convert's lines, as one text."""
    c = json.load(open(path))
    c = c[0] if isinstance(c, list) else c
    spread_keys = {"gemm": "sgemm", "gemm_1thread": "sgemm on one thread", "mem": "streaming",
                   "op": "issue one op", "sync": "op + synchronise", "host_copy": "host memcpy",
                   "linear": "linear layers", "conv": "convolutions", "elem": "per element"}
    out = ["format = 5", "device = cpu", "machine = %s" % c["machine"]]
    for k in ("gemm_gflops", "gemm_gflops_1thread", "mem_gbps", "op_us", "sync_us", "upload_us", "upload_gbps",
              "host_copy_gbps", "download_us", "matrix_op_us", "fresh_page_us", "vector_floats"):
        out.append("%s = %g" % (k, c.get(k) or 0))
    for k in ("linear_fwd", "linear_bwd", "conv_fwd", "conv_bwd"):
        out.append("%s = %s" % (k, " ".join("%g:%g" % (p["flops"], p["gflops"]) for p in c[k])))
    out.append("elem_ns = " + " ".join("%s:%g:%g" % (k, v[0], v[1]) for k, v in c["elem_ns"].items()))
    spread = c.get("calibration", {}).get("spread", {})
    out.append("spread = " + " ".join("%s:%g" % (k, spread[v]) for k, v in spread_keys.items() if v in spread))
    out.append("threads = %d" % c["threads"])
    return "\n".join(out)


def fastest_nnlab(raw, preset, threads, batch):
    """The fastest of nnlab's rounds at a point (bench/threads.sh's nnlab-P-tT-B-R.json, as its
    table compares them), or None."""
    best = None
    for path in glob.glob(os.path.join(raw, "nnlab-%s-t%d-%d-*.json" % (preset, threads, batch))):
        try:
            us = json.load(open(path)).get("us_per_step")
        except (OSError, ValueError):
            continue
        if us and (best is None or us < best):
            best = us
    return best


def from_threads(raw, name, out):
    """bench/threads.sh's raw folder (a lent machine's CPU: bench/lent-gpu.sh) as the fixture's
    hosts, one a thread count: out/framework-cpu-NAME.csv (host NAME-tT, PyTorch's median step,
    the fastest of nnlab's rounds) and out/calibration-cpu-NAME-tT.txt from the calibration
    threads.sh took at that count. A point without its calibration or nnlab's step is left out
    and said so. Returns the rows written."""
    os.makedirs(out, exist_ok=True)
    cals = {}
    for path in glob.glob(os.path.join(raw, "calibrate-cpu-t*.json")):
        t = int(re.search(r"-t(\d+)\.json$", path).group(1))
        try:
            text = calibration_text(path)
        except (OSError, ValueError, KeyError) as e:
            print("from-threads: %s: not a calibration (%s)" % (path, e), file=sys.stderr)
            continue
        cals[t] = path
        with open(os.path.join(out, "calibration-cpu-%s-t%d.txt" % (name, t)), "w") as f:
            f.write("# A CPU calibration of host %s-t%d: `nnlab calibrate --device cpu --threads %d --json` by\n"
                    "# bench/threads.sh before its steps (%s), converted by tools/fit_framework_cpu.py\n"
                    "# --from-threads.\n%s\n" % (name, t, t, path, text))
    rows = []
    for path in sorted(glob.glob(os.path.join(raw, "torch-*-cpu-t*-*.json"))):
        m = re.match(r"torch-(.+)-cpu-t(\d+)-(\d+)\.json$", os.path.basename(path))
        if not m:
            continue
        preset, t, batch = m.group(1), int(m.group(2)), int(m.group(3))
        got = json.load(open(path))
        torch_us = got.get("us_per_step_median")
        nnlab_us = fastest_nnlab(raw, preset, t, batch)
        error = got.get("error", "?")
        why = ("PyTorch failed: %s" % (error.get("message", error) if isinstance(error, dict) else error)
               if torch_us is None else
               "no calibration at %d threads" % t if t not in cals else
               "no nnlab step" if nnlab_us is None else "")
        if why:
            print("from-threads: %s b%d t%d left out: %s" % (preset, batch, t, why), file=sys.stderr)
            continue
        rows.append((t, preset, batch, torch_us, nnlab_us, got.get("torch", "-"), got.get("rounds", 1)))
    rows.sort()
    lines = ["# hosts %s-tT: bench/threads.sh in %s, one host a thread count T: PyTorch %s's median step"
             % (name, raw, rows[0][5] if rows else "-"),
             "#   (bench/torch_grid.py, every pool at T, %s round(s)), nnlab's fastest round (nnlab bench"
             % (rows[0][6] if rows else "-"),
             "#   --threads T), each priced from calibration-cpu-%s-tT.txt" % name,
             "host,preset,batch,torch_us,nnlab_us"]
    lines += ["%s-t%d,%s,%d,%.1f,%.1f" % (name, t, p, b, tu, nu) for t, p, b, tu, nu, _, _ in rows]
    with open(os.path.join(out, "framework-cpu-%s.csv" % name), "w") as f:
        f.write("\n".join(lines) + "\n")
    return len(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", help="a build folder: runs its tests/test_framework --terms")
    ap.add_argument("--terms", help="the terms as CSV (tests/test_framework --terms)")
    ap.add_argument("--fit-hosts", default=",".join(FIT_HOSTS), help="the hosts the eight figures are fitted to")
    ap.add_argument("--thread-hosts", default="xeon16", help="--form split: the hosts its thread figures are "
                    "fitted to")
    ap.add_argument("--max-batch", type=int, default=0, help="leave out rows of a larger batch (0: none)")
    ap.add_argument("--convert", help="print a calibration JSON in the cache file's form, and stop")
    ap.add_argument("--from-threads", nargs=3, metavar=("RAW", "NAME", "OUT"),
                    help="bench/threads.sh's RAW folder as fixture hosts NAME-tT in OUT "
                         "(framework-cpu-NAME.csv, calibration-cpu-NAME-tT.txt), and stop")
    ap.add_argument("--fresh-page-us", default="",
                    help="HOST=US,...: price those hosts' fresh bytes at US a page where their calibration "
                         "predates the figure (an exploration: the shipped terms take the calibration's)")
    ap.add_argument("--form", choices=("shipped", "split"), default="shipped",
                    help="split: a ratio to each kind of nnlab's predicted work (linear, conv, per-element "
                         "ops, bytes-priced layers), fitted on --fit-hosts, no thread figures; not shipped")
    a = ap.parse_args()
    if a.convert:
        convert(a.convert)
        return
    if a.from_threads:
        n = from_threads(*a.from_threads)
        print("from-threads: %d steps in %s" % (n, os.path.join(a.from_threads[2], "framework-cpu-%s.csv"
                                                                  % a.from_threads[1])))
        return
    if a.build:
        text = subprocess.run([a.build + "/tests/test_framework", "--terms"], check=True, capture_output=True,
                              text=True).stdout
    elif a.terms:
        text = open(a.terms).read()
    else:
        ap.error("--build or --terms")
    rows = [r for r in read_terms(text) if not a.max_batch or r["batch"] <= a.max_batch]
    for item in filter(None, a.fresh_page_us.split(",")):
        host, us = item.split("=")
        for r in rows:
            if r["host"] == host:
                r["fresh_us"] = r.get("fresh_bytes", 0.0) / 4096 * float(us)
        print("# %s: fresh pages priced at %s us (--fresh-page-us: not its calibration's)" % (host, us))
    fit_hosts = a.fit_hosts.split(",")
    if a.form == "split":
        split_report(rows, fit_hosts, [h for h in a.thread_hosts.split(",") if h])
        return
    x = fit_joint([r for r in rows if r["host"] in fit_hosts])
    fitted = [r for r in rows if r["host"] in fit_hosts]
    print("# fitted on %s (%d steps, threads %s)" %
          ("+".join(fit_hosts), len(fitted), "/".join(str(t) for t in sorted({r["threads"] for r in fitted}))))
    for k, v in zip(FIGURES + THREAD_FIGURES, x):
        print("%s = %.6g" % (k, v))
    hosts = host_errors(rows, lambda mine: errors(mine, x), fit_hosts, [], False)
    if len(fit_hosts) > 1:
        print("\nEach fitted host held out (the eight figures fitted on the others):\n")
        for h in fit_hosts:
            xh = fit_joint([r for r in rows if r["host"] in fit_hosts and r["host"] != h])
            rms, mx, n25 = errors([r for r in rows if r["host"] == h], xh)
            print("- %s: %.1f%% rms, largest %.1f%%, %d beyond 25%% (fitted on the others: %s)" %
                  (h, 100 * rms, 100 * mx, n25, " ".join("%.4g" % v for v in xh)))
    conflicts = monotone_conflicts(rows)
    print("\nPoints no form growing with the batch can hold within 25%% (a smaller batch measured more than "
          "1.25 / 0.75 x a larger one): %d\n" % len(conflicts))
    for a, b in conflicts:
        print("- %s %s: b%d %.0f us, b%d %.0f us" % (a["host"], a["preset"], a["batch"], a["torch_us"], b["batch"],
                                                   b["torch_us"]))
    for h in hosts:
        table(rows, h, lambda r: predict(r, x))


if __name__ == "__main__":
    main()
