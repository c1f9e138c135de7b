#!/usr/bin/env python3
"""tests/screen_fit.py - checks a captured lab screen (tmux capture-pane -p)
for text cut at a panel's right border and for borders overwritten.

  screen_fit.py WIDTH FILE [KNOWN_CUTS_FILE]

Prints one line per finding. It exits 1 on a known cut string (one a line
in KNOWN_CUTS_FILE, from the bugs they were), found anywhere, and on a
border overwritten: a column that holds a box's top-right "┐" and, below
it, its bottom-right "┘" must hold a vertical border ("│", "├", "┤", "┼")
on every row between, unless a horizontal edge crosses it or a whole box
drawn over it (a dialog, the help: its "┌┐└┘" all on the screen) covers
that cell. One heuristic is printed as a note, for a person to judge, and
fails nothing: a word cut at a border, two lowercase letters touching a
box's right border "│" at least 20 columns from the left edge (a word flush
with a border is often whole: "one after the other│", a right-aligned
"done│").
Characters are one column each (the lab draws no wide characters)."""
import sys

VERT = set("│├┤┼┐┘┌└┬┴")


def cell(rows, y, x):
    r = rows[y] if 0 <= y < len(rows) else ""
    return r[x] if 0 <= x < len(r) else " "


def boxes(rows):
    """Every whole box on the screen: (top, left, bottom, right) where a
    "┌" has its "┐" on its row, its "└" below it and a "┘" closing both."""
    found = []
    for y, row in enumerate(rows):
        for x, c in enumerate(row):
            if c != "┌":
                continue
            right = row.find("┐", x + 1)
            bottom = next((yy for yy in range(y + 1, len(rows)) if cell(rows, yy, x) == "└"), None)
            if right > x and bottom is not None and cell(rows, bottom, right) == "┘":
                found.append((y, x, bottom, right))
    return found


def covered(y, x, over):
    """The cell lies inside a box drawn over it (a dialog, the help)."""
    return any(t <= y <= b and l < x < r for t, l, b, r in over)


def findings(rows, width, known):
    out = []
    text = "\n".join(rows)
    for k in known:
        if k and k in text:
            out.append("known cut: %r" % k)
    for y, row in enumerate(rows):
        for x in range(20, len(row)):
            if row[x] == "│" and x >= 2 and row[x - 1].islower() and row[x - 2].islower():
                out.append("row %d col %d: a word cut at the border: %r" % (y + 1, x + 1, row[max(0, x - 30):x + 1]))
    over = boxes(rows)
    for x in range(width):
        top = None
        for y, row in enumerate(rows):
            c = row[x] if x < len(row) else " "
            if c == "┐":
                top = y
            elif c == "┘" and top is not None:
                for yy in range(top + 1, y):
                    r = rows[yy]
                    cc = r[x] if x < len(r) else " "
                    if cc not in VERT and cc != "─" and not covered(yy, x, over):
                        out.append("row %d col %d: the border is overwritten: %r" % (yy + 1, x + 1, r[max(0, x - 20):x + 3]))
                top = None
    return out


def main():
    width = int(sys.argv[1])
    with open(sys.argv[2], encoding="utf-8", errors="replace") as f:
        rows = f.read().split("\n")
    known = []
    if len(sys.argv) > 3:
        with open(sys.argv[3], encoding="utf-8") as f:
            known = [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#")]
    found = findings(rows, width, known)
    for line in found:
        print(line if line.startswith("known cut") or "overwritten" in line else "note: " + line)
    return 1 if any(line.startswith("known cut") or "overwritten" in line for line in found) else 0


if __name__ == "__main__":
    sys.exit(main())
