/* src/analysis/model/profile_fields.h - the figures of a GPU profile as a table,
 * which the reader (profile.c) and the writer (profile_write.c) both walk,
 * so a figure added here is read, checked and written. Private to
 * src/analysis. */
#ifndef NNLAB_PROFILE_FIELDS_H
#define NNLAB_PROFILE_FIELDS_H

#include <stddef.h>

typedef struct nn_profile_field {
    const char *section, *key;
    size_t off;                  /* a double in nn_gpu_profile */
    double lo, hi;               /* the allowed range, closed */
    const char *what;            /* for messages and the writer's comments */
    int optional;                /* a file without it reads if_missing (a figure added */
    double if_missing;           /*   after profiles were saved: they still load) */
} nn_profile_field;

extern const nn_profile_field nn_profile_fields[];
extern const size_t nn_n_profile_fields;

#endif
