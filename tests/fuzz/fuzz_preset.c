/* tests/fuzz/fuzz_preset.c - libFuzzer harness for the preset loader
 * (nn_preset_load: the file checks, the duplicate scan, iniparser, the
 * value rules, shape inference through the layer table). Any bytes must
 * load, or fail with one line that starts with the file's path; nothing may
 * crash, leak, or read or write out of bounds. Short inputs also go to
 * nn_preset_set_value, the rule every number of the CLI passes through. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_files.h"
#include "nnlab/preset.h"
#include "util.h"

static void check_message(const char *err, const char *where)
{
    if (strncmp(err, where, strlen(where)) != 0 || strchr(err, '\n') || !err[strlen(where)]) {
        fprintf(stderr, "fuzz_preset: a message that does not name %s in one line: \"%s\"\n",
                where, err);
        abort();
    }
}

static void set_values(nn_preset *p, const uint8_t *data, size_t size)
{
    static const char *const keys[][2] = {
        { "train", "batch" }, { "train", "epochs" }, { "train", "log_every" },
        { "optimizer", "lr" }, { "optimizer", "nesterov" }, { "data", "rows" },
    };
    char text[64], why[NN_ERR_LEN];
    memcpy(text, data, size);
    text[size] = '\0';
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (nn_preset_set_value(p, keys[k][0], keys[k][1], text, why, sizeof why) != 0
            && (!why[0] || strchr(why, '\n')))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static nn_preset p;              /* 6 KB: not on the stack of every call */
    char path[512], err[NN_ERR_LEN] = "";
    fuzz_write("fuzz.ini", data, size, path, sizeof path);
    if (nn_preset_load(path, &p, err, sizeof err) != 0)
        check_message(err, path);
    else if (nn_preset_check(&p, path, err, sizeof err) != 0)   /* what loaded is valid */
        abort();
    if (size < 64)
        set_values(&p, data, size);
    return 0;
}
