#!/bin/sh
# tests/parity-direct-forms.sh - the cpu vs cpu-ref parity test again with the
# direct convolution in its position form and its input gradient in gather
# form (NNLAB_NO_CONV_CHAN=1 NNLAB_NO_DX_SCATTER=1): on the AVX2 path the plain
# run takes the channel and scatter forms wherever they do less work (LeNet's
# second convolution among them, cpu_conv_direct.h), so this checks the
# position and gather forms on those geometries too, as the AVX-512 path
# runs them.
NNLAB_NO_CONV_CHAN=1 NNLAB_NO_DX_SCATTER=1 exec ./tests/test_parity "$@"
