#!/usr/bin/env python3
"""tests/fit_framework_tool.py - tools/fit_framework_cpu.py fits what the C
code fits: from tests/test_framework --terms (this build's), its joint fit on
its FIT_HOSTS gives the eight [framework] figures profiles/t4.ini ships (to
the tolerances test_framework's own recomputation uses), each host's errors
are those the form gives with them, the 16-core host left out is far off, and
a fixture row changed moves a figure (so the comparison can fail); and
--from-threads turns a lent machine's bench/threads.sh folder into fixture
hosts and calibrations. Speaks TAP; python3's standard library only."""
import configparser
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import build, check, finish, top  # noqa: E402

spec = importlib.util.spec_from_file_location("fit", os.path.join(top, "tools", "fit_framework_cpu.py"))
fit = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fit)

def shipped():
    """The eight figures as profiles/t4.ini's [framework] section gives them."""
    ini = configparser.ConfigParser(inline_comment_prefixes=(";",), comment_prefixes=(";", "#"))
    ini.read(os.path.join(top, "profiles", "t4.ini"))
    return [float(ini["framework"][k]) for k in fit.FIGURES + fit.THREAD_FIGURES]


terms = subprocess.run([os.path.join(build, "tests", "test_framework"), "--terms"], check=True,
                       capture_output=True, text=True).stdout
rows = fit.read_terms(terms)
fitted = [r for r in rows if r["host"] in fit.FIT_HOSTS]
check(len(fitted) == 172 and {r["host"] for r in fitted} == set(fit.FIT_HOSTS),
      "the fitted hosts' 172 steps are in the terms")

x = fit.fit_joint(fitted)
want = shipped()
for name, got, w in zip(fit.FIGURES + fit.THREAD_FIGURES, x, want):
    tol = 0.05 if name in ("cpu_step_us", "cpu_op_ratio", "cpu_thread_op_ratio") else 0.0005
    check(abs(got - w) < tol, "%s: fitted %.6g, t4.ini ships %g" % (name, got, w))

rms, largest, _ = fit.errors([r for r in rows if r["host"] == "dev5"], want)
check(rms < 0.14 and largest < 0.25, "dev5 with the shipped figures: rms %.1f%%, largest %.1f%%"
      % (100 * rms, 100 * largest))
xh = fit.fit_joint([r for r in fitted if r["host"] != "xeon16"])
rms, _, _ = fit.errors([r for r in rows if r["host"] == "xeon16"], xh)
check(rms > 0.5, "xeon16 left out of the fit: rms %.1f%% (only it tells the thread figures)" % (100 * rms))
one = fit.fit_joint([r for r in rows if r["host"] == "dev5"])
check(one[6] == 0 and one[7] == 0, "one thread count alone leaves the thread figures 0")

moved = [dict(r) for r in fitted]
for r in moved:
    if r["host"] == "dev7" and r["preset"] == "mnist-mlp-1000" and r["batch"] == 1024:
        r["torch_us"] *= 2
xm = fit.fit_joint(moved)
check(abs(xm[4] - x[4]) > 0.0005, "one step measured twice as long moves the work ratio (%.4f -> %.4f)"
      % (x[4], xm[4]))

# --from-threads: a lent machine's bench/threads.sh folder as fixture hosts, one a thread count
with tempfile.TemporaryDirectory() as raw:
    shutil.copy(os.path.join(top, "tests", "fixtures", "calibrate-cpu-sample.json"),
                os.path.join(raw, "calibrate-cpu-t1.json"))
    points = {"torch-mnist-mlp-128-cpu-t1-4.json": {"us_per_step_median": 500.0, "torch": "2.11.0", "rounds": 3},
              "torch-mnist-mlp-128-cpu-t1-64.json": {"us_per_step_median": 900.0, "torch": "2.11.0", "rounds": 3},
              "torch-mnist-mlp-128-cpu-t1-16.json": {"error": "killed"},
              "torch-mnist-mlp-128-cpu-t4-4.json": {"us_per_step_median": 300.0, "torch": "2.11.0"},
              "nnlab-mnist-mlp-128-t1-4-1.json": {"us_per_step": 40.0},
              "nnlab-mnist-mlp-128-t1-4-2.json": {"us_per_step": 35.0},
              "nnlab-mnist-mlp-128-t1-64-1.json": {"us_per_step": 300.0},
              "nnlab-mnist-mlp-128-t4-4-1.json": {"us_per_step": 20.0}}
    for name, obj in points.items():
        with open(os.path.join(raw, name), "w") as f:
            json.dump(obj, f)
    out = os.path.join(raw, "out")
    r = subprocess.run([sys.executable, os.path.join(top, "tools", "fit_framework_cpu.py"), "--from-threads", raw,
                        "lent", out], capture_output=True, text=True)
    rows = [l for l in open(os.path.join(out, "framework-cpu-lent.csv")).read().splitlines()
            if l and not l.startswith("#")] if r.returncode == 0 else []
    check(rows == ["host,preset,batch,torch_us,nnlab_us", "lent-t1,mnist-mlp-128,4,500.0,35.0",
                   "lent-t1,mnist-mlp-128,64,900.0,300.0"],
          "--from-threads: PyTorch's median and nnlab's fastest round a row, host NAME-tT (%r)" % rows)
    check("b16 t1 left out: PyTorch failed" in r.stderr and "b4 t4 left out: no calibration at 4 threads" in r.stderr,
          "--from-threads: a failed point and one without its calibration left out, said so")
    cal = os.path.join(out, "calibration-cpu-lent-t1.txt")
    text = open(cal).read() if os.path.exists(cal) else ""
    check(text.startswith("# A CPU calibration of host lent-t1") and
          text.split("\n", 3)[3].strip() == fit.calibration_text(os.path.join(raw, "calibrate-cpu-t1.json")) and
          "\nthreads = 1" in text and "\nfresh_page_us = " in text,
          "--from-threads: the calibration at that count in the fixture's form, as --convert gives it")

finish()
