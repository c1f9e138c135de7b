#!/usr/bin/env python3
"""bench/gpu_table.py RAW SMOKE [--fixture CSV] - bench/gpu.sh's table, from the
files it wrote in RAW (JSON from nnlab and bench/pytorch_step.py, ncu's CSV, the
machine's facts), as Markdown on stdout. Only measured figures are printed; a
missing file is a "-" (never a guess). --fixture: PyTorch's framework way on
cuda (each batch copied, torch-P-cuda-framework-B.json) also as CSV in the form
of tests/fixtures/framework-gpu-h200.csv, its "# way: framework" line
included: the data the GPU framework figures are refitted to (docs/ways.md)."""
import csv
import glob
import json
import os
import re
import sys


def read(path, default=""):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def load_json(path):
    """The file's JSON object (nnlab prints one, indented; pytorch_step.py one line)."""
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    for candidate in (text, text.splitlines()[-1] if text else ""):
        try:
            return json.loads(candidate)
        except ValueError:
            pass
    return None


def fmt(v):
    return "-" if v is None else (f"{v:,.0f}" if v >= 100 else f"{v:.1f}")


def ratio(a, b):
    return "-" if a is None or b is None or b <= 0 else f"{a / b:.2f}x"


def sweep_points(raw, preset, way):
    """{(device, way, batch): us} of the measured points of one sweep file (a
    sweep measures a GPU's eager and graph ways side by side by default)."""
    got = load_json(os.path.join(raw, f"sweep-{preset}-{way}.json"))
    out = {}
    for p in (got or {}).get("points", []):
        if p.get("source") == "measured" and p.get("us_per_step") is not None:
            out[(p["device"], p.get("way", ""), p["batch"])] = p["us_per_step"]
    return out


def torch_us(raw, preset, device, batch, way=None):
    """PyTorch's step (the helper's eager way, or --way graph or compile)."""
    tag = f"{way}-" if way else ""
    got = load_json(os.path.join(raw, f"torch-{preset}-{device}-{tag}{batch}.json"))
    return got.get("us_per_step") if got else None


def eager_runs(raw, preset):
    """The write-ups' eager sweeps of a preset: sweep-P-eager.json, then
    sweep-P-eager2.json... (bench/gpu.sh --eager-runs N)."""
    runs, n = [], 1
    while True:
        name = "eager" if n == 1 else f"eager{n}"
        if not os.path.exists(os.path.join(raw, f"sweep-{preset}-{name}.json")):
            return runs
        runs.append(sweep_points(raw, preset, name))
        n += 1


def step_table(raw):
    files = sorted(glob.glob(os.path.join(raw, "sweep-*-graph.json")))
    presets = [os.path.basename(p)[len("sweep-"):-len("-graph.json")] for p in files]
    extra = max([len(eager_runs(raw, p)) for p in presets] + [1]) - 1
    head = ("| preset | batch | nnlab cpu | nnlab gpu graph | nnlab gpu eager | nnlab gpu eager, copies, sync "
            + "".join(f"| (run {n + 2}) " for n in range(extra))
            + "| PyTorch cuda | PyTorch cuda, batch copied | PyTorch cuda graph | PyTorch compile | PyTorch cpu "
            + "| graph / PyTorch cuda | graph / PyTorch graph | eager / PyTorch cuda |")
    rows = [head, "|---|---:|" + "---:|" * (12 + extra)]
    for preset in presets:
        ways, synced = sweep_points(raw, preset, "graph"), eager_runs(raw, preset)
        first = synced[0] if synced else {}
        for b in sorted({k[2] for k in ways} | {k[2] for run in synced for k in run}):
            g, e = ways.get(("gpu", "graph", b)), ways.get(("gpu", "eager", b))
            s = first.get(("gpu", "eager", b))
            more = "".join(f"| {fmt(synced[n + 1].get(('gpu', 'eager', b)) if n + 1 < len(synced) else None)} "
                           for n in range(extra))
            tc, tp = torch_us(raw, preset, "cuda", b), torch_us(raw, preset, "cpu", b)
            tg, tk = torch_us(raw, preset, "cuda", b, "graph"), torch_us(raw, preset, "cuda", b, "compile")
            tf = torch_us(raw, preset, "cuda", b, "framework")
            rows.append(f"| {preset} | {b} | {fmt(ways.get(('cpu', 'nnlab', b)))} | {fmt(g)} | {fmt(e)} | {fmt(s)} "
                        f"{more}| {fmt(tc)} | {fmt(tf)} | {fmt(tg)} | {fmt(tk)} | {fmt(tp)} | {ratio(g, tc)} "
                        f"| {ratio(g, tg)} | {ratio(s, tc)} |")
    return rows


