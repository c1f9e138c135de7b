#!/usr/bin/env python3
"""bench/pytorch_step.py - the peer: one nnlab preset's training step in PyTorch.

The network, the loss, the optimiser and the timing are the helper's that
`nnlab bench --with-pytorch` runs (tools/nnlab-torch-step.py: every layer
kind of nnlab's presets, TabNet's included, and its parameter count), so
that the bench scripts and nnlab measure the same thing. This keeps the
bench scripts' command line and their longer defaults, 200 timed steps after
20 (the helper's own: 20 after 3), and prints the helper's one JSON line:
`us_per_step` is the median over the timed steps, `torch` the version.

    python3 bench/pytorch_step.py PRESET.ini --batch 4 [--steps 200] [--warmup 20]
        [--threads N] [--device cpu|cuda]
"""
import os
import runpy
import sys

HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tools",
                      "nnlab-torch-step.py")
DEFAULTS = {"--steps": "200", "--warmup": "20"}


def with_defaults(args):
    for option, value in DEFAULTS.items():
        if not any(a == option or a.startswith(option + "=") for a in args):
            args = args + [option, value]
    return args


if __name__ == "__main__":
    sys.argv = [HELPER] + with_defaults(sys.argv[1:])
    runpy.run_path(HELPER, run_name="__main__")
