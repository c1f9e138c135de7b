/* backends/cuda/emu/cu_pool.cc - backends/cuda/cuda_pool.cu, unchanged, compiled
 * by the host C++ compiler for the emulated GPU (see cu_dense.cc). */
#include "../cuda_pool.cu"
