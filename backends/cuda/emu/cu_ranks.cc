/* backends/cuda/emu/cu_ranks.cc - backends/cuda/cuda_ranks.cu, unchanged, compiled
 * by the host C++ compiler for the emulated GPU (see cu_kernels.cc): there
 * its stand-in for NCCL sums through the host (docs/gpu-backend.md). */
#include "../cuda_ranks.cu"
