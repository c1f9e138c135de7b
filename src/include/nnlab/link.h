/* src/include/nnlab/link.h - what connects data-parallel ranks, and what
 * adding up their gradients costs: the link profiles (NVLink, PCI Express,
 * InfiniBand, Ethernet, and this machine's shared memory and TCP loopback
 * as calibrated here) and the ring all-reduce priced over one, with the
 * step of N ranks predicted from the cost model (explain.h).
 *
 * The ring (NCCL's and Open MPI's for large messages; nccl-tests'
 * doc/PERFORMANCE.md): N ranks pass N-1 chunks round the ring to add them up
 * (reduce-scatter) and N-1 more to share the sums (all-gather), so each
 * rank sends and receives 2(N-1)/N of the gradient's bytes and waits for
 * 2(N-1) hops:
 *
 *     allreduce_us = 2(N-1) x hop_us + 2(N-1)/N x bytes / bandwidth
 *
 * where bandwidth is what one rank moves each way (nccl-tests' "bus
 * bandwidth", the figure that does not depend on N) and hop_us one
 * message's fixed cost. Every figure a link gives is the link's: sourced
 * from its datasheet or standard (measured = false), or measured on this
 * machine by `nnlab calibrate --link` (measured = true); every time priced
 * from it is predicted.
 *
 * Link profiles are INI files (format: nnlab(1), LINK PROFILES): the
 * shipped ones in $(pkgdatadir)/profiles/links (under $NNLAB_PROFILES_DIR
 * when set, as the tests do), the user's in
 * $XDG_CONFIG_HOME/nnlab/profiles/links, which hide a shipped one of the
 * same name. */
#ifndef NNLAB_LINK_H
#define NNLAB_LINK_H

#include <stddef.h>

#include "nnlab/calibrate.h"
#include "nnlab/explain.h"
#include "nnlab/preset.h"

/* The link ranks are priced over when none is named: for the CPU's ranks,
 * shared memory, as Open MPI uses between processes of one host (this
 * machine's, when calibrated); for a GPU's, PCI Express 4.0, what most
 * machines with several GPUs but no NVLink have. */
#define NN_DEFAULT_LINK "shm"
#define NN_DEFAULT_GPU_LINK "pcie4"
const char *nn_link_default_name(int gpu);

typedef struct nn_link {
    char id[NN_NAME_LEN];        /* the file's stem, which --link names: "infiniband-hdr" */
    char name[NN_NAME_LEN];      /* what screens print: "InfiniBand HDR" */
    char description[NN_TEXT_LEN];
    double bandwidth_gbps;       /* GB/s one rank moves each way (the bus bandwidth) */
    double hop_us;               /* one message's fixed cost: latency and software */
    int measured;                /* calibrated on a machine (nnlab calibrate --link) */
    int user;                    /* found in the user's folder */
} nn_link;

/* ---- the ring's price ---------------------------------------------------------------------- */

/* Microseconds to sum `bytes` over `ranks` ranks on l (0 for one rank). */
double nn_allreduce_us(const nn_link *l, int ranks, double bytes);
/* Its parts: the hops' fixed costs and the bytes at the bandwidth. */
double nn_allreduce_hops_us(const nn_link *l, int ranks);
double nn_allreduce_bytes_us(const nn_link *l, int ranks, double bytes);

/* The figures of l from timed all-reduces of bytes[i] over `ranks` ranks
 * taking us[i] (i < n, n >= 2, at least two sizes): a least-squares fit of
 * the ring's form in relative error (the sizes span orders of magnitude).
 * Fills bandwidth_gbps and hop_us, and rms_error (relative, 0..); 0, or -1
 * when the points cannot be fitted (one size, a time not positive, a
 * negative fixed cost or bandwidth). */
int nn_link_fit(const double *bytes, const double *us, int n, int ranks, nn_link *l, double *rms_error);

/* ---- a step of N ranks, predicted ------------------------------------------------------------ */

/* Data-parallel as nnlab runs it (docs/ranks.md): the batch is each rank's,
 * so N ranks at batch B take N x B samples a step, and the gradients are
 * summed once a step. */
