/* src/cli/cli_torch.c - nnlab bench --with-pytorch; see cli_torch.h. The
 * runner does the work (src/jobs/torch_step.c); this says what it does and
 * prints what it gives. */
#include "config.h"

#include "cli_torch.h"
#include "nnlab/device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_stop.h"
#include "nnlab/preset.h"
#include "util.h"

static int stop_asked(void *ctx)
{
    (void)ctx;
    return cli_stop_signal() != 0;
}

/* A status as the command's exit status (cli_torch.h). */
static int exit_status(enum nn_torch_status s)
{
    switch (s) {
    case NN_TORCH_OK:
        return 0;
    case NN_TORCH_NO_PYTHON:
    case NN_TORCH_NO_TORCH:
    case NN_TORCH_NO_HELPER:
    case NN_TORCH_NO_DEVICE:
    case NN_TORCH_PRESET:
        return CLI_EXIT_USAGE;
    case NN_TORCH_CANCELLED:
        return CLI_EXIT_SIGNAL + (cli_stop_signal() ? cli_stop_signal() : 2);
    case NN_TORCH_MISMATCH:
    case NN_TORCH_FAILED:
    case NN_TORCH_TIMEOUT:
        break;
    }
    return EXIT_FAILURE;
}

/* The request of the bench: the same file, device, batch, steps and threads. */
static int make_request(const cli_options *o, const nn_job_config *cfg, char *path, size_t len,
                        nn_torch_request *req)
{
    char err[NN_ERR_LEN];
    if (nn_preset_find(o->preset, path, len, err, sizeof err) != 0) {
        fprintf(stderr, "nnlab: %s\n", nn_safe(err));
        return -1;
    }
    *req = (nn_torch_request){
        .preset_path = path,
        .device = cfg->device[0] ? cfg->device : cfg->preset.device,
        .batch = cfg->batch > 0 ? cfg->batch : cfg->preset.batch,
        .steps = o->steps, .warmup = o->warmup, .threads = cfg->threads,
        .cancelled = stop_asked,
    };
    return 0;
}

/* On a GPU whose nnlab job replays a CUDA graph: PyTorch's own graph way
 * too, its strongest peer. A capture PyTorch refuses is said, not fatal. */
static void measure_graph(const cli_options *o, const nn_job_config *cfg, nn_torch_request *req,
                          cli_torch *t)
{
    if (!nn_device_kind_of(req->device).gpu || !cfg->graph)
        return;
    req->way = "graph";
    if (!o->quiet)
        fprintf(stderr, "%s: %s's step captured as one CUDA graph, batch %d\n", nn_safe(cfg->preset.name),
                nn_safe(t->r.python.label), req->batch);
    if (nn_torch_step(req, &t->graph, t->graph_why, sizeof t->graph_why) == NN_TORCH_OK)
        t->graph_done = 1;
    else
        fprintf(stderr, "nnlab: --with-pytorch: PyTorch's CUDA graph: %s\n", t->graph_why);
}

int cli_torch_measure(const cli_options *o, const nn_job_config *cfg, cli_torch *t)
{
    char path[NN_PATH_LEN], err[NN_ERR_LEN];
    nn_torch_request req;
    nn_torch_python py;
    enum nn_torch_status s;
    memset(t, 0, sizeof *t);
    if (make_request(o, cfg, path, sizeof path, &req) != 0)
        return CLI_EXIT_USAGE;
    cli_catch_stop_signals();
    s = nn_torch_find(&py, err, sizeof err);
    if (s == NN_TORCH_OK) {
        if (!o->quiet)
            fprintf(stderr, "%s: %s's step (%s), batch %d on %s, %ld steps after %ld\n",
                    nn_safe(cfg->preset.name), nn_safe(py.label), nn_safe(py.path), req.batch,
                    req.device, req.steps, req.warmup);
        s = nn_torch_step(&req, &t->r, err, sizeof err);
    }
    if (s != NN_TORCH_OK) {
        fprintf(stderr, "nnlab: --with-pytorch: %s\n", err);
        return exit_status(s);
    }
    nn_torch_source(&t->r.python, t->source, sizeof t->source);
    t->done = 1;
    measure_graph(o, cfg, &req, t);
    return 0;
}

