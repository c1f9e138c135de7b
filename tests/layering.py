#!/usr/bin/env python3
"""tests/layering.py - the layering of docs/layout.md, checked on the tree and the build.

Each rule is one TAP case. Two kinds of rule:

Includes, on the sources. An include "x.h" is resolved as the compiler would
for the file's folder: the file's own folder first, then the include path the
folder is built with (Makefile.am). An include that resolves nowhere in the
tree (system headers, the generated headers of GENERATED) is outside the rules.

Calls, on the compiler's output (tests/layering_calls.py): each object file
of the build names the symbols it defines and those it needs (nm), which
gives who calls (or reads) whom, file by file; calls must go down the layers
and no files may call each other in a circle.
"""
import os
import re
import sys

sys.dont_write_bytecode = True     # no __pycache__ in the source tree (read-only in distcheck)
import layering_calls  # noqa: E402  (tests/layering_calls.py, beside this file)

TOP = os.environ.get("top_srcdir") or os.path.join(os.path.dirname(__file__), "..")
TOP = os.path.abspath(TOP)

# Where each folder's files look for headers, after their own folder: what
# Makefile.am gives them. The lab and the CLI get only the public API and
# the bottom helpers; the library gets its private folders; a backend gets
# its own folder and the bottom helpers.
FRONT_END_PATH = ["src/include", "src/common"]
CLI_PATH = ["src/include", "src/common", "ui"]    # ui/lab.h: `nnlab` opens the lab
LIBRARY_PATH = ["src/include", "src/common", "src/jobs", "src/core", "src/analysis", "backends"]
BACKEND_PATH = ["backends", "src/common"]

SOURCE_DIRS = ["src", "ui", "backends"]
# Headers the build makes: configure's config.h, and make's torch_paths.h
# (where the PyTorch helper lives, for src/jobs/torch_step.c).
GENERATED = {"config.h", "torch_paths.h"}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(rel):
    """The layer a file belongs to, by folder."""
    for prefix, name in (("src/include/nnlab/", "public"), ("src/common/", "common"),
                         ("src/jobs/", "jobs"), ("src/core/", "core"),
                         ("src/analysis/model/", "model"), ("src/analysis/report/", "report"),
                         ("src/cli/", "cli"), ("ui/", "ui"), ("backends/", "backend")):
        if rel.startswith(prefix):
            return name
    return "other"


def search_path(rel):
    layer = layer_of(rel)
    if layer == "ui":
        return FRONT_END_PATH + ["ui"]         # "draw.h", "text/format.h" from any ui/ folder
    if layer == "cli":
        return CLI_PATH
    if layer in ("backend", "common"):
        return BACKEND_PATH
    return LIBRARY_PATH


def source_files():
    out = []
    for d in SOURCE_DIRS:
        for root, _, names in os.walk(os.path.join(TOP, d)):
            for n in names:
                if n.endswith((".c", ".h", ".cu")):
                    out.append(os.path.relpath(os.path.join(root, n), TOP))
    return sorted(out)


def resolve(rel, name):
    """The tree file `#include "name"` in rel means, or None (system, generated)."""
    for d in [os.path.dirname(rel)] + search_path(rel):
        cand = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(TOP, cand)):
            return cand
    return None