typedef struct nn_ranks_prediction {
    int ranks, rank_batch, global_batch;
    double gradient_bytes;       /* the parameters' gradients, float32 */
    double rank_step_us;         /* one rank's step at rank_batch, no sum (explain's) */
    double allreduce_us;         /* the ring's time for the gradients */
    double hops_us, bytes_us;    /*   its parts: the hops' fixed costs, the bytes */
    double backward_us;          /* the backward's share of rank_step_us: what the sums of the
                                    layers done first can hide behind with overlap */
    double exposed_us;           /* the part of the sum the step waits for: all of it without
                                    overlap; with it, what backward cannot hide (at least the
                                    last bucket's hops) */
    double step_us;              /* rank_step_us + exposed_us: the step of N ranks */
    double one_rank_us;          /* one rank at the global batch: the same samples alone */
    double speedup;              /* one_rank_us / step_us: what N ranks buy for them */
    double efficiency;           /* speedup / ranks (1 = every rank paid for itself) */
    double allreduce_share;      /* exposed_us / step_us */
} nn_ranks_prediction;

/* The step of p at `ranks` x `rank_batch` over l, priced by the cost model
 * with cal and opt (the one rank's way), with the sums overlapped with
 * backward or not. ranks >= 1. */
void nn_ranks_predict(const nn_preset *p, int rank_batch, int ranks, const nn_calibration *cal,
                      const nn_explain_options *opt, const nn_link *l, int overlap, nn_ranks_prediction *out);

/* The same for N ranks that share one host's cores, as `nnlab sweep
 * --ranks` measures them on this machine, rather than each running on a
 * device of its own: each rank's step is priced with rank_cal (this CPU
 * calibrated at the threads each rank runs) and slowed by timeshare (the
 * ranks that take turns on a core: 1, or ranks / cores past one a core);
 * one rank at N x B keeps cal, the host's every core. On a CPU nothing of
 * the sum hides behind the backward (the ranks' cores add it up), overlap
 * or not. nn_ranks_predict is this with rank_cal = cal, timeshare 1 and
 * the overlap as asked. */
void nn_ranks_predict_shared(const nn_preset *p, int rank_batch, int ranks, const nn_calibration *cal,
                             const nn_calibration *rank_cal, double timeshare, const nn_explain_options *opt,
                             const nn_link *l, int overlap, nn_ranks_prediction *out);

/* The threads each of `ranks` ranks runs on a host of `cores` (the
 * engine's rule: the cores over the ranks, at least one), and in
 * *timeshare how many ranks take turns on a core (1 up to one a core). */
int nn_ranks_threads_each(int ranks, int cores, double *timeshare);

/* "4 ranks are 1.98x as fast as one rank on the same 128 samples
 * (efficiency 49%): the all-reduce is 31% of their step" or, where they do
 * not pay, "2 ranks are 0.62x one rank's speed on the same 8 samples: the
 * all-reduce (45% of their step) costs more than splitting the batch saves". */
void nn_ranks_words(const nn_ranks_prediction *r, char *buf, size_t len);

/* ---- link profiles --------------------------------------------------------------------------- */

int nn_link_load(const char *path, nn_link *out, char *err, size_t err_len);
/* By name (the user's folder, then the shipped one) or by path. */
int nn_link_find(const char *name_or_path, nn_link *out, char *err, size_t err_len);
int nn_link_user_dir(char *dir, size_t len);
int nn_link_system_dir(char *dir, size_t len);
/* Every link profile, the user's first; returns how many (at most max). */
int nn_link_list(nn_link *out, int max);
/* Writes l (measured: its origin says where and how) atomically to path. */
int nn_link_save(const char *path, const nn_link *l, const char *origin, char *err, size_t err_len);
/* Where a link's figures come from, for every label that prints them:
 * "measured here by nnlab calibrate --link" (a measured profile in the
 * user's folder), "measured on the machine its file names" (a shipped
 * measured one: shm, tcp), "from its datasheet or standard". */
const char *nn_link_origin(const nn_link *l);

#endif
