/* src/include/nnlab/profile.h - GPU profiles: what a GPU can do, as data, so
 * that a machine without one can still be shown what one would do. A
 * profile holds the figures the cost model needs (its FP32 peak, memory
 * bandwidth, host link, launch, graph and synchronisation costs, and a
 * deep-learning framework's per-operation host overhead in eager mode) and
 * maps onto an nn_calibration, so the one cost model (explain.h) prices it:
 * every figure it gives is *predicted*, never measured.
 *
 * Profiles are INI files (format: man/nnlab.1, GPU PROFILES): the shipped
 * ones in $(pkgdatadir)/profiles ($NNLAB_PROFILES_DIR overrides it, as the
 * tests do), the user's in $XDG_CONFIG_HOME/nnlab/profiles, which hide a
 * shipped one of the same name. `nnlab calibrate --device gpu --save-profile
 * NAME` writes a real GPU's calibration as a profile marked measured. */
#ifndef NNLAB_PROFILE_H
#define NNLAB_PROFILE_H

#include <stddef.h>

#include "nnlab/calibrate.h"
#include "nnlab/explain.h"
#include "nnlab/preset.h"

/* The profile used when none is named: the T4, the GPU of free cloud
 * notebooks and many classrooms. $NNLAB_GPU_PROFILE names another. */
#define NN_DEFAULT_GPU_PROFILE "t4"

typedef struct nn_gpu_profile {
    char name[NN_NAME_LEN];      /* what screens print: "T4" (the file name when unset) */
    char id[NN_NAME_LEN];        /* the file's stem, which --gpu-profile names: "t4" */
    char description[NN_TEXT_LEN];
    int measured;                /* saved from a calibration of a real GPU */
    int user;                    /* found in the user's folder */
    /* [gpu] the device */
    double fp32_gflops;          /* FP32 peak (a measured profile: sgemm as calibrated) */
    double mem_gbps;             /* memory bandwidth */
    /* [link] the host link */
    int pcie_gen;                /* PCI Express generation (what the link figures follow from) */
    double copy_us;              /* a 4-byte copy to the device from pageable memory */
    double copy_gbps;            /* a large copy to the device from pageable memory */
    double pinned_copy_us;       /* ... from page-locked memory */
    double pinned_copy_gbps;
    double download_us;          /* 4 bytes back to the host and the wait for them */
    /* [launch] issuing work */
    double launch_us;            /* one kernel launch, back to back */
    double graph_launch_us;      /* launching a recorded CUDA graph */
    double graph_node_us;        /* each node the graph replays */
    double sync_us;              /* a tiny kernel and a synchronise: one round trip */
    /* [host] the machine around the GPU */
    double framework_op_us;      /* a framework's host cost per operation in eager mode
                                    (Python, dispatch, autograd), beyond the launch: paid
                                    on either device by the jacobian's framework passes
                                    (the training step's are [framework]'s) */
    double framework_gpu_op_us;  /* its further host cost per operation on a GPU tensor
                                    (CUDA dispatch, the caching allocator, autograd's
                                    device thread); optional in a file, read as
                                    NN_FRAMEWORK_GPU_OP_US when absent */
    double host_copy_gbps;       /* memcpy in host memory: gathering a batch to copy */
    /* [framework] the same framework's step on the host's CPU (nnlab/framework.h): its
     * fixed cost per step, its dispatch per op, its elementwise and optimiser passes and
     * its kernels against nnlab's, each over a term priced from the CPU's calibration,
     * fitted to PyTorch's measured CPU steps; optional in a file, read as
     * NN_FRAMEWORK_CPU_* (the fit) when absent */
    nn_framework_cpu framework_cpu;
    /* [framework] its step on this profile's GPU (nnlab/framework.h): host cost per step,
     * per op beyond the launch, per convolution layer, and the share of nnlab's device
     * time it adds; fitted to PyTorch on the recorded H200; optional in a file, read as
     * NN_FRAMEWORK_GPU_* (the fit) when absent */
    nn_framework_gpu framework_gpu;
    /* [kernels] what a call costs beyond its FLOPs and bytes at the peak (fitted to the
       recorded GH100 runs; the other shipped profiles' derived from them by
       bench/derive_profile.py); optional, 0 when absent: not priced (a rate: the FP32 peak) */
    double conv_forward_us;      /* the device's fixed time of one call, by kind: its kernels' */
    double conv_backward_us;     /*   shortest durations and the gaps between them */
    double linear_forward_us;
    double linear_backward_us;
    double other_op_us;          /*   one of nnlab's own kernels (elementwise, loss, optimiser) */
    double conv_forward_gflops;  /* the rate cuDNN's convolutions reach (0: the peak) */
    double conv_backward_gflops;
    double linear_gflops;        /* the rate cuBLAS's products reach (0: the peak) */
    double layer_ns;             /* per element of a layer of its own kernels (batch norm, GLU) */
    double pool_ns;              /* per element of a pooling layer (1-D pools, max over length) */
    double cudnn_call_us;        /* eager: a cuDNN convolution call's host cost beyond a launch */
    double cublas_call_us;       /* eager: a cuBLAS product's */
    double layer_op_us;          /* the device's fixed time of a layer of its own kernels */
    double conv_backward_reduce_us; /* a convolution's backward call, times the square root
                                    of its output elements: its bias gradient's reduction */
    double linear_backward_reduce_us; /* per call, times the square root of the batch: its */
    double layer_reduce_us;      /*   reductions over the batch (the bias gradient, a batch
                                    norm's statistics) */
    double conv_backward_slow_flops; /* a convolution's backward call beyond so many FLOPs */
    double conv_backward_slow_gflops; /*   pays its FLOPs beyond them at this rate too (cuDNN's
                                    slow deterministic filter gradient at large sizes) */
} nn_gpu_profile;