def framework_points(raw):
    """[(preset, batch, helper's JSON)] of PyTorch's framework way on cuda, the
    batch copied each step, in preset then batch order."""
    out = []
    for path in glob.glob(os.path.join(raw, "torch-*-cuda-framework-*.json")):
        m = re.match(r"torch-(.+)-cuda-framework-(\d+)\.json$", os.path.basename(path))
        got = load_json(path)
        if m and got and got.get("us_per_step_median") is not None:
            out.append((m.group(1), int(m.group(2)), got))
    return sorted(out, key=lambda p: (p[0], p[1]))


def write_fixture(raw, path):
    """framework_points as tests/fixtures/framework-gpu-*.csv's rows: the median
    step and the mean, with where and how they were measured."""
    points = framework_points(raw)
    first = points[0][2] if points else {}
    lines = ["# PyTorch's measured training step on a GPU, the framework way (bench/gpu.sh, "
             "bench/gpu_table.py --fixture): "
             f"{first.get('device_name', '-')}, PyTorch {first.get('torch', '-')}, "
             f"{first.get('threads', '-')} threads, {first.get('steps', '-')} steps after "
             f"{first.get('warmup', '-')} of warm-up; torch_us the median step, mean_us the mean;",
             f"# the data: {first.get('data', '-')}. From {raw}.",
             "# way: framework",
             "preset,batch,torch_us,mean_us"]
    lines += [f"{p},{b},{j['us_per_step_median']:.1f},{j.get('us_per_step_mean', j['us_per_step_median']):.1f}"
              for p, b, j in points]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return len(points)


def race_table(raw):
    """`nnlab train --race`: each job's way, time and us/step, as measured."""
    rows = []
    for path in sorted(glob.glob(os.path.join(raw, "race-*.json"))):
        got = load_json(path)
        jobs = got if isinstance(got, list) else (got or {}).get("jobs", [])
        if not jobs:
            rows.append(f"({os.path.basename(path)}: no result; see its .err)")
            continue
        rows += [f"{os.path.basename(path)[5:-5]}:", "", "| device | way | source | steps | training s | us/step |",
                 "|---|---|---|---:|---:|---:|"]
        for j in jobs:
            rows.append(f"| {j.get('device', '-')} | {j.get('way', '-')} | {j.get('source', '-')} "
                        f"| {j.get('steps', '-')} | {j.get('train_s', '-')} | {fmt(j.get('us_per_step'))} |")
        rows.append("")
    return rows or ["(not run)"]


def jacobian_table(raw):
    rows = ["| preset | device | method | val | seconds | warm-up s | rows/s |",
            "|---|---|---|---:|---:|---:|---:|"]
    for path in sorted(glob.glob(os.path.join(raw, "jac-*.json"))):
        j = load_json(path)
        if not j:
            continue
        rows.append(f"| {j.get('preset')} | {j.get('device')} | {j.get('method')} | {j.get('val')} "
                    f"| {j.get('seconds')} | {j.get('warmup_s', '-')} | {j.get('rows_per_s')} |")
    return rows


def kernel_table(raw, batch, top=15):
    path = os.path.join(raw, f"ncu-{batch}.csv")
    text = read(path)
    start = text.find('"ID"')
    if start < 0:
        return [f"(no ncu figures for batch {batch})"]
    total = {}
    for r in csv.DictReader(text[start:].splitlines()):
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        scale = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6}
        us = float(r["Metric Value"].replace(",", "")) * scale.get(r.get("Metric Unit"), 1.0)
        name = r.get("Kernel Name", "?")[:90]
        total[name] = total.get(name, 0.0) + us
    s = sum(total.values())
    rows = [f"LeNet (lenet-cifar10), batch {batch}, eager, 4 steps (1 warm-up): {s:,.1f} us of kernels",
            "", "| us | share | kernel |", "|---:|---:|---|"]
    for name, us in sorted(total.items(), key=lambda kv: -kv[1])[:top]:
        rows.append(f"| {us:,.1f} | {100 * us / s:.1f}% | `{name}` |")
    return rows


