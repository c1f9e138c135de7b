"""tests/layering_calls.py - who calls whom, read from the build's object files.

tests/layering.py's call rules. Each object file the build left names the
global symbols it defines and those it needs (nm): a file that needs a
symbol another file of the same program defines calls it (or reads its
data). That gives a call graph file by file, with no parser of our own:
the compiler's output, after the preprocessor and every #if. The rules:

- calls go only down the layers: front ends (src/cli/, ui/) -> reports
  (src/analysis/report/: readers of running and finished jobs) -> jobs
  (src/jobs/) -> the model (src/analysis/model/: cost, explain,
  calibration, profiles, the sweep's rules) -> core (src/core/) -> backends
  (backends/, the GPU module's objects too). Calls within a layer are free,
  but the two front ends meet only where `nnlab` opens the lab (ui/lab.c).
- src/common/ is called by all and calls nothing of ours above it.
- no files call each other in a circle (A calls B and B calls A, or longer),
  inside a folder or across folders. Calls here are of functions: a table
  that lists its entries by name (the layer table's nn_layer_*_def, the
  backends' list) reads their data, the one reference an explicit list
  must make, while the entries call the helpers beside it (STYLE.md: an
  explicit list, not self-registration). The layer rule counts every
  reference, data too: nothing may read a layer above its own.

The objects are found in the build folder: $top_builddir (Makefile.am sets
it for `make check`, also in a VPATH build and in distcheck), else the
current folder when it holds a build, else build/ under the sources.
A libtool object (.lo) names its real object; a plain object is
<folder>/<target>-<name>.o, automake's name for a target with its own
flags (the emulated module's are named so too). Only the targets listed
in UNITS count: the tests' own copies of ui/ and src/cli/ sources are not
the program. An object whose source is gone (a file moved) is passed over.

nm cannot see a call that the compiler inlined: the lab's screen state
accessors (ui_dashboard_of, ui_sweep_of, ui_setup_of: static inline
functions in ui/screens/*.h that return lab->state[...]) leave no symbol.
They are read from the sources instead (accessor_edges): a file that uses
one, or names the screen's slot lab->state[UI_...] itself, uses the screen
file whose ui_screen_def sizes that state, and that counts as a call, so a
panel that reads its screen's state this way while the screen calls the
panel makes a circle. A panel is handed its screen's state as an argument.
"""
import os
import re
import subprocess

# (folder, layer, rank): a call goes from a higher rank to a lower one.
LAYERS = [("src/cli/", "front end", 5), ("ui/", "front end", 5),
          ("src/analysis/report/", "reports", 4), ("src/jobs/", "jobs", 3),
          ("src/analysis/model/", "model", 2), ("src/core/", "core", 1), ("backends/", "backends", 0),
          ("src/common/", "common", -1)]
FRONT_END_DOORS = {("src/cli/", "ui/lab.c")}    # `nnlab` with no command opens the lab

# The link units: automake's object prefix (the target's canonical name,
# its folder left out) -> the program or module it is linked into. Symbols
# resolve only inside one. The FMA build of the emulated module is the same
# sources again; the tests' programs are not ours to check.
UNITS = {
    "libnnlab_la": "nnlab", "nnlab": "nnlab",
    "nnlab_cuda_emu_la": "emulated GPU module", "libnnemu_la": "emulated GPU module",
    "nnlab_mpi_la": "ranks' MPI module",
}
# The CUDA module's objects carry no prefix (Makefile.am's .cu.lo rule); built with CUDA only.
GPU_MODULE_DIR = "backends/cuda/"
OBJECT_DIRS = ["src", "ui", "backends"]
SOURCE_EXTS = (".c", ".cc", ".cu")
DEFINED = set("TDBRGS")          # strong definitions; weak (W, V) ones are C++ inline copies
FUNCTION = "T"                   # code; the other types are data

# ---- the allowlist -------------------------------------------------------------------------
# Empty, and to stay so: the branches that made one list of operations and
# the jobs folder removed every upward call and every circle the code held.
# A new entry here is a new upward call or circle, not a fix; the test says
# which files and symbols to change instead.
ALLOWED_UPWARD = set()
ALLOWED_CIRCLES = []

