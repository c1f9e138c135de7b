/* backends/cuda/emu/cu_conv_algo.cc - backends/cuda/cuda_conv_algo.cu, unchanged,
 * compiled by the host C++ compiler for the emulated GPU (see cu_dense.cc). */
#include "../cuda_conv_algo.cu"
