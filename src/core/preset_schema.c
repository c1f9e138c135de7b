/* src/core/preset_schema.c - the keys of a preset and the checker: every
 * value in range, the texts storable, the layers' shapes inferred through the
 * layer table, and the loss matching the last layer. Used on every load and
 * on a preset built in memory (the lab's save). */
#include "preset_schema.h"
#include "layer_kind.h"
#include "util.h"
#include "nnlab/jacobian.h"
#include "preset_task.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- keys */

static int is_random(const nn_preset *p) { return p->data == NN_DATA_RANDOM; }
static int is_sgd(const nn_preset *p) { return p->opt == NN_OPT_SGD; }
static int is_adam(const nn_preset *p) { return p->opt == NN_OPT_ADAM; }
static int takes_val(const nn_preset *p)
{
    const nn_task_def *t = nn_task_def_of(p->task);
    return t && t->takes_val;
}

#define PF(f) offsetof(nn_preset, f)
const nn_scalar_key nn_scalar_keys[] = {
    { "data", "rows", NN_V_LONG, PF(rows), NN_CLOSED(1, NN_MAX_ROWS), is_random, "set = random", NULL },
    { "data", "val_rows", NN_V_LONG, PF(val_rows), NN_CLOSED(0, NN_MAX_ROWS), is_random, "set = random", NULL },
    { "data", "features", NN_V_INT, PF(features), NN_CLOSED(1, NN_MAX_DIM), is_random, "set = random", NULL },
    { "data", "targets", NN_V_INT, PF(targets), NN_CLOSED(1, NN_MAX_DIM), is_random, "set = random", NULL },
    { "preset", "measured_cpu_s", NN_V_FLOAT, PF(measured_cpu_s), NN_AT_LEAST(0), NULL, NULL, NULL },
    { "preset", "measured_cpu_max_s", NN_V_FLOAT, PF(measured_cpu_max_s), NN_AT_LEAST(0), NULL, NULL, NULL },
    { "preset", "measured_gpu_s", NN_V_FLOAT, PF(measured_gpu_s), NN_AT_LEAST(0), NULL, NULL, NULL },
    { "preset", "measured_gpu_max_s", NN_V_FLOAT, PF(measured_gpu_max_s), NN_AT_LEAST(0), NULL, NULL, NULL },
    { "preset", "measured_batch", NN_V_INT, PF(measured_batch), NN_CLOSED(0, NN_MAX_DIM), NULL, NULL, NULL },
    { "preset", "measured_epochs", NN_V_INT, PF(measured_epochs), NN_CLOSED(0, 100000), NULL, NULL, NULL },
    { "train", "batch", NN_V_INT, PF(batch), NN_CLOSED(1, NN_MAX_DIM), NULL, NULL, NULL },
    { "train", "epochs", NN_V_INT, PF(epochs), NN_CLOSED(1, 100000), NULL, NULL, NULL },
    { "train", "log_every", NN_V_LONG, PF(log_every), NN_AT_LEAST(1), NULL, NULL, NULL },
    { "train", "deterministic", NN_V_BOOL, PF(deterministic), NN_CLOSED(0, 1), NULL, NULL, NULL },
    { "train", "overlap", NN_V_BOOL, PF(overlap), NN_CLOSED(0, 1), NULL, NULL, NULL },
    { "optimizer", "lr", NN_V_FLOAT, PF(lr), NN_ABOVE(0), NULL, NULL, NULL },
    { "optimizer", "momentum", NN_V_FLOAT, PF(momentum), NN_CLOSED(0, 1), is_sgd, "type = sgd", NULL },
    { "optimizer", "dampening", NN_V_FLOAT, PF(dampening), NN_CLOSED(0, 1), is_sgd, "type = sgd", NULL },
    { "optimizer", "nesterov", NN_V_BOOL, PF(nesterov), NN_CLOSED(0, 1), is_sgd, "type = sgd", NULL },
    { "optimizer", "beta1", NN_V_FLOAT, PF(beta1), NN_UNIT_HALF_OPEN, is_adam, "type = adam", NULL },
    { "optimizer", "beta2", NN_V_FLOAT, PF(beta2), NN_UNIT_HALF_OPEN, is_adam, "type = adam", NULL },
    { "optimizer", "eps", NN_V_FLOAT, PF(eps), NN_ABOVE(0), is_adam, "type = adam", NULL },
    { "optimizer", "weight_decay", NN_V_FLOAT, PF(weight_decay), NN_AT_LEAST(0), NULL, NULL, NULL },
    { "gpu", "data_on_device", NN_V_BOOL, PF(data_on_device), NN_CLOSED(0, 1), NULL, NULL, NULL },
    { "gpu", "pinned", NN_V_BOOL, PF(pinned), NN_CLOSED(0, 1), NULL, NULL, NULL },
    { "gpu", "sync_every_step", NN_V_BOOL, PF(sync_every_step), NN_CLOSED(0, 1), NULL, NULL, NULL },
    { "gpu", "graph", NN_V_BOOL, PF(graph), NN_CLOSED(0, 1), NULL, NULL, NULL },
    { "gpu", "tf32", NN_V_BOOL, PF(tf32), NN_CLOSED(0, 1), NULL, NULL, NULL },
    { "lab", "race", NN_V_BOOL, PF(race), NN_CLOSED(0, 1), NULL, NULL, NULL },
    { "lab", "sweep_from", NN_V_INT, PF(sweep_from), NN_CLOSED(1, NN_MAX_DIM), NULL, NULL, NULL },
    { "lab", "sweep_to", NN_V_INT, PF(sweep_to), NN_CLOSED(1, NN_MAX_DIM), NULL, NULL, NULL },
    { "lab", "sweep_steps", NN_V_LONG, PF(sweep_steps), NN_CLOSED(1, 100000), NULL, NULL, NULL },
    { "lab", "sweep_cpu_ref", NN_V_BOOL, PF(sweep_cpu_ref), NN_CLOSED(0, 1), NULL, NULL, NULL },
    { "task", "val", NN_V_INT, PF(task_val), NN_CLOSED(1, NN_JAC_MAX_VAL), takes_val, NULL, nn_task_val_kinds },
};
const size_t nn_n_scalar_keys = NN_COUNT(nn_scalar_keys);

