/* tests/jacobian_check.h - the Jacobian job's checks on one device, shared
 * by tests/test_jacobian.c (cpu-ref, cpu) and tests/test_gpu.c (the GPU, the
 * emulated one in make check). Include after <cmocka.h>. */
#ifndef NNLAB_TEST_JACOBIAN_CHECK_H
#define NNLAB_TEST_JACOBIAN_CHECK_H

#include "nnlab/engine.h"
#include "nnlab/jacobian.h"

/* The final snapshot of the last jac_check_run. */
extern nn_snapshot jac_check_last;

/* Runs the shipped mlp-jacobian preset on device at val by method (graph:
 * the [gpu] graph switch) to DONE; fills r. */
void jac_check_run(const char *device, int val, enum nn_jac_method m, int graph, nn_jac_result *r);
/* The same on `threads` CPU threads (0: the free cores). */
void jac_check_run_threads(const char *device, int val, enum nn_jac_method m, int graph, int threads,
                           nn_jac_result *r);
/* Every method on device at val agrees with central finite differences of
 * the network in double and with every other method; the rows and batched
 * methods found J's off-diagonal blocks zero. */
void jac_check_device(const char *device, int val);

#endif