def include_graph(files):
    graph, unresolved = {}, {}
    for rel in files:
        with open(os.path.join(TOP, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        edges = []
        for name in INCLUDE_RE.findall(text):
            target = resolve(rel, name)
            if target is None:
                if name not in GENERATED:
                    unresolved.setdefault(rel, []).append(name)
            else:
                edges.append(target)
        graph[rel] = edges
    return graph, unresolved


def find_cycle(graph):
    """One include cycle as a list of files, or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if state.get(nxt) is None:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if state.get(node) is None:
            found = visit(node)
            if found:
                return found
    return None


def curses_in(folder):
    """The files of folder that include a curses header themselves."""
    bad = []
    for rel in source_files():
        if rel.startswith(folder):
            with open(os.path.join(TOP, rel), encoding="utf-8", errors="replace") as f:
                if re.search(r'^\s*#\s*include\s+<n?curses(w/curses)?\.h>', f.read(), re.M):
                    bad.append("%s includes curses" % rel)
    return bad


DEVICE_NAME_COMPARED = re.compile(r'\bstrcmp\s*\([^;]*"(?:gpu|cpu|cpu-ref)"')


def device_names_compared():
    """Lines outside backends/ that compare a device's name with strcmp:
    front ends, jobs and analysis ask the device's kind (nnlab/device.h's
    nn_device_kind_of, a sweep's nn_sweep_device_is_gpu) instead."""
    bad = []
    for rel in source_files():
        if rel.startswith("backends/"):
            continue
        with open(os.path.join(TOP, rel), encoding="utf-8", errors="replace") as f:
            for no, line in enumerate(f, 1):
                if DEVICE_NAME_COMPARED.search(line):
                    bad.append("%s:%d: %s" % (rel, no, line.strip()))
    return bad


def without_comments(text):
    """C text with its comments and string literals blanked."""
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    text = re.sub(r'//[^\n]*', ' ', text)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)


FUNCTION_DEFINED = re.compile(r'^(?!static\b)[A-Za-z_][\w \t*]*?\b(\w+)\s*\([^;{}]*\)\s*\{', re.M)


def bundling_ui_headers(graph):
    """The ui/ headers that more than half of ui/'s .c files include and that
    name the functions of more than one .c file: a header every file takes in
    must be one file's own (ui/draw.h: ui/draw.c's; ui/lab_state.h: the
    lab's state and ui/lab.c's), not every screen's and panel's entry points
    in one place, which hides who uses whom (each screen and panel
    declares its own in its own header)."""
    ui_c = [f for f in graph if f.startswith("ui/") and f.endswith(".c")]
    defined_in = {}
    for rel in ui_c:
        with open(os.path.join(TOP, rel), encoding="utf-8", errors="replace") as f:
            for name in FUNCTION_DEFINED.findall(without_comments(f.read())):
                defined_in[name] = rel
    includers = {}
    for rel in ui_c:
        for target in set(graph[rel]):
            includers.setdefault(target, set()).add(rel)
    bad = []
    for header, who in sorted(includers.items()):
        if not header.startswith("ui/") or 2 * len(who) <= len(ui_c):
            continue
        with open(os.path.join(TOP, header), encoding="utf-8", errors="replace") as f:
            named = set(re.findall(r'\b(\w+)\s*\(', without_comments(f.read())))
        owners = sorted({defined_in[n] for n in named if n in defined_in})
        if len(owners) > 1:
            bad.append("%s: included by %d of %d ui/ .c files, names functions of %s"
                       % (header, len(who), len(ui_c), ", ".join(owners)))
    return bad


def violations(graph, who, allowed, except_files=()):
    """Edges from files of layers `who` to files whose layer is not in allowed."""
    bad = []
    for src, targets in sorted(graph.items()):
        if layer_of(src) not in who:
            continue
        for t in targets:
            if layer_of(t) not in allowed and t not in except_files:
                bad.append("%s includes %s" % (src, t))
    return bad


def main():
    files = source_files()
    graph, unresolved = include_graph(files)
    cases = []

    cycle = find_cycle(graph)
    cases.append(("no include cycle among source files",
                  [" -> ".join(cycle)] if cycle else []))
    cases.append(("every quoted include resolves in the tree or is generated (config.h, torch_paths.h)",
                  ["%s: %s" % (k, ", ".join(v)) for k, v in sorted(unresolved.items())]))
    cases.append(("ui/ includes only ui/, the public API and src/common",
                  violations(graph, {"ui"}, {"ui", "public", "common"})))
    cases.append(("ui/text/ (the lab's curses-free parts) includes only ui/text/, the public API and src/common",
                  [e for e in violations(graph, {"ui"}, {"public", "common"})
                   if e.startswith("ui/text/") and not e.split(" includes ")[1].startswith("ui/text/")]
                  + curses_in("ui/text/")))
    cases.append(("no ui/ header that most of ui/ includes names more than one file's functions",
                  bundling_ui_headers(graph)))
    cases.append(("src/cli/ includes only src/cli/, the public API, src/common and ui/lab.h",
                  violations(graph, {"cli"}, {"cli", "public", "common"}, {"ui/lab.h"})))
    cases.append(("public headers include only public headers and src/common",
                  violations(graph, {"public"}, {"public", "common"})))
    cases.append(("backends/ include nothing from src/ but src/common",
                  violations(graph, {"backend"}, {"backend", "common"})))
    cases.append(("src/common includes nothing above it",
                  violations(graph, {"common"}, {"common"})))
    cases.append(("core and the model (src/analysis/model/) include no front end, report or jobs header",
                  violations(graph, {"core", "model"},
                             {"core", "model", "public", "common", "backend"})))
    cases.append(("src/jobs/ includes no front end (ui/, src/cli/) and no report",
                  violations(graph, {"jobs"},
                             {"jobs", "core", "model", "public", "common", "backend"})))
    cases.append(("the reports (src/analysis/report/) include only the public API and src/common",
                  violations(graph, {"report"}, {"report", "public", "common"})))
    cases.append(("no front end, public header or src/common file reaches a private header",
                  violations(graph, {"public", "common", "ui", "cli"},
                             {"public", "common", "ui", "cli"})))

    cases.append(("no device compared by name outside backends/ (its kind instead)",
                  device_names_compared()))

    cases.extend(layering_calls.cases(TOP))

    print("1..%d" % len(cases))
    failed = 0
    for i, (name, bad) in enumerate(cases, 1):
        if bad:
            failed += 1
            print("not ok %d - %s" % (i, name))
            for line in bad[:20]:
                print("# " + line)
            if len(bad) > 20:
                print("# ... and %d more" % (len(bad) - 20))
        else:
            print("ok %d - %s" % (i, name))
    for line in layering_calls.notes():
        print("# " + line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