static const struct { const char *section, *key; } text_keys[] = {
    { "preset", "name" }, { "preset", "description" }, { "preset", "measured_note" },
    { "data", "set" }, { "data", "dir" },
    { "train", "loss" }, { "train", "device" }, { "train", "compare" },
    { "optimizer", "type" },
    { "task", "kind" }, { "task", "method" },
};

static const char *const static_sections[] = { "preset", "data", "train", "optimizer", "gpu", "lab",
                                                "task" };

int nn_scalar_applies(const nn_scalar_key *k, const nn_preset *p)
{
    return !k->applies || k->applies(p);
}

const char *nn_scalar_only(const nn_scalar_key *k, char *buf, size_t len)
{
    if (k->only_of) {
        k->only_of(buf, len);
        return buf;
    }
    return k->only ? k->only : "";
}

const nn_scalar_key *nn_find_scalar_key(const char *section, const char *key)
{
    for (size_t i = 0; i < NN_COUNT(nn_scalar_keys); i++)
        if (!strcmp(nn_scalar_keys[i].section, section) && !strcmp(nn_scalar_keys[i].key, key))
            return &nn_scalar_keys[i];
    return NULL;
}

int nn_preset_set_value(nn_preset *p, const char *section, const char *key, const char *text,
                        char *why, size_t why_len)
{
    const nn_scalar_key *k = nn_find_scalar_key(section, key);
    char range[64];
    size_t n;
    if (!k)
        return nn_errorf(why, why_len, "[%s] %s is not a numeric key of a preset", section, key);
    if (nn_value_parse(k->type, text, k->r, (char *)p + k->off, why, why_len) == 0)
        return 0;
    /* "not a whole number" and the like say what is wrong, not what is right */
    nn_range_format(k->r, k->type != NN_V_FLOAT, range, sizeof range);
    n = strlen(why);
    if (k->type != NN_V_BOOL && !strstr(why, range) && n < why_len)
        snprintf(why + n, why_len - n, " (allowed: %s)", range);
    return -1;
}

