/* tests/fuzz/fuzz_preset_big.c - libFuzzer harness for large preset files.
 * fuzz_preset's inputs stay under a few kilobytes, so it never met a file of
 * 115,000 sections, which took 107 s to load. Here a small input is a recipe
 * that expands to a file of up to just over NN_PRESET_MAX_BYTES:
 *
 *   byte 0      bit 0: start with a valid preset's sections ([data] ...)
 *   bytes 1-2   repeats R (little-endian) times 16: up to about a million
 *   the rest    a line template, written R times; each byte 0x01 in it
 *               becomes the repeat's number (so "[s\x01]\n" gives [s1],
 *               [s2], ... and "k\x01 = 1\n" distinct keys)
 *
 * Every load must finish within NNLAB_FUZZ_LOAD_S seconds of CPU time
 * (default 2: the bound is 0.5 s without sanitizers) or the harness aborts, so a
 * quadratic path is a fault like a crash; and, as in fuzz_preset, fail with
 * one line naming the file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz_files.h"
#include "nnlab/preset.h"
#include "util.h"

#define MAX_OUT ((1L << 20) + 64)         /* both sides of the size limit */

static const char valid_head[] =
    "[data]\nset = random\n[train]\nloss = mse\n[optimizer]\ntype = adam\n"
    "[layer1]\ntype = linear\nout = 1\n";

/* The process's CPU time, not the wall clock: the bound is on the loader's
 * work, and a machine busy with other programs (make -j2 check runs tests
 * side by side) stretched a 1 MB load to 3.1 s of wall time at load 7. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The recipe's file into out (MAX_OUT bytes); returns its length. */
static size_t expand(const uint8_t *data, size_t size, char *out)
{
    size_t used = 0;
    if (data[0] & 1) {
        memcpy(out, valid_head, sizeof valid_head - 1);
        used = sizeof valid_head - 1;
    }
    unsigned long repeats = 16ul * (data[1] | (unsigned long)data[2] << 8);
    const uint8_t *tpl = data + 3;
    size_t tpl_len = size - 3;
    for (unsigned long r = 1; r <= repeats && tpl_len > 0; r++)
        for (size_t i = 0; i < tpl_len; i++) {
            char num[24];
            int n = tpl[i] == 1 ? snprintf(num, sizeof num, "%lu", r) : 1;
            if (used + (size_t)n > (size_t)MAX_OUT)
                return used;
            if (tpl[i] == 1)
                memcpy(out + used, num, (size_t)n);
            else
                out[used] = (char)tpl[i];
            used += (size_t)n;
        }
    return used;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static nn_preset p;
    static char *text;
    char path[512], err[NN_ERR_LEN] = "";
    const char *limit_env = getenv("NNLAB_FUZZ_LOAD_S");
    double limit = limit_env ? atof(limit_env) : 2.0;
    if (size < 4 || size > 256)
        return 0;
    if (!text && !(text = malloc(MAX_OUT)))
        abort();
    size_t len = expand(data, size, text);
    fuzz_write("big.ini", text, len, path, sizeof path);
    double t0 = cpu_s();
    int rc = nn_preset_load(path, &p, err, sizeof err);
    double took = cpu_s() - t0;
    if (took > limit) {
        fprintf(stderr, "fuzz_preset_big: a %zu-byte file took %.2f s of CPU time to load (limit %.2f): %s\n",
                len, took, limit, rc ? err : "loaded");
        abort();
    }
    if (rc != 0 && (strncmp(err, path, strlen(path)) != 0 || strchr(err, '\n'))) {
        fprintf(stderr, "fuzz_preset_big: a message that does not name %s in one line: \"%s\"\n",
                path, err);
        abort();
    }
    return 0;
}
