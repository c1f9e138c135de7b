/* src/core/preset_schema.h - which keys a preset has: the numeric keys of
 * [data], [train], [optimizer], [gpu] and [lab] with their ranges and the condition under
 * which each applies, the text keys and the fixed sections. The one-line
 * message every rule reports through (nn_key_error) is preset_values.h's;
 * the keys of [layerN] are the layer table's (layer_kind.h). Private to
 * src/core. */
#ifndef NNLAB_PRESET_SCHEMA_H
#define NNLAB_PRESET_SCHEMA_H

#include <stddef.h>

#include "preset_values.h"

/* A numeric key of a fixed section. The reader, the checker and
 * the writer all walk nn_scalar_keys (in the order the writer writes them), so
 * a key added there is read, checked and saved. */
typedef struct nn_scalar_key {
    const char *section, *key;
    enum nn_vtype type;
    size_t off;                          /* into nn_preset */
    nn_range r;
    int (*applies)(const nn_preset *);   /* NULL: always */
    const char *only;                    /* "set = random": the condition, for messages */
    /* The condition written from a table instead ("kind = jacobian": the
     * [task] kinds that take the key, preset_task.c); NULL: only. */
    void (*only_of)(char *buf, size_t len);
} nn_scalar_key;

extern const nn_scalar_key nn_scalar_keys[];
extern const size_t nn_n_scalar_keys;

/* 1 when key k is meant for p's data set and optimiser. */
int nn_scalar_applies(const nn_scalar_key *k, const nn_preset *p);
/* The condition under which k applies, for messages ("set = random"): k's
 * own text, or written in buf (NN_ERR_LEN is room enough). */
const char *nn_scalar_only(const nn_scalar_key *k, char *buf, size_t len);
const nn_scalar_key *nn_find_scalar_key(const char *section, const char *key);

/* Text keys (name, description, set, dir, loss, device, compare, type): read and
 * written by hand because each one is special. */
int nn_is_text_key(const char *section, const char *key);
/* "name, description" etc.: every key of a fixed section, for messages. */
void nn_section_key_list(const char *section, char *buf, size_t len);
/* [preset], [data], [train], [optimizer], [gpu], [lab] */
int nn_is_static_section(const char *section);

/* The graph's rules (preset_graph.c), for [layerN] at 0-based i: its inputs
 * name earlier layers (no cycles) or the data, and fill its in_shape (and
 * in2_shape); its weights come from an earlier layer of the same kind and
 * shapes; every layer reaches the output (the last layer). */
int nn_graph_check_inputs(const nn_checker *c, nn_preset *p, int i);
int nn_graph_check_weights(const nn_checker *c, const nn_preset *p, int i);
int nn_graph_check_used(const nn_checker *c, const nn_preset *p);

#endif
