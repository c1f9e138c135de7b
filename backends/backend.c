/* backends/backend.c - the list of compiled-in backends, the loader of the
 * GPU module, and the few helpers every backend and the engine share (see
 * backend.h). Plain C: the GPU module is found and opened with dlopen, so
 * this program links no CUDA library and runs where none is installed. */
#include "config.h"

#include "backend.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where the module is looked for (set by Makefile.am): the installed
 * $(pkglibdir), then the build tree's libtool output folder, the latter
 * only for a program that runs from inside the build tree (NN_BUILD_TOP_DIR). */
#ifndef NN_MODULE_DIR
#define NN_MODULE_DIR ""
#endif
#ifndef NN_BUILD_MODULE_DIR
#define NN_BUILD_MODULE_DIR ""
#endif
#ifndef NN_BUILD_TOP_DIR
#define NN_BUILD_TOP_DIR ""
#endif
/* The emulated GPU modules (backends/cuda/emu/), beside the real one. */
#define NN_GPU_EMU_MODULE_FILE "nnlab-cuda-emu.so"
#define NN_GPU_EMU_FMA_MODULE_FILE "nnlab-cuda-emu-fma.so"

/* An explicit list rather than self-registration: the order is the order
 * `nnlab devices` shows, and a reader sees every backend in one place. The GPU
 * backend is a run-time module, so it is not listed here. */
const nn_backend_ops *const nn_builtin_backends[] = {
    &nn_backend_cpu_ref,
    &nn_backend_cpu,
    NULL,
};

const char *const nn_backend_names[] = { "cpu-ref", "cpu", "gpu", NULL };

double nn_backend_library_bytes(const nn_backend_ops *ops)
{
    return ops == &nn_backend_cpu ? NN_OPENBLAS_BUFFER_BYTES : 0.0;
}

/* ---- the GPU module ------------------------------------------------------- */

/* Loaded once (nvtop's habit with NVML: look the library up at run time, keep
 * the reason when it is not there, for the UI to show). The module is never
 * unloaded: the CUDA runtime it pulls in keeps threads and state. */
static pthread_once_t gpu_once = PTHREAD_ONCE_INIT;
static const nn_backend_ops *gpu_ops;
static int gpu_emulated;        /* gpu_ops is the emulated GPU: its kernels run on this CPU */
static char gpu_why[NN_BACKEND_ERROR_LEN];

/* snprintf that may truncate (a reason longer than the buffer is cut). */
static void say(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    if (!buf || !len)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* Opens the module at path: 0 and *ops, or -1 with the reason in why. */
static int load_module(const char *path, const nn_backend_ops **ops, char *why, size_t why_len)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        if (e && strstr(e, "cannot open shared object file"))
            say(why, why_len, "a library the GPU module needs is missing: %s "
                     "(the CUDA runtime, cuBLAS and cuDNN must be on the library path)", e);
        else
            say(why, why_len, "cannot load %s: %s", path, e ? e : "unknown error");
        return -1;
    }
    const int *abi = dlsym(h, NN_GPU_MODULE_ABI_SYMBOL);
    void *sym = dlsym(h, NN_GPU_MODULE_OPS_SYMBOL);
    if (!abi || !sym) {
        say(why, why_len, "%s is not an nnlab GPU module (no %s)", path,
                 abi ? NN_GPU_MODULE_OPS_SYMBOL : NN_GPU_MODULE_ABI_SYMBOL);
        dlclose(h);
        return -1;
    }
    if (*abi != NN_BACKEND_ABI) {
        say(why, why_len, "%s was built for op-table ABI %d, this nnlab needs %d: "
                 "rebuild or reinstall it", path, *abi, NN_BACKEND_ABI);
        dlclose(h);
        return -1;
    }
    nn_backend_module_fn fn;
    memcpy(&fn, &sym, sizeof fn);   /* dlsym's object pointer to a function pointer */
    const nn_backend_ops *o = fn();
    if (!o || !o->name || strcmp(o->name, "gpu") != 0) {
        say(why, why_len, "%s returned no \"gpu\" op table", path);
        dlclose(h);
        return -1;
    }
    *ops = o;
    return 0;
}

