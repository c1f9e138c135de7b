/* backends/cpu/cpu_blis.c - OpenBLAS or BLIS for each matrix product of the
 * fast CPU backend (cpu_blis.h).
 *
 * Why two libraries: neither is faster at every shape. OpenBLAS's kernels
 * for a CPU come from one build-time table (Debian's 0.3.21 runs
 * `Cooperlake` on Zen 4), BLIS's from its own run-time dispatch, and their
 * packing differs most on the small and skinny products of a training
 * step. So the calibration times both on each shape a job issues and the
 * product runs on the faster (src/analysis/model/calibrate_products.c).
 *
 * Why dlopen: nnlab must build and run where BLIS is not installed, and
 * BLIS's BLAS and CBLAS symbols (sgemm_, cblas_sgemm) have the same names as
 * the OpenBLAS we link. The library is opened RTLD_LOCAL, so its symbols
 * never become the process's, and we call only its typed API (bli_sgemm),
 * looked up through the handle: BLIS's cblas_sgemm would call sgemm_, which
 * the dynamic linker resolves to OpenBLAS's first. Any failure is a reason
 * kept for `nnlab devices` and `nnlab calibrate --json`, never an error.
 *
 * The table of choices is a hash of shape and thread count, written under a
 * mutex and read without one: a slot's key is written before its `used`
 * flag is published (release), and slots are never emptied, so a reader
 * that sees the flag (acquire) sees the key. A product's lookup allocates
 * nothing and takes no lock. */
#define _GNU_SOURCE
#include "cpu_blis.h"

#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define BLIS_SONAME "libblis.so.4"
/* BLIS's trans_t values (blis.h: BLIS_NO_TRANSPOSE, BLIS_TRANSPOSE) */
#define BLIS_NO_TRANS 0
#define BLIS_TRANS 8

/* BLIS's typed API with its 64-bit dim_t and inc_t (checked at load:
 * bli_info_get_int_type_size) */
typedef void (*bli_sgemm_fn)(int ta, int tb, int64_t m, int64_t n, int64_t k,
                             const float *alpha, const float *a, int64_t rsa, int64_t csa,
                             const float *b, int64_t rsb, int64_t csb, const float *beta,
                             float *c, int64_t rsc, int64_t csc);

static struct {
    pthread_once_t once;
    void *handle;
    bli_sgemm_fn sgemm;
    void (*set_threads)(int64_t);
    int64_t (*get_threads)(void);
    char version[32];
    char arch[32];
    char why[160];               /* "" when loaded */
    atomic_int threads;          /* what the backend asked for; 0: not yet */
    pthread_once_t env_once;
    int forced;                  /* NNLAB_BLAS: -1 or enum nn_blas_lib */
    char forced_why[128];
} blis = { .once = PTHREAD_ONCE_INIT, .env_once = PTHREAD_ONCE_INIT, .forced = -1 };

const char *nn_blas_lib_name(int lib)
{
    return lib == NN_BLAS_BLIS ? "blis" : "openblas";
}

void nn_blas_linear_shapes(int n, int in, int out, nn_blas_shape s[NN_BLAS_PRODUCTS])
{
    s[NN_BLAS_FWD] = (nn_blas_shape){ .m = n, .n = out, .k = in, .ta = 0, .tb = 1 };
    s[NN_BLAS_DX] = (nn_blas_shape){ .m = n, .n = in, .k = out, .ta = 0, .tb = 0 };
    s[NN_BLAS_DW] = (nn_blas_shape){ .m = out, .n = in, .k = n, .ta = 1, .tb = 0 };
}

void nn_blas_conv_shapes(int n, int c_out, int hw, int K, nn_blas_shape s[NN_BLAS_PRODUCTS])
{
    const int L = n * hw;
    s[NN_BLAS_FWD] = (nn_blas_shape){ .m = c_out, .n = L, .k = K, .ta = 0, .tb = 0 };
    s[NN_BLAS_DX] = (nn_blas_shape){ .m = K, .n = L, .k = c_out, .ta = 1, .tb = 0 };
    s[NN_BLAS_DW] = (nn_blas_shape){ .m = c_out, .n = K, .k = L, .ta = 0, .tb = 1 };
}

/* ---- loading ---------------------------------------------------------- */

static void *blis_symbol(const char *name)
{
    void *p = dlsym(blis.handle, name);
    if (!p)
        snprintf(blis.why, sizeof blis.why, "BLIS not used: the library has no %s", name);
    return p;
}

