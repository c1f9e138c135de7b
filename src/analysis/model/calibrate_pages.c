/* src/analysis/model/calibrate_pages.c - what memory mapped fresh costs: a
 * page's first touch after mmap (the fault, the kernel zeroing the page).
 *
 * nnlab's own step keeps its buffers from step to step and never pays it.
 * PyTorch's pays it for every block glibc's malloc maps afresh
 * (nn_framework_fresh_bytes): 37% of its one-thread LeNet step at batch
 * 1024 on the 2-core Zen 5 (bench/results/torch-cpu-faults-2026-11-29.md).
 * The block timed here is mapped the way glibc maps those (anonymous,
 * private, no advice), so a kernel that backs such mappings with huge
 * pages does so for both. */
#define _DEFAULT_SOURCE 1            /* MAP_ANONYMOUS */
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "calibrate_internal.h"
#include "cpu/cpu_info.h"

#define FRESH_BYTES (64u << 20)      /* above glibc's largest mmap threshold (32 MiB), as the
                                        blocks priced with it are */
#define FRESH_REPS 5

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Seconds to map FRESH_BYTES, write one byte of each page and unmap them;
 * -1 when the mapping or the unmapping fails. */
static double one_block_s(size_t page)
{
    double t0 = now_s();
    volatile char *p = mmap(NULL, FRESH_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if ((void *)p == MAP_FAILED)
        return -1;
    for (size_t off = 0; off < FRESH_BYTES; off += page)
        p[off] = 1;
    if (munmap((void *)p, FRESH_BYTES) != 0)
        return -1;
    return now_s() - t0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int nn_cal_fresh_pages(nn_calibration *out)
{
    nn_cpu_info ci;
    double s[FRESH_REPS];
    long page = sysconf(_SC_PAGESIZE);
    nn_cpu_info_read(&ci);
    out->vector_floats = (ci.features & NN_CPU_AVX512F) ? 16 : (ci.features & NN_CPU_AVX2) ? 8 : 4;
    out->fresh_page_us = 0;
    for (int r = 0; r < FRESH_REPS; r++)
        if ((s[r] = one_block_s(page > 0 ? (size_t)page : 4096)) < 0)
            return -1;
    qsort(s, FRESH_REPS, sizeof s[0], by_value);
    out->fresh_page_us = s[FRESH_REPS / 2] / (FRESH_BYTES / 4096.0) * 1e6;
    return 0;
}
