#!/bin/bash
# tests/test_gpu_emu_fma.sh - tests/test_gpu_emu.sh on the emulated GPU built
# with fused multiply-adds (a TESTS entry takes no arguments).
exec "$(dirname "$0")/test_gpu_emu.sh" fma