static const char *plural(long n)
{
    return n == 1 ? "" : "s";
}

void cli_torch_text(const cli_torch *t, double nnlab_us, const char *stat, long steps, int threads)
{
    const nn_torch_result *r = &t->r;
    int width = (int)strlen(r->python.label);
    if (!t->done)
        return;
    fprintf(stderr, "  side by side, batch %d on %s:\n", r->batch, nn_safe(r->device_name));
    fprintf(stderr, "    %-*s %10.1f us/step (%s of %ld", width, "nnlab", nnlab_us, stat, steps);
    if (threads > 0)
        fprintf(stderr, ", %d thread%s", threads, plural(threads));
    fprintf(stderr, ")\n");
    fprintf(stderr, "    %-*s %10.1f us/step (median of %ld, %d thread%s; %s, %s)", width,
            nn_safe(r->python.label), r->us_per_step, r->steps, r->threads, plural(r->threads),
            nn_safe(t->source), nn_safe(r->python.path));
    if (nnlab_us > 0)
        fprintf(stderr, ": %.2fx nnlab's", r->us_per_step / nnlab_us);
    fprintf(stderr, "\n");
    if (r->minor_faults_per_step >= 0 && r->system_us_per_step >= 0)
        fprintf(stderr, "    %-*s %10.0f pages a step mapped fresh (%.1f MB), %.0f us of system time a step "
                "(measured: getrusage over its timed steps)\n", width, "", r->minor_faults_per_step,
                r->minor_faults_per_step * 4096 / 1e6, r->system_us_per_step);
    if (!t->graph_done)
        return;
    fprintf(stderr, "    %-*s %10.1f us/step (median of blocks of %ld steps, its whole step one CUDA graph; "
            "%s)", width, "", t->graph.us_per_step, t->graph.steps, nn_safe(t->source));
    if (nnlab_us > 0)
        fprintf(stderr, ": %.2fx nnlab's", t->graph.us_per_step / nnlab_us);
    fprintf(stderr, "\n");
}

void cli_torch_json(const cli_torch *t)
{
    const nn_torch_result *r = &t->r;
    if (!t->done)
        return;
    printf("  \"pytorch\": {\"label\": ");
    cli_json_string(stdout, r->python.label);
    printf(", \"source\": ");
    cli_json_string(stdout, t->source);
    printf(", \"version\": ");
    cli_json_string(stdout, r->python.version);
    printf(", \"python\": ");
    cli_json_string(stdout, r->python.path);
    printf(", \"device\": ");
    cli_json_string(stdout, r->device);
    printf(", \"device_name\": ");
    cli_json_string(stdout, r->device_name);
    printf(", \"batch\": %d, \"threads\": %d, \"steps\": %ld, \"params\": %zu, "
           "\"us_per_step\": %.3f, \"us_per_step_stat\": \"median\", \"us_per_step_mean\": %.3f",
           r->batch, r->threads, r->steps, r->params, r->us_per_step, r->us_per_step_mean);
    /* null where the helper reported none (-1) */
    cli_json_optional("minor_faults_per_step", r->minor_faults_per_step >= 0, r->minor_faults_per_step, 9);
    cli_json_optional("system_us_per_step", r->system_us_per_step >= 0, r->system_us_per_step, 9);
    printf("},\n");
    if (t->graph_done)
        printf("  \"pytorch_graph\": {\"way\": \"%s\", \"us_per_step\": %.3f, \"us_per_step_stat\": "
               "\"median of blocks\", \"steps\": %ld},\n", nn_safe(t->graph.way), t->graph.us_per_step,
               t->graph.steps);
    else if (t->graph_why[0]) {
        printf("  \"pytorch_graph\": null,\n  \"pytorch_graph_why\": ");
        cli_json_string(stdout, t->graph_why);
        printf(",\n");
    }
}
