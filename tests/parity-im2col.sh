#!/bin/sh
# tests/parity-im2col.sh - the cpu vs cpu-ref parity test again with the
# direct convolution kernels switched off, so that the im2col + sgemm path is
# checked on the geometries the direct kernels would otherwise take (LeNet's
# first convolution among them), and with linear_backward's narrow-input
# kernel switched off, so that sgemm is checked on the narrow shapes too.
NNLAB_NO_DIRECT_CONV=1 NNLAB_NO_NARROW_DX=1 exec ./tests/test_parity "$@"
