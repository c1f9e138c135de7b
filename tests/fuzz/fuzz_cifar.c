/* tests/fuzz/fuzz_cifar.c - libFuzzer harness for the CIFAR-10 reader
 * (nn_data_load_cifar10_dir). An input is
 *     selector (1 byte) | the bytes of a batch file
 * Selector 0 (mod 7) gives those bytes to all six files, so that whole
 * records are read and converted; 1..6 give them to that one file, beside
 * valid one-record files, so that the size rules meet. Loading must succeed
 * with every value in range, or fail with one line naming the folder or a
 * file; never crash or leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "fuzz_files.h"
#include "util.h"

#define RECORD 3073

static const char *const names[6] = {
    "data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
    "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin",
};

static void check_loaded(const nn_dataset *ds)
{
    if (ds->n_train != 5 * ds->n_val || ds->n_val < 1 || ds->sample_floats != RECORD - 1)
        abort();
    for (long i = 0; i < ds->n_train; i++) {
        if (ds->train_y[i] < 0 || ds->train_y[i] > 9)
            abort();
        for (size_t j = 0; j < ds->sample_floats; j++) {
            float v = ds->train_x[(size_t)i * ds->sample_floats + j];
            if (!(v >= -1.0f && v <= 1.0f))
                abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned char valid[RECORD];       /* label 0, black pixels */
    char err[NN_ERR_LEN] = "", path[512];
    nn_dataset ds;
    if (size < 1)
        return 0;
    int which = data[0] % 7;
    for (int f = 0; f < 6; f++) {
        int fuzzed = which == 0 || which == f + 1;
        fuzz_write(names[f], fuzzed ? data + 1 : valid, fuzzed ? size - 1 : sizeof valid,
                   path, sizeof path);
    }
    if (nn_data_load_cifar10_dir(fuzz_dir(), &ds, err, sizeof err) == 0) {
        check_loaded(&ds);
        nn_data_free(&ds);
    } else if (strncmp(err, fuzz_dir(), strlen(fuzz_dir())) != 0 || strchr(err, '\n')) {
        fprintf(stderr, "fuzz_cifar: a message that names no file in one line: \"%s\"\n", err);
        abort();
    }
    return 0;
}