/* The shipped profiles' framework_gpu_op_us (see profiles/t4.ini for its
 * source): what a profile saved before the figure existed reads. */
#define NN_FRAMEWORK_GPU_OP_US 20.0

/* A framework's whole host cost per operation on this profile's GPU:
 * framework_op_us + framework_gpu_op_us (the launch not included). */
double nn_profile_framework_gpu_us(const nn_gpu_profile *p);

/* Reads and checks path: every key known, every figure there and in range
 * (strict numbers, as presets); -1 with a one-line message naming the file,
 * the section and the key. */
int nn_profile_load(const char *path, nn_gpu_profile *out, char *err, size_t err_len);

/* A profile by name ("t4", "T4": the file nn_profile_stem names, the
 * user's folder first, then the shipped one) or by path (a value with '/'
 * or ending in ".ini"). */
int nn_profile_find(const char *name_or_path, nn_gpu_profile *out, char *err, size_t err_len);

/* The file stem a profile name maps to: lower case, anything but letters,
 * digits, '.', '_' and '-' made '-' ("My L4" -> "my-l4"); and the path a
 * profile of that name is saved to in the user's folder. */
void nn_profile_stem(const char *name, char *stem, size_t len);
int nn_profile_user_path(const char *name, char *path, size_t len);

/* The profile of the GPU that is here, by its name as the backend or NVML
 * gives it ("NVIDIA H200", "NVIDIA H100 80GB HBM3", a device description
 * "NVIDIA GeForce RTX 4090 (GPU 0 of 1), ..."): the user's or shipped
 * profile whose file stem or name is the model's ("h200", "rtx4090"). 0
 * with out filled, -1 when none matches (the emulated GPU, a GPU no
 * profile describes). The CLI and the lab both ask it, so Explain compares
 * a measured GPU with the profile of the same GPU. */
int nn_profile_for_device(const char *device, nn_gpu_profile *out);

/* $NNLAB_GPU_PROFILE when set, else NN_DEFAULT_GPU_PROFILE. */
const char *nn_profile_default_name(void);

/* $XDG_CONFIG_HOME/nnlab/profiles (or ~/.config/nnlab/profiles). */
int nn_profile_user_dir(char *dir, size_t len);
/* $NNLAB_PROFILES_DIR if set, else the installed folder ($(pkgdatadir)/profiles). */
const char *nn_profile_system_dir(void);