int nn_is_text_key(const char *section, const char *key)
{
    for (size_t i = 0; i < NN_COUNT(text_keys); i++)
        if (!strcmp(text_keys[i].section, section) && !strcmp(text_keys[i].key, key))
            return 1;
    return 0;
}

void nn_section_key_list(const char *section, char *buf, size_t len)
{
    const char *names[NN_COUNT(text_keys) + NN_COUNT(nn_scalar_keys)];
    int n = 0;
    for (size_t i = 0; i < NN_COUNT(text_keys); i++)
        if (!strcmp(text_keys[i].section, section))
            names[n++] = text_keys[i].key;
    for (size_t i = 0; i < NN_COUNT(nn_scalar_keys); i++)
        if (!strcmp(nn_scalar_keys[i].section, section))
            names[n++] = nn_scalar_keys[i].key;
    nn_join_names(names, n, buf, len);
}

int nn_is_static_section(const char *section)
{
    return nn_find_name(static_sections, NN_COUNT(static_sections), section) >= 0;
}

/* ---------------------------------------------------------------- texts and scalars */

/* A string survives our writer and iniparser: one line, quotable with " or ',
 * short enough for iniparser's line buffer. */
static const char *text_problem(const char *s, size_t max)
{
    if (strlen(s) > max)
        return "too long";
    for (const unsigned char *u = (const unsigned char *)s; *u; u++)
        if (*u < 0x20 || *u == 0x7f)
            return "control characters cannot be stored";
    if (strchr(s, '"') && strchr(s, '\''))
        return "cannot hold both ' and \" (INI has no escapes)";
    return NULL;
}

static int check_text(const nn_checker *c, const char *section, const char *key, const char *s)
{
    const char *why = text_problem(s, NN_MAX_LINE - strlen(key) - 5);
    return why ? nn_key_error(c, section, key, s, "%s", why) : 0;
}

/* An enum field of a preset built in memory holds one of its names. */
static int check_enum(const nn_checker *c, const char *section, const char *key, int v,
                      const char *const *names, int n)
{
    char list[NN_TEXT_LEN], value[16];
    if (v >= 0 && v < n)
        return 0;
    nn_join_names(names, n, list, sizeof list);
    snprintf(value, sizeof value, "%d", v);
    return nn_key_error(c, section, key, value, "expected %s", list);
}

static int check_texts(const nn_checker *c, const nn_preset *p)
{
    if (check_enum(c, "data", "set", (int)p->data, nn_data_names, NN_COUNT(nn_data_names))
        || check_enum(c, "train", "loss", (int)p->loss, nn_loss_names, NN_COUNT(nn_loss_names))
        || check_enum(c, "optimizer", "type", (int)p->opt, nn_opt_names, NN_COUNT(nn_opt_names)))
        return -1;
    if (nn_find_name(nn_device_names, NN_COUNT(nn_device_names), p->device) < 0)
        return nn_key_error(c, "train", "device", p->device, "expected cpu, cpu-ref or gpu");
    if (p->compare[0] && nn_find_name(nn_device_names, NN_COUNT(nn_device_names), p->compare) < 0)
        return nn_key_error(c, "train", "compare", p->compare, "expected cpu, cpu-ref or gpu");
    if (p->compare[0] && strcasecmp(p->compare, p->device) == 0)
        return nn_key_error(c, "train", "compare", p->compare, "the same as device: compare "
                            "runs a second device beside it");
    if (p->name[0] == '\0')
        return nn_key_error(c, "preset", "name", "\"\"", "must not be empty");
    if (check_text(c, "preset", "name", p->name) || check_text(c, "preset", "description", p->description)
        || check_text(c, "preset", "measured_note", p->measured_note)
        || check_text(c, "data", "dir", p->data_dir))
        return -1;
    return 0;
}

static int is_power_of_two(long v)
{
    return v > 0 && (v & (v - 1)) == 0;
}

/* The sweep doubles the batch from sweep_from to sweep_to: both powers of
 * two (the message names the two nearest), in order. */
