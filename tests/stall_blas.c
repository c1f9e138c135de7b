/* tests/stall_blas.c - libraries that stall, for tests/cli.sh (LD_PRELOAD).
 *
 * A cblas_sgemm that never returns: a job's thread stuck inside a library,
 * as OpenBLAS's blas_memory_alloc retrying a buffer forever under ulimit -v
 * left it. The job's thread blocks every signal, so nothing wakes it; only
 * the front end's grace after a stop signal ends the process.
 *
 * And zlib's inflate, slowed by STALL_INFLATE_MS a call when that is set
 * (else as it is): a gzip data set that takes seconds to load, so that a
 * stop signal lands while it loads, whatever the machine's speed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

void cblas_sgemm(void);

void cblas_sgemm(void)
{
    for (;;)
        sleep(1000);
}

int inflate(z_streamp strm, int flush)
{
    static int (*real)(z_streamp, int);
    const char *ms = getenv("STALL_INFLATE_MS");
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "inflate");
    if (!real)
        abort();
    if (ms) {
        long n = strtol(ms, NULL, 10);
        struct timespec ts = { n / 1000, (n % 1000) * 1000000L };
        nanosleep(&ts, NULL);
    }
    return real(strm, flush);
}
