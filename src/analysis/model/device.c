/* src/analysis/model/device.c - device status, the background survey and the GPU
 * switches' rule; see device.h. */
#include "nnlab/device.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cpu/cpu_blis.h"
#include "cpu/cpu_info.h"

/* Availability through the backend's own probe. A device this build does
 * not have at all is unavailable with the loader's reason (the GPU module
 * not built, not found, a library it needs missing), never hidden. */
static int builtin(const nn_backend_ops *ops)
{
    for (const nn_backend_ops *const *p = nn_builtin_backends; *p; p++)
        if (*p == ops)
            return 1;
    return 0;
}

static int known_name(const char *name);

/* The built-in backend of that name, or NULL: a lookup in the static list
 * that loads nothing (nn_backend_find may load the GPU module). */
static const nn_backend_ops *builtin_named(const char *name)
{
    for (const nn_backend_ops *const *p = nn_builtin_backends; name && *p; p++)
        if (!strcmp((*p)->name, name))
            return *p;
    return NULL;
}

nn_device_kind nn_device_kind_of(const char *name)
{
    nn_device_kind k = { 0 };
    const nn_backend_ops *ops = builtin_named(name);
    k.known = known_name(name);
    k.gpu = k.known && !ops;                /* only the GPU module's device is not built in */
    k.reference = ops == &nn_backend_cpu_ref;
    k.threaded = ops && !k.reference;
    k.host_memory = ops && ops->host_memory;
    return k;
}

/* What the device is, from its table, or for a known one that is not here
 * (only the GPU module can be missing) from its being the module's. */
static void set_kind(nn_device_status *out, const nn_backend_ops *ops)
{
    nn_device_kind k = nn_device_kind_of(out->name);
    out->gpu = ops ? !builtin(ops) : k.gpu;
    out->reference = k.reference;
    out->threaded = ops && builtin(ops) && !out->reference;
}

int nn_device_status_of(const char *name, nn_device_status *out)
{
    memset(out, 0, sizeof *out);
    nn_strlcpy(out->name, name ? name : "", sizeof out->name);
    const nn_backend_ops *ops = nn_backend_find_why(name, out->why, sizeof out->why);
    set_kind(out, ops);
    if (!ops) {
        if (!out->why[0])
            snprintf(out->why, sizeof out->why, "this build of nnlab has no %s backend", out->name);
        return -1;
    }
    if (ops->probe && ops->probe(out->why, sizeof out->why) != 0) {
        if (!out->why[0])
            snprintf(out->why, sizeof out->why, "not available here");
        return -1;
    }
    out->why[0] = '\0';
    out->available = 1;
    out->host_memory = ops->host_memory;
    out->on_host_cores = ops->host_memory || nn_backend_emulated(ops);
    nn_strlcpy(out->summary, ops->summary ? ops->summary : "", sizeof out->summary);
    if (!ops->describe || ops->describe(out->description, sizeof out->description) != 0)
        out->description[0] = '\0';
    return 0;
}

int nn_devices_list(nn_device_status *out, int max)
{
    int n = 0;
    for (const char *const *name = nn_backend_names; *name && n < max; name++)
        (void)nn_device_status_of(*name, &out[n++]);
    return n;
}

static int known_name(const char *name)
{
    for (const char *const *n = nn_backend_names; name && *n; n++)
        if (!strcmp(*n, name))
            return 1;
    return 0;
}

int nn_device_require(const char *name, char *err, size_t err_len)
{
    nn_device_status st;
    if (nn_device_status_of(name, &st) == 0)
        return 0;
    if (!known_name(name))
        return nn_errorf(err, err_len, "%s", st.why);    /* "unknown device 'x' (expected ...)" */
    return nn_errorf(err, err_len, "device %s: not available: %s", st.name, st.why);
}

/* ---- the survey ------------------------------------------------------------------------ */

struct nn_device_survey {
    pthread_t thread;
    pthread_mutex_t mu;          /* guards done, n and st once the thread runs */
    int done, n;
    nn_device_status st[NN_MAX_DEVICES];
};

static void *survey_main(void *arg)
{
    nn_device_survey *sv = arg;
    nn_device_status list[NN_MAX_DEVICES];
    int n = nn_devices_list(list, NN_MAX_DEVICES);
    pthread_mutex_lock(&sv->mu);
    memcpy(sv->st, list, sizeof list);
    sv->n = n;
    sv->done = 1;
    pthread_mutex_unlock(&sv->mu);
    return NULL;
}

