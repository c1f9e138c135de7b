/* backends/cuda/emu/cu_tab.cc - backends/cuda/cuda_tab.cu, unchanged, compiled
 * by the host C++ compiler for the emulated GPU (see cu_kernels.cc). */
#include "../cuda_tab.cu"