typedef struct nn_profile_entry {
    nn_gpu_profile p;            /* valid when error is "" */
    char path[NN_PATH_LEN];
    int shadowed;                /* a user profile of the same name hides this one */
    char error[NN_ERR_LEN];
} nn_profile_entry;

/* The user's profiles, then the shipped ones, sorted by name within each;
 * the count (at most max). A file that does not load is listed with error. */
int nn_profile_list(nn_profile_entry *out, int max);

/* The calibration a profile stands for, which the cost model prices:
 * sgemm and every product at the FP32 peak (a profile has no rate curves),
 * other ops no faster than the peak or their bytes at the bandwidth, a
 * launch per op, no fixed cost of a matrix product beyond its launch, and
 * the copy, graph and synchronisation figures as given. device "gpu",
 * machine "profile NAME", note "predicted for NAME". */
void nn_profile_calibration(const nn_gpu_profile *p, nn_calibration *out);

/* A real GPU's calibration as a profile named name, marked measured: the
 * figures nnlab measures come from cal, the two it cannot (the framework's
 * per-op overhead and the PCIe generation) from `estimates` (the default
 * profile). -1 when cal is not a GPU's or has no graph or pinned figures. */
int nn_profile_from_calibration(const nn_calibration *cal, const char *name, const nn_gpu_profile *estimates,
                                nn_gpu_profile *out, char *err, size_t err_len);

/* Writes p to path atomically, each figure with a comment saying where it
 * came from; the folder is created. */
int nn_profile_save(const char *path, const nn_gpu_profile *p, const char *origin, char *err, size_t err_len);

/* ---- the original experiment beside the prediction ------------------------------------- */

/* The whole job the preset's write-up timed (its own batch and epochs):
 * what it measured and what the profile predicts for it, each way. */
typedef struct nn_writeup {
    int batch, epochs;
    long steps;                  /* steps per epoch x epochs */
    double cpu_s, gpu_s;         /* measured by the write-up; 0: not given */
    double way_s[NN_GPU_WAYS];   /* predicted: steps x the predicted step of each way */
    double cpu_max_s, gpu_max_s; /* a range's high end (cpu_s, gpu_s its low end); 0: one figure */
    int own_job;                 /* nn_writeup_for_job: the job asked about is the write-up's */
    int job_batch, job_epochs;   /* nn_writeup_for_job: the job asked about */
} nn_writeup;

/* 0 with out filled when p carries what its original experiment measured
 * (measured_cpu_s or measured_gpu_s), else -1: the experiment's own job
 * (measured_batch and measured_epochs), whatever p's batch and epochs now
 * are. prof NULL: no prediction (way_s 0). */
int nn_writeup_predict(const nn_preset *p, const nn_gpu_profile *prof, nn_writeup *out);

/* The same, set beside a job of batch and epochs on p's network (writeup.c):
 * own_job says whether it is the experiment's own job. Only then may a front
 * end compare the job with the figures; otherwise they are shown as the
 * original's (nn_writeup_text). */
int nn_writeup_for_job(const nn_preset *p, int batch, int epochs, const nn_gpu_profile *prof, nn_writeup *out);

/* A measured figure or range in words: "50 s", "120-150 s". */
void nn_writeup_seconds_text(double lo, double hi, char *buf, size_t len);

/* The write-up's line, the one text of the CLI and the lab: for its own job
 * "2 epochs at batch 4 = 25000 steps: measured CPU 50 s, GPU 94 s"; for
 * another "the write-up measured CPU 50 s, GPU 94 s for its own job: batch 4,
 * 2 epochs (25000 steps), not this one (batch 16, 2 epochs)". */
void nn_writeup_text(const nn_writeup *w, char *buf, size_t len);

/* ---- predictions ------------------------------------------------------------------------ */

/* Each way of running a GPU step (explain.h) explained for the profile:
 * the one cost model, three sets of options. */
void nn_profile_predict(const nn_preset *p, int batch, const nn_gpu_profile *prof,
                        nn_explanation out[NN_GPU_WAYS]);

#endif
