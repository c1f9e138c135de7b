/* src/core/layers/infer.c - what the kinds' shape inference shares: the
 * messages ("my.ini: [layer3] in = 500: the previous layer gives 400") and
 * the rank, `in` and size checks. */
#include "layer_kind.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>

int nn_layer_error(const nn_checker *c, int i, const nn_layer_spec *l, const char *key,
                   const char *fmt, ...)
{
    char section[24], value[64], why[NN_ERR_LEN];
    const nn_layer_key_def *k = nn_find_layer_key(key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (k)
        nn_value_format(k->type, (const char *)l + k->off, value, sizeof value);
    else
        nn_strlcpy(value, nn_layer_kind_name(l->kind), sizeof value);
    snprintf(section, sizeof section, "layer%d", i + 1);
    return nn_key_error(c, section, key, value, "%s", why);
}

/* The source the checker resolved for the layer it is inferring (set by
 * nn_layer_set_from): per thread, as checks may run on several. */
static _Thread_local struct { int layer, source; char text[32]; } from_of = { -1, -1, "" };

void nn_layer_set_from(int i, int source)
{
    from_of.layer = i;
    from_of.source = source;
}

const char *nn_layer_from(int i)
{
    if (from_of.layer == i && from_of.source != i - 1) {
        if (from_of.source < 0)
            return "the data gives";
        snprintf(from_of.text, sizeof from_of.text, "layer%d gives", from_of.source + 1);
        return from_of.text;
    }
    return i == 0 ? "the data gives" : "the previous layer gives";
}

static const char *rank_name(int rank)
{
    return rank == 3 ? "(C,H,W)" : rank == 2 ? "(C,L)" : "flat";
}

int nn_layer_need_rank(const nn_checker *c, int i, const nn_layer_spec *l, nn_shape in, int rank)
{
    char s[64];
    if (in.rank == rank)
        return 0;
    nn_shape_format(&in, s, sizeof s);
    if (rank == 1)
        return nn_layer_error(c, i, l, "type", "needs a flat input but %s %s: add a [flatten] layer before it",
                              nn_layer_from(i), s);
    if (in.rank == 1 && rank == 2)
        return nn_layer_error(c, i, l, "type", "needs a %s input but %s %s: add a [reshape] layer before it (e.g. shape = 1x%d)",
                              rank_name(rank), nn_layer_from(i), s, in.dim[0]);
    return nn_layer_error(c, i, l, "type", "needs a %s input but %s %s: add a [reshape] layer before it",
                          rank_name(rank), nn_layer_from(i), s);
}

int nn_layer_check_in(const nn_checker *c, int i, nn_layer_spec *l, nn_shape in)
{
    char s[64];
    if (l->in == 0)
        l->in = in.dim[0];
    if (l->in == in.dim[0])
        return 0;
    if (in.rank == 1)
        return nn_layer_error(c, i, l, "in", "%s %d", nn_layer_from(i), in.dim[0]);
    nn_shape_format(&in, s, sizeof s);
    return nn_layer_error(c, i, l, "in", "%s %d channels (%s)", nn_layer_from(i), in.dim[0], s);
}

int nn_layer_out_shape(const nn_checker *c, int i, const nn_layer_spec *l, int rank,
                       const long *d, nn_shape *out)
{
    if (nn_shape_make(out, rank, d) == 0)
        return 0;
    return nn_layer_error(c, i, l, "type", "gives more than %ld values per sample", NN_MAX_VALUES);
}

int nn_layer_same_shape(const nn_checker *c, int i, nn_layer_spec *l, nn_shape in, nn_shape *out)
{
    (void)c;
    (void)i;
    (void)l;
    *out = in;
    return 0;
}