# Not checked for circles: the emulated GPU's
# runtime (backends/cuda/emu/emu_*.cc, the stand-in for the CUDA runtime,
# cuBLAS and cuDNN that only the tests load). Its files share one lock, the
# streams and the captured graphs, and call each other as one library's
# parts do (emu_runtime <-> emu_memory <-> emu_stream <-> emu_graph <->
# emu_threads). Calls into or out of it are still checked.
CIRCLES_NOT_CHECKED = ("backends/cuda/emu/emu_",)


def layer_of(rel):
    """(layer, rank, folder) of a source file, or None outside the layers."""
    for prefix, name, rank in LAYERS:
        if rel.startswith(prefix):
            return name, rank, prefix
    return None


def find_build_dir(top):
    """The build folder and the places looked in."""
    env = os.environ.get("top_builddir")
    if env:
        return os.path.abspath(env), [env]
    looked = [os.getcwd(), os.path.join(top, "build")]
    for d in looked:
        if os.path.isfile(os.path.join(d, "config.status")):
            return d, looked
    return None, looked


def source_of(top, rel_dir, stem):
    """The source file an object of rel_dir/stem was compiled from, or None.
    An emulator file that only includes a .cu file stands for that file."""
    for ext in SOURCE_EXTS:
        rel = os.path.normpath(os.path.join(rel_dir, stem + ext))
        if os.path.isfile(os.path.join(top, rel)):
            if ext == ".cc":
                return covered_cu(top, rel) or rel
            return rel
    return None


def covered_cu(top, rel):
    """The .cu file a .cc file wraps unchanged (backends/cuda/emu/cu_*.cc), or None."""
    with open(os.path.join(top, rel), encoding="utf-8", errors="replace") as f:
        lines = [l.strip() for l in f if l.strip().startswith("#include")]
    if len(lines) == 1 and lines[0].endswith('.cu"'):
        return os.path.normpath(os.path.join(os.path.dirname(rel), lines[0].split('"')[1]))
    return None


def libtool_object(lo_path):
    """The real object a .lo file names (PIC preferred), or None."""
    fields = {}
    with open(lo_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if "=" in line and not line.startswith("#"):
                k, v = line.strip().split("=", 1)
                fields[k] = v.strip("'\"")
    for key in ("pic_object", "non_pic_object"):
        if fields.get(key, "none") != "none":
            return os.path.join(os.path.dirname(lo_path), fields[key])
    return None


def unit_of(rel_dir, stem):
    """(unit, name) of an object's stem, or None for a target we do not read."""
    prefix, sep, name = stem.partition("-")
    if not sep:
        return ("GPU module", stem) if (rel_dir + "/").startswith(GPU_MODULE_DIR) else None
    return (UNITS[prefix], name) if prefix in UNITS else None


def build_objects(top, build):
    """{unit: {source: object path}} of the objects in the build folder."""
    units = {}
    for d in OBJECT_DIRS:
        for root, dirs, names in os.walk(os.path.join(build, d)):
            dirs[:] = [x for x in dirs if x not in (".libs", ".deps")]
            rel_dir = os.path.relpath(root, build)
            for n in names:
                stem, ext = os.path.splitext(n)
                if ext == ".lo":
                    obj = libtool_object(os.path.join(root, n))
                elif ext == ".o" and stem + ".lo" not in names:
                    obj = os.path.join(root, n)
                else:
                    continue
                unit = unit_of(rel_dir, stem)
                src = unit and source_of(top, rel_dir, unit[1])
                if src and obj and os.path.isfile(obj):
                    units.setdefault(unit[0], {})[src] = obj
    return units


def read_symbols(objects):
    """{source: ({defined symbol: nm type}, needed set)} from nm on the objects."""
    by_obj = {obj: src for src, obj in objects.items()}
    out = {src: ({}, set()) for src in objects}
    nm = os.environ.get("NM", "nm").split()
    res = subprocess.run(nm + ["-A", "-P"] + sorted(by_obj), capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(nm), res.stderr.strip()[:300]))
    for line in res.stdout.splitlines():
        path, _, rest = line.partition(": ")
        fields = rest.split()
        if path not in by_obj or len(fields) < 2:
            continue
        defined, needed = out[by_obj[path]]
        if fields[1] == "U":
            needed.add(fields[0])
        elif fields[1] in DEFINED:
            defined[fields[0]] = fields[1]
    return out