nn_device_survey *nn_device_survey_start(char *err, size_t err_len)
{
    nn_device_survey *sv = calloc(1, sizeof *sv);
    if (!sv) {
        nn_errorf(err, err_len, "checking the devices: out of memory");
        return NULL;
    }
    int rc = pthread_mutex_init(&sv->mu, NULL);
    if (rc == 0 && (rc = pthread_create(&sv->thread, NULL, survey_main, sv)) != 0)
        pthread_mutex_destroy(&sv->mu);
    if (rc != 0) {
        nn_errorf(err, err_len, "checking the devices: no thread: %s", strerror(rc));
        free(sv);
        return NULL;
    }
    return sv;
}

int nn_device_survey_poll(nn_device_survey *sv, nn_device_status *out, int max)
{
    int n = -1;
    pthread_mutex_lock(&sv->mu);
    if (sv->done) {
        n = sv->n < max ? sv->n : max;
        memcpy(out, sv->st, (size_t)n * sizeof *out);
    }
    pthread_mutex_unlock(&sv->mu);
    return n;
}

void nn_device_survey_free(nn_device_survey *sv)
{
    if (!sv)
        return;
    pthread_join(sv->thread, NULL);
    pthread_mutex_destroy(&sv->mu);
    free(sv);
}

/* ---- the GPU switches ------------------------------------------------------------------ */

int nn_job_switches_check(const nn_job_config *cfg, char *err, size_t err_len)
{
    if (cfg->pinned && cfg->data_on_device)
        return nn_errorf(err, err_len, "pinned copies each batch from page-locked memory: it needs "
                         "the data set off the device (--no-data-on-device)");
    return 0;
}

/* ---- what the CPU runs on ---------------------------------------------------------------- */

/* The public facts from the backend's own reading (backends/cpu/cpu_info.c). */
static void facts_of(const nn_cpu_info *ci, nn_cpu_facts *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->model, sizeof out->model, "%s", ci->model);
    out->family = ci->family;
    out->model_number = ci->model_number;
    nn_cpu_features_text(ci->features, out->extensions, sizeof out->extensions);
    out->avx512 = nn_cpu_isa_level(ci->features) >= NN_ISA_AVX512;
    snprintf(out->blas_version, sizeof out->blas_version, "%s", ci->blas_version);
    snprintf(out->blas_core, sizeof out->blas_core, "%s", ci->blas_core);
    snprintf(out->blas_coretype_env, sizeof out->blas_coretype_env, "%s", ci->blas_coretype_env);
    snprintf(out->blas_core_from, sizeof out->blas_core_from, "%s", ci->blas_core_from);
    out->blas_threads = ci->blas_threads;
    out->clock_ghz = ci->clock_ghz;
    out->flops_per_cycle = ci->flops_per_cycle;
    out->peak_gflops_core = ci->peak_gflops_core;
    out->peak_gflops_core_measured = nn_cpu_fma_peak_measured();
    nn_cpu_blas_below_cpu(ci, out->warning, sizeof out->warning);
    snprintf(out->kernels, sizeof out->kernels, "%s", nn_cpu_kernels_name());
    out->blis_used = nn_blis_used(out->blis_why, sizeof out->blis_why);
    snprintf(out->blis_version, sizeof out->blis_version, "%s", nn_blis_version());
    snprintf(out->blis_arch, sizeof out->blis_arch, "%s", nn_blis_arch());
}

void nn_cpu_facts_read(nn_cpu_facts *out)
{
    nn_cpu_info ci;
    nn_cpu_info_read_now(&ci);
    facts_of(&ci, out);
}

int nn_cpu_sgemm_check(const nn_cpu_facts *f, double gflops_1thread, char *why, size_t why_len)
{
    nn_cpu_info ci;
    memset(&ci, 0, sizeof ci);
    ci.peak_gflops_core = f->peak_gflops_core;
    ci.peak_gflops_core_measured = f->peak_gflops_core_measured;
    snprintf(ci.blas_core, sizeof ci.blas_core, "%s", f->blas_core);
    return nn_cpu_sgemm_below_peak(&ci, gflops_1thread, why, why_len);
}
