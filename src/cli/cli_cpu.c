/* src/cli/cli_cpu.c - what the CPU devices run on, as the CLI prints it
 * (nnlab/device.h's nn_cpu_facts): `nnlab calibrate`'s lines and the `"cpu"`
 * object of calibrate --json and bench --json. */
#include "config.h"

#include <stdio.h>

#include "cli_common.h"
#include "nnlab/calibrate.h"
#include "nnlab/device.h"
#include "util.h"

/* The warnings that apply: OpenBLAS's kernels below the CPU's, and a
 * one-core sgemm below half the peak; how many (at most 2). */
static int cpu_warnings(const nn_cpu_facts *f, double gflops_1thread, char w[2][NN_ERR_LEN])
{
    int n = 0;
    if (f->warning[0])
        snprintf(w[n++], NN_ERR_LEN, "%s", f->warning);
    if (nn_cpu_sgemm_check(f, gflops_1thread, w[n], NN_ERR_LEN))
        n++;
    return n;
}

/* The peak a core's sgemm is set against: measured where the FMA loop ran,
 * else the estimate. */
static double core_peak(const nn_cpu_facts *f)
{
    return f->peak_gflops_core_measured > 0 ? f->peak_gflops_core_measured : f->peak_gflops_core;
}

/* "  BLIS:             0.9.0, zen kernels: per product shape, ..." or the
 * reason it is not used */
static void print_blis_line(const nn_cpu_facts *f)
{
    if (f->blis_version[0])
        printf("  BLIS:             %s, %s kernels: %s\n", nn_safe(f->blis_version),
               nn_safe(f->blis_arch), nn_safe(f->blis_why));
    else
        printf("  BLIS:             %s\n", nn_safe(f->blis_why));
}

void cli_blis_text(void)
{
    nn_cpu_facts f;
    nn_cpu_facts_read(&f);
    print_blis_line(&f);
}

void cli_cpu_facts_json(double gflops_1thread)
{
    nn_cpu_facts f;
    char w[2][NN_ERR_LEN];
    nn_cpu_facts_read(&f);
    int nw = cpu_warnings(&f, gflops_1thread, w);
    printf("\"cpu\": {\"model\": ");
    cli_json_string(stdout, f.model);
    printf(", \"family\": %d, \"model_number\": %d, \"extensions\": ", f.family, f.model_number);
    cli_json_string(stdout, f.extensions);
    printf(", \"avx512\": %s, \"kernels\": ", f.avx512 ? "true" : "false");
    cli_json_string(stdout, f.kernels);
    printf(", \"openblas_version\": ");
    cli_json_string(stdout, f.blas_version);
    printf(", \"openblas_core\": ");
    cli_json_string(stdout, f.blas_core);
    printf(", \"openblas_coretype_env\": ");
    cli_json_string(stdout, f.blas_coretype_env);
    printf(", \"openblas_core_from\": ");
    if (f.blas_core_from[0])
        cli_json_string(stdout, f.blas_core_from);
    else
        printf("null");
    printf(", \"openblas_threads\": %d, \"clock_ghz\": %.3g, \"flops_per_cycle\": %d, "
           "\"fma_peak_gflops_core_estimated\": %.4g, \"fma_peak_gflops_core_measured\": ",
           f.blas_threads, f.clock_ghz, f.flops_per_cycle, f.peak_gflops_core);
    if (f.peak_gflops_core_measured > 0)
        printf("%.4g", f.peak_gflops_core_measured);
    else
        printf("null");
    double peak = core_peak(&f);
    if (gflops_1thread > 0)
        printf(", \"sgemm_gflops_1thread\": %.4g, \"sgemm_of_peak\": %.3g", gflops_1thread,
               peak > 0 ? gflops_1thread / peak : 0.0);
    printf(", \"blis_version\": ");
    cli_json_string(stdout, f.blis_version);
    printf(", \"blis_arch\": ");
    cli_json_string(stdout, f.blis_arch);
    printf(", \"blis_used\": %s, \"blis_why\": ", f.blis_used ? "true" : "false");
    cli_json_string(stdout, f.blis_why);
    printf(", \"warnings\": [");
    for (int i = 0; i < nw; i++) {
        printf("%s", i ? ", " : "");
        cli_json_string(stdout, w[i]);
    }
    printf("]}");
}