def call_graph(units):
    """Two graphs {(user, used): set of symbols}, over every link unit: every
    use (a call or a read of data), and the calls alone (of functions)."""
    uses, calls = {}, {}
    for objects in units.values():
        symbols = read_symbols(objects)
        home = {}
        for src, (defined, _) in symbols.items():
            for s, kind in defined.items():
                home.setdefault(s, (src, kind))
        for src, (_, needed) in symbols.items():
            for s in needed:
                callee, kind = home.get(s, (None, None))
                if callee and callee != src:
                    uses.setdefault((src, callee), set()).add(s)
                    if kind == FUNCTION:
                        calls.setdefault((src, callee), set()).add(s)
    return uses, calls


# The lab's screen state accessors (see the docstring): where they are defined
# and how a screen's ui_screen_def names the size of its state.
ACCESSOR_HEADERS = "ui/screens/"
ACCESSOR_RE = re.compile(r"static\s+inline\s+(\w+)\s*\*\s*(\w+)\s*\([^)]*\)\s*\{\s*"
                         r"return\s+\w+\s*->\s*state\s*\[\s*(\w+)\s*\]\s*;\s*\}")
STATE_SIZE_RE = re.compile(r"\.state_size\s*=\s*sizeof\s*\(\s*(\w+)\s*\)")
COMMENT_RE = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def code_of(top, rel):
    """A source file's text without its comments."""
    with open(os.path.join(top, rel), encoding="utf-8", errors="replace") as f:
        return COMMENT_RE.sub(" ", f.read())


def accessors(top):
    """[(accessor, slot, owner)]: each screen state accessor of the lab, the
    slot of lab->state it returns, and the screen file that owns that state
    (its ui_screen_def's state_size is sizeof the type returned)."""
    found, owner = [], {}
    for root, _, names in os.walk(os.path.join(top, "ui")):
        for n in sorted(names):
            rel = os.path.relpath(os.path.join(root, n), top)
            if n.endswith(".c"):
                for t in STATE_SIZE_RE.findall(code_of(top, rel)):
                    owner[t] = rel
            elif n.endswith(".h") and rel.startswith(ACCESSOR_HEADERS):
                found.extend(ACCESSOR_RE.findall(code_of(top, rel)))
    for t, name, _ in found:
        if t not in owner:           # else its uses would go unseen, and the check with them
            raise RuntimeError("%s returns %s, which no screen's state_size names" % (name, t))
    return [(name, slot, owner[t]) for t, name, slot in found]


def accessor_edges(top, files):
    """{(user, owner): {"accessor (inline)"}}: the calls nm cannot see, of a
    ui/ source through a screen state accessor or its lab->state slot."""
    edges = {}
    for name, slot, owner in accessors(top):
        use = re.compile(r"\b%s\s*\(|\bstate\s*\[\s*%s\s*\]" % (re.escape(name), re.escape(slot)))
        for f in files:
            if f.startswith("ui/") and f.endswith(".c") and f != owner and use.search(code_of(top, f)):
                edges.setdefault((f, owner), set()).add("%s (inline)" % name)
    return edges


def describe(edge, symbols):
    names = sorted(symbols)
    more = " ..." if len(names) > 3 else ""
    return "%s -> %s (%s%s)" % (edge[0], edge[1], ", ".join(names[:3]), more)


def wrong_way(edge):
    """Why a call breaks the layers, or None."""
    a, b = layer_of(edge[0]), layer_of(edge[1])
    if not a or not b:
        return None
    if a[0] == "common":
        return "src/common calls up" if b[0] != "common" else None
    if b[0] == "common":
        return None
    if a[1] < b[1]:
        return "%s calls %s" % (a[0], b[0])
    if a[0] == b[0] == "front end" and a[2] != b[2] and (a[2], edge[1]) not in FRONT_END_DOORS:
        return "front ends call each other"
    return None


