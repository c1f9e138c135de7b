/* backends/cpu_ref.h - the reference backend's operations, exported so that
 * the OpenBLAS backend can use the ones where plain loops are already the best
 * a CPU can do (elementwise activations, dropout, losses, optimiser steps).
 * Each has the signature of its slot in nn_backend_ops (backends/backend.h). */
#ifndef NNLAB_CPU_REF_H
#define NNLAB_CPU_REF_H

#include "backend.h"

int nn_ref_alloc(nn_backend *b, size_t bytes, void **out);
void nn_ref_free(nn_backend *b, void *p);
int nn_ref_upload(nn_backend *b, void *dst, const void *src, size_t bytes);
int nn_ref_download(nn_backend *b, void *dst, const void *src, size_t bytes);
int nn_ref_zero(nn_backend *b, void *p, size_t bytes);
int nn_ref_synchronize(nn_backend *b);

int nn_ref_linear_forward(nn_backend *b, int n, int in, int out,
                          const float *x, const float *w, const float *bias, float *y);
int nn_ref_linear_backward(nn_backend *b, int n, int in, int out,
                           const float *x, const float *w, const float *dy,
                           float *dx, float *dw, float *dbias);
int nn_ref_conv2d_workspace(nn_backend *b, const nn_conv_geom *g, size_t *bytes);
int nn_ref_conv2d_forward(nn_backend *b, const nn_conv_geom *g, const float *x,
                          const float *w, const float *bias, float *y, void *ws);
int nn_ref_conv2d_backward(nn_backend *b, const nn_conv_geom *g, const float *x,
                           const float *w, const float *dy, float *dx, float *dw,
                           float *dbias, void *ws);
int nn_ref_maxpool2d_forward(nn_backend *b, const nn_pool_geom *g, const float *x, float *y);
int nn_ref_maxpool2d_backward(nn_backend *b, const nn_pool_geom *g, const float *x,
                              const float *y, const float *dy, float *dx);
int nn_ref_act_forward(nn_backend *b, enum nn_act act, size_t n, const float *x, float *y);
int nn_ref_act_backward(nn_backend *b, enum nn_act act, size_t n, const float *x,
                        const float *y, const float *dy, float *dx);
int nn_ref_dropout_forward(nn_backend *b, size_t n, float p, uint64_t seed,
                           uint64_t counter, const float *x, float *y);
int nn_ref_dropout_backward(nn_backend *b, size_t n, float p, uint64_t seed,
                            uint64_t counter, const float *dy, float *dx);
int nn_ref_softmax_xent(nn_backend *b, int n, int classes, const float *logits,
                        const int32_t *labels, float *dlogits, float *stats);
int nn_ref_mse(nn_backend *b, int n, int width, const float *pred, const float *target,
               float *dpred, float *stats);
int nn_ref_sgd_step(nn_backend *b, size_t n, float *param, const float *grad,
                    float *velocity, const nn_sgd_hyper *h, long t);
int nn_ref_adam_step(nn_backend *b, size_t n, float *param, const float *grad,
                     float *m, float *v, const nn_adam_hyper *h, long t);
int nn_ref_batchnorm_forward(nn_backend *b, const nn_bn_geom *g, int training, const float *x,
                             const float *gamma, const float *beta, float *running, float *y);
int nn_ref_batchnorm_backward(nn_backend *b, const nn_bn_geom *g, const float *x,
                              const float *gamma, const float *dy, float *dx, float *dgamma,
                              float *dbeta);
int nn_ref_glu_forward(nn_backend *b, int n, int half, const float *x, float *y);
int nn_ref_glu_backward(nn_backend *b, int n, int half, const float *x, const float *dy,
                        float *dx);
int nn_ref_sparsemax_forward(nn_backend *b, int n, int d, const float *x, float *y);
int nn_ref_sparsemax_backward(nn_backend *b, int n, int d, const float *y, const float *dy,
                              float sparsity, float *dx);
int nn_ref_sparsemax_entropy(nn_backend *b, int n, int d, const float *y, float sparsity,
                             float *stats);

/* cpu_ref_graph.c */
int nn_ref_add_forward(nn_backend *b, size_t n, float scale, const float *a, const float *c,
                       float *y);
int nn_ref_add_backward(nn_backend *b, size_t n, float scale, const float *dy, float *da,
                        float *dc);
int nn_ref_mul_forward(nn_backend *b, size_t n, const float *a, const float *c, float *y);
int nn_ref_mul_backward(nn_backend *b, size_t n, const float *a, const float *c, const float *dy,
                        float *da, float *dc);
int nn_ref_slice_forward(nn_backend *b, int rows, int width, int from, int to, const float *x,
                         float *y);
int nn_ref_slice_backward(nn_backend *b, int rows, int width, int from, int to, const float *dy,
                          float *dx);
int nn_ref_accumulate(nn_backend *b, size_t n, const float *src, float *dst);

#endif