void cli_cpu_facts_text(double gflops_1thread)
{
    nn_cpu_facts f;
    char w[2][NN_ERR_LEN];
    nn_cpu_facts_read(&f);
    int nw = cpu_warnings(&f, gflops_1thread, w);
    printf("  processor:        %s (family %d model %d): %s\n", nn_safe(f.model), f.family,
           f.model_number, f.extensions);
    printf("  our kernels:      %s\n", f.kernels);
    printf("  OpenBLAS:         %s, %s kernels%s%s%s%s%s\n", f.blas_version, nn_safe(f.blas_core),
           f.blas_coretype_env[0] ? ", OPENBLAS_CORETYPE=" : "", nn_safe(f.blas_coretype_env),
           f.blas_core_from[0] ? " (chosen by nnlab: OpenBLAS took " : "", f.blas_core_from,
           f.blas_core_from[0] ? " for this CPU)" : "");
    print_blis_line(&f);
    if (f.peak_gflops_core_measured > 0 && gflops_1thread > 0)
        printf("  one core:         sgemm %.1f GFLOP/s, %.0f%% of its FMA peak (%.1f GFLOP/s "
               "measured by a loop of FMAs; estimated from cpuid ~%.0f: %d FLOP/cycle x %.2f GHz)\n",
               gflops_1thread, 100.0 * gflops_1thread / f.peak_gflops_core_measured,
               f.peak_gflops_core_measured, f.peak_gflops_core, f.flops_per_cycle, f.clock_ghz);
    else if (f.peak_gflops_core > 0 && gflops_1thread > 0)
        printf("  one core:         sgemm %.1f GFLOP/s, %.0f%% of its FMA peak (~%.0f GFLOP/s "
               "estimated: %d FLOP/cycle x %.2f GHz)%s\n",
               gflops_1thread, 100.0 * gflops_1thread / f.peak_gflops_core, f.peak_gflops_core,
               f.flops_per_cycle, f.clock_ghz,
               gflops_1thread > 1.05 * f.peak_gflops_core
                   ? "; above the estimate: the family and model the CPU reports (a virtual "
                     "machine's may be generic) understate it"
                   : "");
    for (int i = 0; i < nw; i++)
        printf("  warning:          %s\n", nn_safe(w[i]));
}

/* ---- OpenBLAS or BLIS per product (the calibration's contest) ---------------------------- */

/* "NT": whether op(A) and op(B) are transposed */
static void trans_text(const nn_product_choice *p, char out[3])
{
    out[0] = p->ta ? 'T' : 'N';
    out[1] = p->tb ? 'T' : 'N';
    out[2] = '\0';
}

/* a rate, or null where it was not measured */
static void print_rate_json(const char *key, double gflops)
{
    if (gflops > 0)
        printf(", \"%s\": %.4g", key, gflops);
    else
        printf(", \"%s\": null", key);
}

void cli_products_json(const nn_calibration *c)
{
    printf("\"product_call_us\": {\"openblas\": %.4g, \"blis\": %.4g}, \"products\": [",
           c->product_call_us[0], c->product_call_us[1]);
    for (int i = 0; i < c->n_products; i++) {
        const nn_product_choice *p = &c->products[i];
        char t[3];
        trans_text(p, t);
        printf("%s{\"m\": %d, \"n\": %d, \"k\": %d, \"trans\": \"%s\", \"threads\": %d",
               i ? ", " : "", p->m, p->n, p->k, t, p->threads);
        print_rate_json("openblas_gflops", p->openblas_gflops);
        print_rate_json("blis_gflops", p->blis_gflops);
        printf(", \"chosen\": \"%s\"}", nn_product_lib_name(p->chosen));
    }
    printf("]");
}

void cli_products_text(const nn_calibration *c)
{
    int blis = 0, small = 0;
    for (int i = 0; i < c->n_products; i++) {
        blis += c->products[i].chosen == 1;
        small += !(c->products[i].blis_gflops > 0);
    }
    if (c->n_products == 0) {
        printf("  products:         all on OpenBLAS (none contested against BLIS)\n");
        return;
    }
    printf("  products:         BLIS on %d of the presets' %d product shapes, OpenBLAS on the "
           "rest (%d too small to contest: a 1x1x1 call %.2f us, BLIS %.2f us)\n",
           blis, c->n_products, small, c->product_call_us[0], c->product_call_us[1]);
}