def strong_components(nodes, edges):
    """Tarjan's strongly connected components with more than one file."""
    succ = {n: [] for n in nodes}
    for a, b in edges:
        succ.setdefault(a, []).append(b)
        succ.setdefault(b, [])
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(succ[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for n in sorted(succ):
        if n not in index:
            visit(n)
    return out


def circle_lines(comp, edges):
    """The calls inside one circle, one line each."""
    inside = set(comp)
    lines = ["circle of %d files: %s" % (len(comp), " ".join(comp))]
    for e in sorted(edges):
        if e[0] in inside and e[1] in inside:
            lines.append("  " + describe(e, edges[e]))
    return lines


_NOTES = []


def notes():
    """TAP comments: what the allowlist still lets pass, what it holds in vain."""
    return list(_NOTES)


def missing_objects(top, files, units):
    built = set()
    for objects in units.values():
        built.update(objects)
    return sorted(f for f in files if f not in built
                  and not (f.endswith(".cc") and covered_cu(top, f) in built))


def sources(top):
    """Every .c, .cc and .cu file of the layers, relative to top."""
    out = []
    for d in OBJECT_DIRS:
        for root, _, names in os.walk(os.path.join(top, d)):
            out.extend(os.path.relpath(os.path.join(root, n), top) for n in names
                       if n.endswith(SOURCE_EXTS))
    return sorted(out)


def cases(top):
    """The call rules as (name, [failures]) TAP cases."""
    files = sources(top)
    names = ["the build's objects are found and read (nm) for every source",
             "calls go only down: front ends -> reports -> jobs -> model -> core -> backends",
             "no call circle among source files"]
    build, looked = find_build_dir(top)
    try:
        if not build:
            raise RuntimeError("no build folder: run make first, or set top_builddir "
                               "(looked in %s)" % ", ".join(looked))
        units = build_objects(top, build)
        missing = missing_objects(top, files, units)
        if missing:
            raise RuntimeError("in %s, no object for %d sources (not built yet?): %s"
                               % (build, len(missing), " ".join(missing[:8])))
        uses, calls = call_graph(units)
        for e, syms in accessor_edges(top, files).items():
            uses.setdefault(e, set()).update(syms)
            calls.setdefault(e, set()).update(syms)
    except (RuntimeError, OSError) as e:
        return [(names[0], [str(e)])] + [(n, ["no call graph (case above)"]) for n in names[1:]]
    return [(names[0], []), (names[1], upward_calls(uses)), (names[2], circles(files, calls))]


def upward_calls(edges):
    bad, allowed = [], set()
    for e in sorted(edges):
        why = wrong_way(e)
        if why and e in ALLOWED_UPWARD:
            allowed.add(e)
        elif why:
            bad.append("%s: %s" % (why, describe(e, edges[e])))
    for e in sorted(allowed):
        _NOTES.append("allowlisted upward call: " + describe(e, edges[e]))
    for e in sorted(set(ALLOWED_UPWARD) - allowed):
        _NOTES.append("allowlisted upward call gone, remove it: %s -> %s" % e)
    return bad


def circles(files, edges):
    bad, used = [], set()
    for comp in strong_components(set(files), edges):
        home = [i for i, c in enumerate(ALLOWED_CIRCLES) if set(comp) <= set(c)]
        if all(f.startswith(CIRCLES_NOT_CHECKED) for f in comp):
            _NOTES.append("not checked: the emulated runtime's circle of %d files" % len(comp))
        elif home:
            used.add(home[0])
            _NOTES.append("allowlisted " + circle_lines(comp, edges)[0])
        else:
            bad.extend(circle_lines(comp, edges))
    for i, c in enumerate(ALLOWED_CIRCLES):
        if i not in used:
            _NOTES.append("allowlisted circle gone, remove it: " + " ".join(sorted(c)))
    return bad
