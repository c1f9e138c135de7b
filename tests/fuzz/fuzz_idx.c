/* tests/fuzz/fuzz_idx.c - libFuzzer harness for the MNIST-format IDX reader
 * (nn_data_load_idx_dir). An input is
 *     flags (1 byte) | images length L (2 bytes, little-endian) | L bytes of
 *     train-images | the rest: train-labels
 * where flag bit 0 gzips the images and bit 1 the labels (the harness
 * compresses them, so the fuzzer reaches the reader behind zlib; raw bytes
 * under a .gz name reach zlib's own checks). The t10k split is a valid
 * one-image set. Loading must succeed with every value in range, or fail
 * with one line naming the folder or a file; never crash or leak, and never
 * take memory for what a header claims but the file lacks (run with
 * -malloc_limit_mb). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "fuzz_files.h"
#include "util.h"

#define PIXELS (28 * 28)

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

/* t10k: one image of 28 x 28 and its label, once per process */
static void write_t10k(void)
{
    static int done;
    unsigned char images[16 + PIXELS] = { 0 }, labels[9] = { 0 };
    char path[512];
    if (done)
        return;
    put_be32(images, 0x803), put_be32(images + 4, 1), put_be32(images + 8, 28),
        put_be32(images + 12, 28);
    put_be32(labels, 0x801), put_be32(labels + 4, 1), labels[8] = 7;
    fuzz_write("t10k-images-idx3-ubyte", images, sizeof images, path, sizeof path);
    fuzz_write("t10k-labels-idx1-ubyte", labels, sizeof labels, path, sizeof path);
    done = 1;
}

/* The one spelling of a train file this input uses: plain or .gz. */
static void write_train(const char *stem, const uint8_t *data, size_t n, int gz)
{
    char name[64], path[512];
    size_t zn;
    snprintf(name, sizeof name, "%s.gz", stem);
    fuzz_remove(name);
    fuzz_remove(stem);
    if (!gz) {
        fuzz_write(stem, data, n, path, sizeof path);
        return;
    }
    unsigned char *z = fuzz_gzip(data, n, &zn);
    fuzz_write(name, z, zn, path, sizeof path);
    free(z);
}

static void check_loaded(const nn_dataset *ds)
{
    if (ds->n_train < 1 || ds->n_val != 1 || ds->sample_floats != PIXELS)
        abort();
    for (long i = 0; i < ds->n_train; i++) {
        if (ds->train_y[i] < 0 || ds->train_y[i] > 9)
            abort();
        for (int j = 0; j < PIXELS; j++) {
            float v = ds->train_x[(size_t)i * PIXELS + (size_t)j];
            if (!(v >= 0.0f && v <= 1.0f))
                abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[NN_ERR_LEN] = "";
    nn_dataset ds;
    if (size < 3)
        return 0;
    int flags = data[0];
    size_t images = (size_t)data[1] | (size_t)data[2] << 8;
    data += 3, size -= 3;
    if (images > size)
        images = size;
    write_t10k();
    write_train("train-images-idx3-ubyte", data, images, flags & 1);
    write_train("train-labels-idx1-ubyte", data + images, size - images, flags & 2);
    if (nn_data_load_idx_dir(fuzz_dir(), &ds, err, sizeof err) == 0) {
        check_loaded(&ds);
        nn_data_free(&ds);
    } else if (strncmp(err, fuzz_dir(), strlen(fuzz_dir())) != 0 || strchr(err, '\n')) {
        fprintf(stderr, "fuzz_idx: a message that names no file in one line: \"%s\"\n", err);
        abort();
    }
    return 0;
}
