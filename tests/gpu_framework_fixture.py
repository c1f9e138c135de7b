#!/usr/bin/env python3
"""tests/gpu_framework_fixture.py - what a lent GPU's re-measure of the
framework way goes through (docs/ways.md, "The framework way on a GPU"), on
made-up helper files, no GPU or torch needed: bench/torch_grid.py names the
step that copied its batch on cuda torch-P-cuda-framework-B.json (the CPU's
and the data-on-device step keep their names) and takes the median of a
point's rounds; bench/gpu_table.py puts it in
its own column and, with --fixture, writes the fixture CSV with its
"# way: framework" line, failed points left out; and tests/test_framework
--gpu-fit reads that CSV, prices the copy it says the steps made, and fits.
Speaks TAP; python3's standard library only."""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import build, check, finish, top  # noqa: E402

spec = importlib.util.spec_from_file_location("torch_grid", os.path.join(top, "bench", "torch_grid.py"))
grid = importlib.util.module_from_spec(spec)
spec.loader.exec_module(grid)

def tag(device, way="eager", on_device=False):
    return grid.way_tag(argparse.Namespace(device=device, way=way, data_on_device=on_device))


check(tag("cuda") == "framework-", "torch_grid: cuda, the batch copied: framework-")
check(tag("cuda", on_device=True) == "", "torch_grid: cuda, data on the device: the plain name")
check(tag("cpu") == "", "torch_grid: the CPU: the plain name (.to('cpu') copies nothing)")
check(tag("cuda", "graph") == "graph-", "torch_grid: --way graph keeps its tag")
three = grid.combine([{"us_per_step_median": 300.0, "us_per_step_mean": 310.0, "torch": "x"},
                      {"us_per_step_median": 900.0, "us_per_step_mean": 950.0, "torch": "x"},
                      {"us_per_step_median": 320.0, "us_per_step_mean": 330.0, "torch": "x"}])
check(three["us_per_step"] == three["us_per_step_median"] == 320.0 and three["rounds_us"] == [300.0, 900.0, 320.0]
      and three["rounds"] == 3 and abs(three["us_per_step_mean"] - 530.0) < 1e-9,
      "torch_grid --rounds: a point's figure the median of its rounds, an outlier round kept but not taken (%s)"
      % three)
check(grid.combine([{"us_per_step_median": 300.0}, {"error": "out of memory"}]) == {"error": "out of memory"},
      "torch_grid --rounds: a failed round makes the point the failure")

STEPS = {("lenet-cifar10", 4): 1710.0, ("lenet-cifar10", 64): 1840.0, ("lenet-cifar10", 1024): 3650.0,
         ("mnist-mlp-128", 1): 1400.0, ("mnist-mlp-128", 256): 1390.0, ("conv1d-regression", 16): 2700.0}


def helper_json(us):
    return {"helper": "nnlab-torch-step", "torch": "2.11.0+cu130", "device": "cuda",
            "device_name": "NVIDIA H200", "way": "framework", "threads": 16, "steps": 20, "warmup": 3,
            "data": "copied from pageable host memory every step", "us_per_step": us,
            "us_per_step_median": us, "us_per_step_mean": us * 1.02}


with tempfile.TemporaryDirectory() as raw:
    for (p, b), us in STEPS.items():
        with open(os.path.join(raw, f"torch-{p}-cuda-framework-{b}.json"), "w") as f:
            json.dump(helper_json(us), f)
    with open(os.path.join(raw, "torch-tabnet-regression-cuda-framework-1.json"), "w") as f:
        json.dump({"error": "Expected more than 1 value per channel when training"}, f)
    with open(os.path.join(raw, "torch-lenet-cifar10-cuda-4.json"), "w") as f:
        json.dump(dict(helper_json(1520.0), way="framework-data-on-device"), f)
    with open(os.path.join(raw, "sweep-lenet-cifar10-graph.json"), "w") as f:
        json.dump({"points": [{"device": "gpu", "way": "graph", "batch": 4, "source": "measured",
                               "us_per_step": 90.0}]}, f)
    csv_path = os.path.join(raw, "framework-gpu.csv")
    r = subprocess.run([sys.executable, os.path.join(top, "bench", "gpu_table.py"), raw, "0",
                        "--fixture", csv_path], capture_output=True, text=True)
    check(r.returncode == 0, "gpu_table.py --fixture runs (%s)" % r.stderr.strip()[-200:])
    head = [l for l in r.stdout.splitlines() if l.startswith("| preset | batch |")]
    row = [l for l in r.stdout.splitlines() if l.startswith("| lenet-cifar10 | 4 |")]
    if head and row:
        cells = dict(zip([c.strip() for c in head[0].split("|")], [c.strip() for c in row[0].split("|")]))
        check(cells.get("PyTorch cuda") == "1,520" and cells.get("PyTorch cuda, batch copied") == "1,710",
              "the table: data on the device and the batch copied, each in its column (%s)" % row[0])
    else:
        check(False, "the table has the step table and lenet's row at batch 4")
    text = open(csv_path).read() if os.path.exists(csv_path) else ""
    lines = text.splitlines()
    rows = [l for l in lines if l and not l.startswith("#") and not l.startswith("preset,")]
    check("# way: framework" in lines, "the fixture says its way")
    check(lines.index("# way: framework") < lines.index("preset,batch,torch_us,mean_us") if
          "# way: framework" in lines and "preset,batch,torch_us,mean_us" in lines else False,
          "the way line comes before the steps")
    check(rows[:3] == ["conv1d-regression,16,2700.0,2754.0", "lenet-cifar10,4,1710.0,1744.2",
                       "lenet-cifar10,64,1840.0,1876.8"] and len(rows) == 6,
          "the fixture's rows: preset then batch, median and mean, the failed point left out (%r)" % rows[:3])
    check("NVIDIA H200" in text and "2.11.0+cu130" in text, "the fixture names the GPU and PyTorch")

    fit = os.path.join(build, "tests", "test_framework")
    r = subprocess.run([fit, "--gpu-fit", csv_path, "h200"], capture_output=True, text=True)
    check(r.returncode == 0 and ": 6 steps" in r.stdout and "fitted: gpu_step_us" in r.stdout,
          "test_framework --gpu-fit reads the written fixture and fits it (%s)" % (r.stdout + r.stderr)[:200])

    def profile_us(out):
        return {tuple(l.split(",")[:2]): float(l.split(",")[5]) for l in out.splitlines()
                if l and l[0].isalpha() and not l.startswith(("preset", "fitted"))}

    copied = profile_us(r.stdout)
    on_device_csv = os.path.join(raw, "on-device.csv")
    with open(on_device_csv, "w") as f:
        f.write(text.replace("# way: framework\n", "# way: framework-data-on-device\n"))
    r2 = subprocess.run([fit, "--gpu-fit", on_device_csv, "h200"], capture_output=True, text=True)
    on_device = profile_us(r2.stdout)
    grows = [copied[k] - on_device[k] for k in (("lenet-cifar10", "4"), ("lenet-cifar10", "1024"))
             if k in copied and k in on_device]
    check(len(grows) == 2 and 0 < grows[0] < grows[1],
          "the way line decides the copy: priced where the steps copied, growing with the batch (%s)" % grows)
    no_way = os.path.join(raw, "no-way.csv")
    with open(no_way, "w") as f:
        f.write(text.replace("# way: framework\n", ""))
    r3 = subprocess.run([fit, "--gpu-fit", no_way, "h200"], capture_output=True, text=True)
    check(r3.returncode != 0 and "way" in (r3.stdout + r3.stderr), "a fixture without its way line is refused")

finish()
