#!/usr/bin/env python3
"""tests/derived_profiles.py - the unmeasured GPUs' profiles are what
bench/derive_profile.py derives from the measured GH100 ones (h100.ini,
h200.ini): every derived figure re-derived and compared with the shipped
one, each datasheet peak checked against SMs x lanes x 2 x clock, and every
section's keys (but [framework]) the measured profiles'. Speaks TAP."""
import os
import sys

sys.dont_write_bytecode = True
top = os.environ.get("top_srcdir", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(top, "bench"))
import derive_profile  # noqa: E402

sys.exit(derive_profile.check())
