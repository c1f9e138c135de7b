/* ui/gpu_compat.h - the GPU backend's additions to the engine API (the
 * teaching switches in nn_job_config; phase_valid and steps_async in
 * nn_snapshot) arrive together with NN_BACKEND_ABI in backends/backend.h.
 * Until that change is merged the lab builds without them and shows the
 * switches as "GPU only"; once it is, this guard can go. */
#ifndef NNLAB_UI_GPU_COMPAT_H
#define NNLAB_UI_GPU_COMPAT_H

#include "backend.h"

#ifdef NN_BACKEND_ABI
#define UI_HAVE_GPU_SWITCHES 1
#else
#define UI_HAVE_GPU_SWITCHES 0
#endif

#endif