def machine(raw):
    smi = read(os.path.join(raw, "nvidia-smi.txt")).strip() or "-"
    cpu = read(os.path.join(raw, "cpu.txt")).split("\n")
    # OPENBLAS_VERBOSE says "Core:" at each choice: its own at load, then the
    # one nnlab raises it to where it took less than the CPU runs
    # (backends/cpu/cpu_blas_core.c); the last is the core that ran
    cores = re.findall(r"Core: *(\S+)", read(os.path.join(raw, "openblas.txt")))
    nvcc = re.search(r"release ([0-9.]+)", read(os.path.join(raw, "nvcc.txt")))
    gpu_line = [l for l in read(os.path.join(raw, "devices.txt")).splitlines() if l.startswith("gpu")]
    torch = "-"
    for path in glob.glob(os.path.join(raw, "torch-*.json")):
        j = load_json(path)
        if j:
            torch = j.get("torch", "-")
            break
    tests = read(os.path.join(raw, "test_gpu.txt"))
    ok = len(re.findall(r"^ok ", tests, re.M))
    bad = len(re.findall(r"^not ok ", tests, re.M))
    # test_gpu is a cmocka program: its summary lines, not TAP's
    cm_ok = re.search(r"^\[  PASSED  \] (\d+) test", tests, re.M)
    cm_bad = re.search(r"^\[  FAILED  \] (\d+) test", tests, re.M)
    if cm_ok or cm_bad:
        ok, bad = int(cm_ok.group(1)) if cm_ok else 0, int(cm_bad.group(1)) if cm_bad else 0
    stages = read(os.path.join(raw, "stages.txt")).strip().splitlines()
    return [f"- GPU (nvidia-smi: name, driver, memory): {smi}",
            f"- nnlab's GPU backend: {gpu_line[0] if gpu_line else '-'}",
            f"- CPU: {cpu[0] if cpu and cpu[0] else '-'}, {cpu[1] if len(cpu) > 1 else '?'} cores; "
            f"OpenBLAS core: {cores[-1] if cores else '-'}"
            + (f" (OpenBLAS took {cores[0]}; nnlab raised it)" if len(cores) > 1 and cores[0] != cores[-1] else ""),
            f"- CUDA toolkit (nvcc): {nvcc.group(1) if nvcc else '-'}; PyTorch: {torch}",
            f"- tests/test_gpu (NNLAB_REQUIRE_GPU=1): " +
            (f"{ok} passed, {bad} failed" if ok or bad else tests.strip()[:300] or "-"),
            "- stages: " + ("; ".join(stages) if stages else "-")]


def main():
    raw, smoke = sys.argv[1], sys.argv[2] == "1"
    if len(sys.argv) == 5 and sys.argv[3] == "--fixture":
        n = write_fixture(raw, sys.argv[4])
        print(f"gpu_table: {n} steps of PyTorch's framework way on cuda in {sys.argv[4]}", file=sys.stderr)
    elif len(sys.argv) != 3:
        sys.exit("usage: gpu_table.py RAW SMOKE [--fixture CSV]")
    out = ["# nnlab on a GPU: bench/gpu.sh" + (" --smoke (emulated GPU: CPU times, not a GPU's)" if smoke else ""),
           "", "## The machine", ""] + machine(raw)
    out += ["", "## Step times, us (nnlab: the sweep's mean; PyTorch: median)", ""] + step_table(raw)
    out += ["", "## The race (`nnlab train --race`)", ""] + race_table(raw)
    out += ["", "## The Jacobian", ""] + jacobian_table(raw)
    out += ["", "## Kernels (ncu)", ""]
    for b in (4, 1024):
        out += kernel_table(raw, b) + [""]
    print("\n".join(out))


if __name__ == "__main__":
    sys.exit(main())