/* The GPU module's file: nnlab-cuda.so, or, when NNLAB_GPU_EMULATION selects
 * it, the emulated GPU (the same CUDA code run on the CPU, for tests:
 * docs/gpu-backend.md): "1" nnlab-cuda-emu.so, "fma" its build with fused
 * multiply-adds. Without the variable an emulated device never appears as a
 * GPU. NULL, with the reason in why, for any other value. */
static const char *gpu_module_file(int *emulated, char *why, size_t why_len)
{
    const char *e = getenv("NNLAB_GPU_EMULATION");
    *emulated = 0;
    if (!e || !*e || strcmp(e, "0") == 0)
        return NN_GPU_MODULE_FILE;
    *emulated = 1;
    if (strcmp(e, "1") == 0)
        return NN_GPU_EMU_MODULE_FILE;
    if (strcmp(e, "fma") == 0)
        return NN_GPU_EMU_FMA_MODULE_FILE;
    say(why, why_len, "NNLAB_GPU_EMULATION=%s: expected 1 (the emulated GPU module) or fma (its "
        "build with fused multiply-adds), or unset for a real GPU", e);
    return NULL;
}

/* Whether this program is an uninstalled build: its executable lies inside
 * the build tree. Only then may it load the build tree's module: an
 * installed nnlab whose own module is missing must say so, not load
 * whatever a build folder left behind (a stale or someone else's build, a
 * path compiled into the binary). The executable's place, rather
 * than an environment variable, so that `make check`, `./nnlab` in the
 * build folder and a test program all work without one; the tests set
 * NNLAB_MODULE_DIR anyway. */
static int running_from_build_tree(void)
{
    char exe[4096];
    size_t top = strlen(NN_BUILD_TOP_DIR);
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (top == 0 || n <= 0)
        return 0;
    exe[n] = '\0';
    return strncmp(exe, NN_BUILD_TOP_DIR, top) == 0 && exe[top] == '/';
}

/* One folder of a ':'-separated list into dirs[*n], when it is not empty. */
static void add_dir(const char *from, size_t len, char dirs[][NN_MODULE_DIR_LEN], int *n, int max)
{
    if (len == 0 || len >= NN_MODULE_DIR_LEN || *n >= max)
        return;
    memcpy(dirs[*n], from, len);
    dirs[(*n)++][len] = '\0';
}

int nn_module_dirs(const char *build_dir, char dirs[][NN_MODULE_DIR_LEN], int max)
{
    const char *env = getenv("NNLAB_MODULE_DIR");
    int n = 0;
    if (env && *env) {
        for (const char *p = env; *p;) {      /* set: the only places looked */
            size_t len = strcspn(p, ":");
            add_dir(p, len, dirs, &n, max);
            p += len + (p[len] == ':');
        }
        return n;
    }
    add_dir(NN_MODULE_DIR, strlen(NN_MODULE_DIR), dirs, &n, max);
    if (build_dir && running_from_build_tree())
        add_dir(build_dir, strlen(build_dir), dirs, &n, max);
    return n;
}

