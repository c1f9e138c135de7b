#!/usr/bin/env python3
"""tests/readme_figures.py - the README quotes the write-ups' measured times
from the presets (measured_cpu_s, measured_gpu_s): each table row of a
preset, and each "X s vs Y s" or "X s on the CPU, Y s on the GPU" pair in
its prose, says what a preset says. Speaks TAP."""
import os
import re
import sys

sys.dont_write_bytecode = True
top = os.environ.get("top_srcdir", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def preset_figures():
    """{preset name: (cpu s, gpu s)} of the presets that quote both."""
    out = {}
    folder = os.path.join(top, "presets")
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".ini"):
            continue
        text = open(os.path.join(folder, name), encoding="utf-8").read()
        cpu = re.search(r"^measured_cpu_s\s*=\s*([0-9.]+)", text, re.M)
        gpu = re.search(r"^measured_gpu_s\s*=\s*([0-9.]+)", text, re.M)
        if cpu and gpu:
            out[name[:-4]] = (float(cpu.group(1)), float(gpu.group(1)))
    return out


def main():
    figures = preset_figures()
    readme = open(os.path.join(top, "README.md"), encoding="utf-8").read()
    cases = []
    for name, (cpu, gpu) in figures.items():
        for row in re.findall(r"^\| `" + re.escape(name) + r"`.*$", readme, re.M):
            m = re.search(r"CPU ([0-9.]+) s, GPU ([0-9.]+) s", row)
            if m:
                got = (float(m.group(1)), float(m.group(2)))
                cases.append((got == (cpu, gpu), f"table row of {name}: CPU {m.group(1)} s, GPU {m.group(2)} s "
                              f"(preset: {cpu:g}, {gpu:g})"))
    flat = re.sub(r"\s+", " ", readme)
    pairs = re.findall(r"\b([0-9.]+) s vs ([0-9.]+) s", flat)
    pairs += re.findall(r"\b([0-9.]+) s on the CPU, ([0-9.]+) s on the GPU", flat)
    known = set(figures.values())
    for cpu, gpu in pairs:
        cases.append(((float(cpu), float(gpu)) in known, f"prose: {cpu} s against {gpu} s is a preset's pair"))
    if not cases:
        cases.append((False, "the README quotes no preset's figures"))
    for i, (good, what) in enumerate(cases, 1):
        print(f"{'ok' if good else 'not ok'} {i} - {what}")
    print(f"1..{len(cases)}")
    return 0 if all(g for g, _ in cases) else 1


if __name__ == "__main__":
    sys.exit(main())
