#!/usr/bin/env python3
"""tests/readme_figures.py - the README and the docs that quote the
write-ups' measured times (DOCS: docs/usage.md holds the presets' table,
docs/results.md the measured results) quote them as the presets say
(measured_cpu_s, measured_gpu_s): each table row of a preset, and each
"X s vs Y s" or "X s on the CPU, Y s on the GPU" pair in their prose, says
what a preset says. A listed doc that is missing fails, the README must
quote at least one pair, and some doc must hold the presets' table.
Speaks TAP."""
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


# The files checked: the README, and every doc that quotes a preset's figures.
DOCS = ("README.md", "docs/usage.md", "docs/results.md")


def doc_cases(name, text, figures):
    """(good, what) for each preset figure quoted in one file; and how many
    of them were table rows."""
    cases = []
    rows = 0
    for preset, (cpu, gpu) in figures.items():
        for row in re.findall(r"^\| `" + re.escape(preset) + r"`.*$", text, re.M):
            m = re.search(r"CPU ([0-9.]+) s, GPU ([0-9.]+) s", row)
            if m:
                rows += 1
                got = (float(m.group(1)), float(m.group(2)))
                cases.append((got == (cpu, gpu), f"{name}: table row of {preset}: CPU {m.group(1)} s, "
                              f"GPU {m.group(2)} s (preset: {cpu:g}, {gpu:g})"))
    flat = re.sub(r"\s+", " ", text)
    pairs = re.findall(r"\b([0-9.]+) s vs ([0-9.]+) s", flat)
    pairs += re.findall(r"\b([0-9.]+) s on the CPU, ([0-9.]+) s on the GPU", flat)
    known = set(figures.values())
    for cpu, gpu in pairs:
        cases.append(((float(cpu), float(gpu)) in known, f"{name}: prose: {cpu} s against {gpu} s is a preset's pair"))
    return cases, rows


def main():
    figures = preset_figures()
    cases = []
    rows = 0
    for name in DOCS:
        path = os.path.join(top, name)
        if not os.path.exists(path):
            cases.append((False, f"{name} is there to check"))
            continue
        found, found_rows = doc_cases(name, open(path, encoding="utf-8").read(), figures)
        if name == "README.md" and not found:
            cases.append((False, "the README quotes no preset's figures"))
        cases += found
        rows += found_rows
    if rows == 0:
        cases.append((False, "no doc holds the presets' table of measured figures"))
    for i, (good, what) in enumerate(cases, 1):
        print(f"{'ok' if good else 'not ok'} {i} - {what}")
    print(f"1..{len(cases)}")
    return 0 if all(g for g, _ in cases) else 1


if __name__ == "__main__":
    sys.exit(main())
