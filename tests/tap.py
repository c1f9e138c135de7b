"""tests/tap.py - what the Python tests share: where the sources and the build
are (top_srcdir, top_builddir, as make check sets them) and TAP's lines."""
import os
import sys

sys.dont_write_bytecode = True
top = os.environ.get("top_srcdir", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
build = os.environ.get("top_builddir", ".")
_count = 0
_failed = 0


def check(ok, what):
    """One TAP line: ok or not ok, numbered, with what was checked."""
    global _count, _failed
    _count += 1
    _failed += not ok
    print("%s %d - %s" % ("ok" if ok else "not ok", _count, what))


def finish():
    """The plan, and the exit status: 1 when a check failed."""
    print("1..%d" % _count)
    sys.exit(1 if _failed else 0)