/* The symbols we call, and BLIS's integers the width we pass. */
static int blis_bind(void)
{
    const char *(*version)(void) = (const char *(*)(void))blis_symbol("bli_info_get_version_str");
    int64_t (*int_size)(void) = (int64_t (*)(void))blis_symbol("bli_info_get_int_type_size");
    int (*arch_id)(void) = (int (*)(void))blis_symbol("bli_arch_query_id");
    const char *(*arch_name)(int) = (const char *(*)(int))blis_symbol("bli_arch_string");
    blis.sgemm = (bli_sgemm_fn)blis_symbol("bli_sgemm");
    blis.set_threads = (void (*)(int64_t))blis_symbol("bli_thread_set_num_threads");
    blis.get_threads = (int64_t (*)(void))blis_symbol("bli_thread_get_num_threads");
    if (!version || !int_size || !arch_id || !arch_name || !blis.sgemm || !blis.set_threads ||
        !blis.get_threads)
        return -1;
    if (int_size() != 64) {
        snprintf(blis.why, sizeof blis.why,
                 "BLIS not used: built with %d-bit integers (nnlab calls it with 64)",
                 (int)int_size());
        return -1;
    }
    nn_strlcpy(blis.version, version(), sizeof blis.version);
    nn_strlcpy(blis.arch, arch_name(arch_id()), sizeof blis.arch);
    return 0;
}

static void blis_load(void)
{
    /* NNLAB_BLIS_LIBRARY: another file (a test's missing one, a BLIS built
     * elsewhere) */
    const char *name = getenv("NNLAB_BLIS_LIBRARY");
    if (!name || !*name)
        name = BLIS_SONAME;
    blis.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!blis.handle) {
        snprintf(blis.why, sizeof blis.why, "BLIS not used: %.100s not found", nn_safe(name));
        return;
    }
    if (blis_bind() != 0) {
        dlclose(blis.handle);
        blis.handle = NULL;
        blis.sgemm = NULL;
        return;
    }
    int threads = atomic_load(&blis.threads);
    blis.set_threads(threads > 0 ? threads : 1);
}

static int blis_ready(void)
{
    if (pthread_once(&blis.once, blis_load) != 0)
        return 0;
    return blis.sgemm != NULL;
}

int nn_blis_status(char *why, size_t why_len)
{
    int ok = blis_ready();
    if (why && why_len)
        nn_strlcpy(why, ok ? "" : blis.why, why_len);
    return ok ? 0 : -1;
}

const char *nn_blis_version(void)
{
    return blis_ready() ? blis.version : "";
}

const char *nn_blis_arch(void)
{
    return blis_ready() ? blis.arch : "";
}

void nn_blis_set_threads(int threads)
{
    atomic_store(&blis.threads, threads);
    if (blis_ready())
        blis.set_threads(threads > 0 ? threads : 1);
}

int nn_blis_threads(void)
{
    return blis_ready() ? (int)blis.get_threads() : 0;
}

/* ---- the products --------------------------------------------------------- */

void nn_blas_sgemm(int lib, const nn_blas_shape *s, float alpha, const float *a, int lda,
                   const float *b, int ldb, float beta, float *c, int ldc)
{
    if (lib == NN_BLAS_BLIS && blis_ready()) {
        /* row-major: a row's stride is its leading dimension, a column's 1;
         * BLIS applies the transposes to the stored matrices as given */
        blis.sgemm(s->ta ? BLIS_TRANS : BLIS_NO_TRANS, s->tb ? BLIS_TRANS : BLIS_NO_TRANS,
                   s->m, s->n, s->k, &alpha, a, lda, 1, b, ldb, 1, &beta, c, ldc, 1);
        return;
    }
    cblas_sgemm(CblasRowMajor, s->ta ? CblasTrans : CblasNoTrans,
                s->tb ? CblasTrans : CblasNoTrans, s->m, s->n, s->k, alpha, a, lda, b, ldb,
                beta, c, ldc);
}

static void read_forced(void)
{
    const char *v = getenv("NNLAB_BLAS");
    if (!v || !*v)
        return;
    if (strcmp(v, "openblas") == 0)
        blis.forced = NN_BLAS_OPENBLAS;
    else if (strcmp(v, "blis") == 0)
        blis.forced = NN_BLAS_BLIS;
    else
        snprintf(blis.forced_why, sizeof blis.forced_why,
                 "NNLAB_BLAS=%.40s ignored: use openblas or blis", nn_safe(v));
}

int nn_blas_forced(char *why, size_t why_len)
{
    (void)pthread_once(&blis.env_once, read_forced);
    if (why && why_len)
        nn_strlcpy(why, blis.forced_why, why_len);
    return blis.forced;
}

