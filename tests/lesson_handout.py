#!/usr/bin/env python3
"""tests/lesson_handout.py HANDOUT.md STEPS - a lesson's handout parsed, as
`nnlab lesson --handout` (tests/cli_lesson.sh) and the lab's x
(tests/tui_lesson.sh) write it: every step's heading, the machine, every
figure's row labelled measured or predicted with a source that says the
same, every chart an SVG that parses. Prints the figures' rows; fails with
an assertion."""
import os, re, sys, xml.etree.ElementTree as ET
path, steps = sys.argv[1], int(sys.argv[2])
text = open(path).read()
heads = re.findall(r"^## Step (\d+): ", text, re.M)
assert heads == [str(k) for k in range(1, steps + 1)], heads
assert "## The machine" in text and "- CPU: " in text and "- GPU: " in text and "- libraries: " in text
rows = 0
for line in text.splitlines():
    if not line.startswith("| ") or line.startswith("| figure") or line.startswith("|---"):
        continue
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert len(cells) == 4, line
    what, us, label, source = cells
    float(us)
    assert label in ("measured", "predicted"), line
    assert source.startswith(label), line          # the source says the same as the label
    rows += 1
for svg in re.findall(r"!\[step \d+\]\(([^)]+)\)", text):
    ET.parse(os.path.join(os.path.dirname(path), svg))
print(rows)
