/* backends/cuda/emu/cu_module.cc - backends/cuda/cuda_module.cu, unchanged, compiled
 * by the host C++ compiler for the emulated GPU (cuda_backend.h's
 * NN_CUDA_EMULATION): a .cc name so that automake builds it as C++, with
 * its dependency tracking and per-module flags. */
#include "../cuda_module.cu"