static int check_sweep(const nn_checker *c, const nn_preset *p)
{
    const char *keys[2] = { "sweep_from", "sweep_to" };
    int v[2] = { p->sweep_from, p->sweep_to };
    char s[16];
    for (int i = 0; i < 2; i++) {
        long below = 1;
        if (is_power_of_two(v[i]))
            continue;
        while (below * 2 < v[i])
            below *= 2;
        snprintf(s, sizeof s, "%d", v[i]);
        return nn_key_error(c, "lab", keys[i], s, "the sweep doubles the batch: a power of two "
                            "(%ld or %ld)", below, below * 2);
    }
    if (v[0] > v[1]) {
        snprintf(s, sizeof s, "%d", v[1]);
        return nn_key_error(c, "lab", "sweep_to", s, "below sweep_from = %d", v[0]);
    }
    return 0;
}

/* A range's high end above its low end, given only with it. */
static int check_measured_range(const nn_checker *c, const char *key, float lo, float hi)
{
    char v[32];
    if (hi == 0 || (lo > 0 && hi > lo))
        return 0;
    snprintf(v, sizeof v, "%g", hi);
    if (lo > 0)
        return nn_key_error(c, "preset", key, v, "not above the range's low end, %g", lo);
    return nn_key_error(c, "preset", key, v, "a range's high end needs its low end (%.14s_s)", key);
}

static int check_measured(const nn_checker *c, const nn_preset *p)
{
    return check_measured_range(c, "measured_cpu_max_s", p->measured_cpu_s, p->measured_cpu_max_s)
        || check_measured_range(c, "measured_gpu_max_s", p->measured_gpu_s, p->measured_gpu_max_s);
}

/* The figures are for the experiment's own job: without measured_batch and
 * measured_epochs that is the preset's own batch and epochs, and it stays so
 * when a copy of the preset is saved with others. */
static void fill_measured_job(nn_preset *p)
{
    if (!nn_preset_has_measured(p))
        return;
    if (p->measured_batch == 0)
        p->measured_batch = p->batch;
    if (p->measured_epochs == 0)
        p->measured_epochs = p->epochs;
}

static int check_scalars(const nn_checker *c, const nn_preset *p)
{
    char why[NN_ERR_LEN], v[64];
    for (size_t i = 0; i < NN_COUNT(nn_scalar_keys); i++) {
        const nn_scalar_key *k = &nn_scalar_keys[i];
        const void *src = (const char *)p + k->off;
        if (!nn_scalar_applies(k, p))
            continue;
        if (nn_value_check(k->type, src, k->r, why, sizeof why) != 0) {
            nn_value_format(k->type, src, v, sizeof v);
            return nn_key_error(c, k->section, k->key, v, "%s", why);
        }
    }
    if (check_sweep(c, p) != 0 || check_measured(c, p) != 0)
        return -1;
    /* PyTorch's rule: Nesterov momentum needs momentum and no dampening */
    if (p->opt == NN_OPT_SGD && p->nesterov && (p->momentum <= 0 || p->dampening != 0))
        return nn_key_error(c, "optimizer", "nesterov", "true", "needs momentum > 0 and dampening = 0");
    return 0;
}

/* ---------------------------------------------------------------- layers */

/* A value still at the zero of a spec built in memory */
static int value_is_zero(enum nn_vtype t, const void *src)
{
    return t == NN_V_FLOAT ? *(const float *)src == 0.0f : *(const int *)src == 0;
}

/* The values of the keys this kind takes (the graph's included); `in` may be
 * 0 (= infer), a key with zero_unset 0 (not given). */
static int check_layer_values(const nn_checker *c, int i, const nn_layer_spec *l)
{
    char why[NN_ERR_LEN];
    unsigned keys = nn_layer_keys_of(l->kind);
    for (int k = 0; k < NN_LAYER_KEY_COUNT; k++) {
        const nn_layer_key_def *lk = &nn_layer_keys[k];
        const void *src = (const char *)l + lk->off;
        /* in 0: inferred; a zero_unset key at 0 (scale, the graph's references,
         * TabNet's keys): not given */
        if (!(keys & NN_KEY(k)) || (k == NN_KEY_IN && l->in == 0) ||
            (lk->zero_unset && value_is_zero(lk->type, src)))
            continue;
        if (nn_value_check(lk->type, src, lk->r, why, sizeof why) != 0)
            return nn_layer_error(c, i, l, lk->key, "%s", why);
    }
    return 0;
}

