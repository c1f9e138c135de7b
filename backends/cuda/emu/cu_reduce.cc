/* backends/cuda/emu/cu_reduce.cc - backends/cuda/cuda_reduce.cu, unchanged, compiled
 * by the host C++ compiler for the emulated GPU (see cu_dense.cc). */
#include "../cuda_reduce.cu"
