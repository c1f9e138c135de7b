/* backends/cuda/emu/cu_report.cc - backends/cuda/cuda_report.cu, unchanged, compiled
 * by the host C++ compiler for the emulated GPU (cuda_backend.h's
 * NN_CUDA_EMULATION): a .cc name so that automake builds it as C++, with
 * its dependency tracking and per-module flags. */
#include "../cuda_report.cu"