static void load_gpu_module(void)
{
    char dirs[NN_MODULE_DIRS_MAX][NN_MODULE_DIR_LEN];
    int n, found = 0, emulated = 0;
    char looked[NN_BACKEND_ERROR_LEN / 2] = "";
    size_t used = 0;
    const char *file = gpu_module_file(&emulated, gpu_why, sizeof gpu_why);

    if (!file)
        return;
    n = nn_module_dirs(NN_BUILD_MODULE_DIR[0] ? NN_BUILD_MODULE_DIR : NULL, dirs, NN_MODULE_DIRS_MAX);
    for (int i = 0; i < n; i++) {
        char path[NN_MODULE_DIR_LEN + 64], why[NN_BACKEND_ERROR_LEN];
        if ((size_t)snprintf(path, sizeof path, "%.*s/%s", NN_MODULE_DIR_LEN, dirs[i], file) >= sizeof path)
            continue;
        if (access(path, F_OK) != 0) {
            int w = snprintf(looked + used, sizeof looked - used, "%s%s", used ? ", " : "", dirs[i]);
            if (w > 0 && (size_t)w < sizeof looked - used)
                used += (size_t)w;
            continue;
        }
        if (load_module(path, &gpu_ops, why, sizeof why) == 0) {
            gpu_emulated = emulated;
            return;
        }
        if (!found)             /* the first module found that failed says most */
            say(gpu_why, sizeof gpu_why, "%s", why);
        found = 1;
    }
    if (found)
        return;
    if (emulated) {             /* built with every nnlab, never installed: a test stand-in */
        say(gpu_why, sizeof gpu_why, "the emulated GPU module %s (NNLAB_GPU_EMULATION) is not "
                 "in %s (it is built for the tests, never installed: NNLAB_MODULE_DIR may name "
                 "a build's backends/cuda/.libs)", file, used ? looked : "any folder");
        return;
    }
#ifdef NN_GPU_MODULE_BUILT
    say(gpu_why, sizeof gpu_why, "the GPU module %s is not in %s (NNLAB_MODULE_DIR names "
             "its folder)", NN_GPU_MODULE_FILE, used ? looked : "any folder");
#else
    const char *env = getenv("NNLAB_MODULE_DIR");
    if (env && *env)
        say(gpu_why, sizeof gpu_why, "this build of nnlab has no GPU backend (configured "
                 "without CUDA), and NNLAB_MODULE_DIR=%s holds no %s", env, NN_GPU_MODULE_FILE);
    else
        say(gpu_why, sizeof gpu_why, "this build of nnlab has no GPU backend (configured "
                 "without CUDA)");
#endif
}

const nn_backend_ops *nn_backend_find_why(const char *name, char *why, size_t why_len)
{
    if (why && why_len)
        why[0] = '\0';
    if (!name) {
        if (why && why_len)
            say(why, why_len, "no device named");
        return NULL;
    }
    for (const nn_backend_ops *const *p = nn_builtin_backends; *p; p++)
        if ((*p)->name && strcmp((*p)->name, name) == 0)
            return *p;
    if (strcmp(name, "gpu") == 0) {
        pthread_once(&gpu_once, load_gpu_module);
        if (!gpu_ops && why && why_len)
            say(why, why_len, "%s", gpu_why);
        return gpu_ops;
    }
    if (why && why_len)
        say(why, why_len, "unknown device '%s' (expected cpu, cpu-ref or gpu)", name);
    return NULL;
}

int nn_backend_emulated(const nn_backend_ops *ops)
{
    return ops && ops == gpu_ops && gpu_emulated;
}

const nn_backend_ops *nn_backend_find(const char *name)
{
    return nn_backend_find_why(name, NULL, 0);
}

int nn_backend_fail(nn_backend *b, const char *fmt, ...)
{
    /* The arguments must not point into b->last_error itself (vsnprintf's
     * source and destination may not overlap). */
    if (b) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(b->last_error, sizeof b->last_error, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int nn_backend_open(nn_backend *b, const nn_backend_ops *ops, const nn_backend_config *cfg)
{
    static const nn_backend_config defaults = { .threads = 0 };
    char why[NN_BACKEND_ERROR_LEN];

    b->ops = NULL;
    b->impl = NULL;
    b->last_error[0] = '\0';
    b->host_threads = 1;
    if (!ops)
        return nn_backend_fail(b, "no backend given");
    if (!cfg)
        cfg = &defaults;

    /* Probe first, so that "GPU unavailable: no NVIDIA driver" reaches the
     * UI without a half-opened backend to clean up. A table without a probe
     * is always available. */
    if (ops->probe) {
        why[0] = '\0';
        if (ops->probe(why, sizeof why) != 0)
            return nn_backend_fail(b, "%s: %s", ops->name ? ops->name : "backend",
                                   why[0] ? why : "not available here");
    }

    b->ops = ops;
    if (ops->open && ops->open(b, cfg) != 0) {
        b->ops = NULL;
        b->impl = NULL;
        if (b->last_error[0] == '\0')
            nn_backend_fail(b, "%s: open failed", ops->name ? ops->name : "backend");
        return -1;
    }
    return 0;
}

void nn_backend_close(nn_backend *b)
{
    if (!b || !b->ops)
        return;
    if (b->ops->close)
        b->ops->close(b);
    b->ops = NULL;
    b->impl = NULL;
}
