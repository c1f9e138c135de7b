/* backends/cuda/emu/cu_merge.cc - backends/cuda/cuda_merge.cu, unchanged,
 * compiled by the host C++ compiler for the emulated GPU (see cu_kernels.cc). */
#include "../cuda_merge.cu"