int nn_blis_used(char *why, size_t why_len)
{
    char forced_why[128];
    int forced = nn_blas_forced(forced_why, sizeof forced_why);
    if (nn_blis_status(why, why_len) != 0)
        return 0;
    if (forced == NN_BLAS_OPENBLAS) {
        nn_strlcpy(why, "BLIS not used: NNLAB_BLAS=openblas", why_len);
        return 0;
    }
    if (forced == NN_BLAS_BLIS)
        nn_strlcpy(why, "every product: NNLAB_BLAS=blis", why_len);
    else if (forced_why[0])
        snprintf(why, why_len, "per product shape, as the calibration chose (%s)", forced_why);
    else
        nn_strlcpy(why, "per product shape, as the calibration chose", why_len);
    return 1;
}

/* ---- the table ------------------------------------------------------------ */

typedef struct choice_slot {
    atomic_int used;
    nn_blas_shape s;
    int threads;
    atomic_int lib;
} choice_slot;

static choice_slot table[NN_BLAS_TABLE];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int table_count;

static unsigned shape_hash(const nn_blas_shape *s, int threads)
{
    uint64_t h = 1469598103934665603ull;
    const int key[6] = { s->m, s->n, s->k, !!s->ta, !!s->tb, threads };
    for (int i = 0; i < 6; i++)
        h = (h ^ (uint32_t)key[i]) * 1099511628211ull;
    return (unsigned)(h % NN_BLAS_TABLE);
}

static int same_key(const choice_slot *e, const nn_blas_shape *s, int threads)
{
    return e->threads == threads && e->s.m == s->m && e->s.n == s->n && e->s.k == s->k &&
           !e->s.ta == !s->ta && !e->s.tb == !s->tb;
}

/* The slot holding (s, threads), or the empty slot where it would go; NULL
 * when neither (the table full). */
static choice_slot *find_slot(const nn_blas_shape *s, int threads)
{
    unsigned h = shape_hash(s, threads);
    for (int i = 0; i < NN_BLAS_TABLE; i++) {
        choice_slot *e = &table[(h + (unsigned)i) % NN_BLAS_TABLE];
        if (!atomic_load_explicit(&e->used, memory_order_acquire) || same_key(e, s, threads))
            return e;
    }
    return NULL;
}

int nn_blas_pick(const nn_blas_shape *s, int threads)
{
    int forced = nn_blas_forced(NULL, 0);
    if (forced >= 0)
        return forced;
    if (atomic_load_explicit(&table_count, memory_order_relaxed) == 0)
        return NN_BLAS_OPENBLAS;
    const choice_slot *e = find_slot(s, threads);
    if (!e || !atomic_load_explicit(&e->used, memory_order_acquire))
        return NN_BLAS_OPENBLAS;
    return atomic_load_explicit(&e->lib, memory_order_relaxed);
}

int nn_blas_known(const nn_blas_shape *s, int threads)
{
    const choice_slot *e = find_slot(s, threads);
    return e && atomic_load_explicit(&e->used, memory_order_acquire);
}

int nn_blas_remember(const nn_blas_shape *s, int threads, int lib)
{
    int rc = 0;
    pthread_mutex_lock(&table_lock);
    choice_slot *e = find_slot(s, threads);
    if (!e || (!atomic_load(&e->used) && atomic_load(&table_count) >= NN_BLAS_TABLE - 1)) {
        rc = -1;                 /* one slot stays empty: a search always ends */
    } else {
        atomic_store_explicit(&e->lib, lib, memory_order_relaxed);
        if (!atomic_load(&e->used)) {
            e->s = *s;
            e->s.ta = !!s->ta;
            e->s.tb = !!s->tb;
            e->threads = threads;
            atomic_store_explicit(&e->used, 1, memory_order_release);
            atomic_fetch_add(&table_count, 1);
        }
    }
    pthread_mutex_unlock(&table_lock);
    return rc;
}

/* Only where no product runs: slots are emptied here, which readers do not
 * expect while they search. */
void nn_blas_forget(void)
{
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < NN_BLAS_TABLE; i++)
        atomic_store(&table[i].used, 0);
    atomic_store(&table_count, 0);
    pthread_mutex_unlock(&table_lock);
}

/* ---- the rule ------------------------------------------------------------- */

int nn_blas_choose(double openblas_gflops, double blis_gflops, int blis_available)
{
    if (!blis_available || blis_gflops <= 0 || openblas_gflops <= 0)
        return NN_BLAS_OPENBLAS;
    return blis_gflops > openblas_gflops * (1.0 + NN_BLAS_MARGIN) ? NN_BLAS_BLIS
                                                                   : NN_BLAS_OPENBLAS;
}
