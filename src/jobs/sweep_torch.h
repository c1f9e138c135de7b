/* src/jobs/sweep_torch.h - the sweep runner's side of a point measured with
 * PyTorch (sweep_torch.c); only sweep_run.c calls these. */
#ifndef NNLAB_SWEEP_TORCH_H
#define NNLAB_SWEEP_TORCH_H
#include <stddef.h>

#include "nnlab/sweep.h"

/* Starts point (d, i) of a PyTorch device on a thread (sw->torch_run);
 * 0, or -1 with err. */
int nn_sweep_torch_start(nn_sweep *sw, int d, int i, char *err, size_t err_len);
/* 1 when the running point ended: it is recorded and sw->torch_run freed;
 * 0 while it runs or when none does. Never waits. */
int nn_sweep_torch_poll(nn_sweep *sw);
/* Asks the running point's helper to stop (the next poll collects it). */
void nn_sweep_torch_cancel(nn_sweep *sw);
/* Waits for the running point's thread to end (the next poll records it). */
void nn_sweep_torch_wait(nn_sweep *sw);
#endif
