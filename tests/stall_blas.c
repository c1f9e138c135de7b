/* tests/stall_blas.c - a cblas_sgemm that never returns, for tests/cli.sh
 * (LD_PRELOAD): a job's thread stuck inside a library, as OpenBLAS's
 * blas_memory_alloc retrying a buffer forever under ulimit -v left it. The
 * job's thread blocks every signal, so nothing wakes it; only the front
 * end's grace after a stop signal ends the process. */
#include <unistd.h>

void cblas_sgemm(void);

void cblas_sgemm(void)
{
    for (;;)
        sleep(1000);
}
