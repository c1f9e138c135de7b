/* src/analysis/model/profile_find.h - what profile.c (reading one) gives
 * profile_find.c (finding and listing them), which calls it and not the
 * other way. Private to src/analysis. */
#ifndef NNLAB_PROFILE_FIND_H
#define NNLAB_PROFILE_FIND_H

#include <stddef.h>

/* A profile's id from its file: "t4" from ".../t4.ini" (profile.c). */
void nn_profile_id_of_path(const char *path, char *out, size_t len);

#endif