/* Each layer's values, its inputs, then its shapes from what they give. */
static int check_layers(const nn_checker *c, nn_preset *p)
{
    if (p->n_layers < 1 || p->n_layers > NN_MAX_LAYERS)
        return nn_errorf(c->err, c->err_len, "%s: %d layers: a preset needs 1 to %d ([layer1] ...)",
                         c->where, p->n_layers, NN_MAX_LAYERS);
    for (int i = 0; i < p->n_layers; i++) {
        nn_layer_spec *l = &p->layers[i];
        const nn_layer_def *d = nn_layer_def_of(l->kind);
        if (!d)
            return nn_layer_error(c, i, l, "type", "unknown layer kind %d", (int)l->kind);
        if (check_layer_values(c, i, l) != 0 || nn_graph_check_inputs(c, p, i) != 0)
            return -1;
        nn_layer_set_from(i, nn_layer_source(p->layers, i, 0));
        if (d->infer(c, i, l, l->in_shape, &l->out_shape) != 0 || nn_graph_check_weights(c, p, i) != 0)
            return -1;
    }
    return nn_graph_check_used(c, p);
}

/* cross_entropy needs one logit per class; mse one output per target. */
static int check_loss(const nn_checker *c, const nn_preset *p)
{
    const nn_shape *out = &p->layers[p->n_layers - 1].out_shape;
    const char *loss = nn_loss_names[p->loss], *set = nn_data_names[p->data];
    int classes = nn_preset_classes(p), want = p->loss == NN_LOSS_XENT ? classes : p->targets;
    char s[64];
    if (p->loss == NN_LOSS_XENT && classes == 0)
        return nn_key_error(c, "train", "loss", loss, "set = %s has regression targets: use mse", set);
    if (p->loss == NN_LOSS_MSE && classes != 0)
        return nn_key_error(c, "train", "loss", loss, "set = %s has class labels: use cross_entropy", set);
    if (out->rank == 1 && out->dim[0] == want)
        return 0;
    nn_shape_format(out, s, sizeof s);
    if (p->loss == NN_LOSS_XENT)
        return nn_key_error(c, "train", "loss", loss, "the last layer ([layer%d]) gives %s, but %s has %d classes: end with a linear layer with out = %d",
                            p->n_layers, s, set, classes, classes);
    return nn_key_error(c, "train", "loss", loss, "the last layer ([layer%d]) gives %s, but [data] targets = %d",
                        p->n_layers, s, p->targets);
}

/* The [task]: a kind of preset_task.c's table, a method of its own, and its
 * own check (a Jacobian's: layers the job can differentiate). */
static int check_task(const nn_checker *c, nn_preset *p)
{
    const nn_task_def *t = nn_task_def_of(p->task);
    char names[NN_TEXT_LEN];
    if (!t) {
        nn_task_names(names, sizeof names);
        return nn_errorf(c->err, c->err_len, "%s: [task] kind: expected %s", c->where, names);
    }
    if (t->n_methods > 0 && (p->task_method < 0 || p->task_method >= t->n_methods))
        return nn_errorf(c->err, c->err_len, "%s: [task] method: expected %s", c->where,
                         (nn_task_method_list(t, names, sizeof names), names));
    return t->check ? t->check(p, c->where, c->err, c->err_len) : 0;
}

int nn_preset_check(nn_preset *p, const char *where, char *err, size_t err_len)
{
    nn_checker c = { where ? where : "preset", err, err_len };
    fill_measured_job(p);
    if (check_texts(&c, p) || check_scalars(&c, p) || check_layers(&c, p) || check_loss(&c, p) ||
        check_task(&c, p))
        return -1;
    return 0;
}
