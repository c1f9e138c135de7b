/* src/explain.h - why a step takes the time it takes: the cost model (cost.h)
 * priced with a device's calibration (calibrate.h), split into fixed
 * overheads (operations issued, copies, synchronisation) and work (per op the
 * larger of FLOPs at the sgemm peak and bytes at the streaming bandwidth, a
 * roofline), and the regime named with the numbers behind it. */
#ifndef NNLAB_EXPLAIN_H
#define NNLAB_EXPLAIN_H

#include "calibrate.h"
#include "cost.h"
#include "preset.h"

typedef enum nn_regime {
    NN_REGIME_OVERHEAD,          /* fixed costs per step exceed the work */
    NN_REGIME_MEMORY,            /* the work is bytes moved more than FLOPs */
    NN_REGIME_COMPUTE
} nn_regime;

typedef struct nn_explain_options {
    int host_memory;             /* the device computes in host memory (CPU) */
    int data_on_device;          /* GPU: the data set is resident, batches gathered there */
    int sync_every_step;         /* the loss is read back every step */
    int launches_per_step;       /* measured by the backend; 0 = estimate one per op */
} nn_explain_options;

typedef struct nn_explanation {
    nn_cost cost;
    int ops;                     /* operations issued per step (launches on a GPU) */
    double issue_us;             /* ops x the calibrated cost of issuing one */
    double copy_us;              /* the batch to the device: fixed cost + bytes / bandwidth */
    double sync_us;              /* one round trip when the loss is read every step */
    double compute_us;           /* all FLOPs at the sgemm peak */
    double memory_us;            /* all bytes at the streaming bandwidth */
    double work_us;              /* sum over ops of max(FLOPs/peak, bytes/bandwidth) */
    double predicted_us;         /* issue + copy + sync + work */
    nn_regime regime;
    char why[512];               /* the numbers behind the regime */
    char advice[512];            /* the change that would help most */
} nn_explanation;

void nn_explain(const nn_preset *p, int batch, const nn_calibration *cal,
                const nn_explain_options *opt, nn_explanation *out);

const char *nn_regime_name(nn_regime r);

#endif
