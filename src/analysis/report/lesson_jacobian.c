/* src/analysis/report/lesson_jacobian.c - a jacobian step's result: the
 * step's method at its val on the CPU and the GPU, as nnlab runs it and as
 * a framework runs it eagerly, from the val sweep of `nnlab jacobian
 * --sweep` (nn_jac_sweep_predict) at that one val, and what of its work
 * multiplies zeros (nn_jac_explain). Every figure is predicted: the CPU's
 * from its calibration, the GPU's from its calibration or a profile. */
#include "nnlab/lesson_report.h"
#include "lesson_internal.h"

#include <stdio.h>
#include <string.h>

#include "nnlab/jacobian.h"
#include "nnlab/verdict.h"
#include "util.h"

void nn_lesson_jacobian_result(const nn_lesson_step *s, const nn_preset *p, const nn_calibration *cpu,
                               const nn_calibration *gpu, double cpu_op_us, double gpu_op_us, const char *gpu_source,
                               nn_lesson_result *r)
{
    nn_jac_shape shape;
    nn_jac_sweep sw;
    nn_jac_framework fw = { cpu_op_us, gpu_op_us };
    nn_verdict v;
    char line[3 * NN_TEXT_LEN], what[96];
    enum nn_jac_method m = s->method >= 0 ? (enum nn_jac_method)s->method : (enum nn_jac_method)p->task_method;
    int way = s->pair == NN_PAIR_OF_NNLAB ? NN_JAC_WAY_NNLAB : NN_JAC_WAY_FRAMEWORK;
    const char *cpu_source = "predicted from this CPU's calibration";
    memset(r, 0, sizeof *r);
    r->writeup = -1;
    if (nn_jac_shape_from_preset(p, p->name, &shape, r->why, sizeof r->why) != 0)
        return;
    nn_jac_sweep_predict(&shape, &s->val, 1, cpu, gpu, &fw, &sw);
    r->ran = 1;
    for (int w = NN_JAC_WAYS - 1; w >= 0; w--) {   /* the framework's pair first; whole Jacobians */
        snprintf(what, sizeof what, "cpu %s %s", nn_jac_way_name((enum nn_jac_way)w), nn_jac_method_name(m));
        nn_lesson_add_number(r, what, 1e6 * sw.cpu_s[w][m][0], 0, cpu_source);
        snprintf(what, sizeof what, "gpu %s %s", nn_jac_way_name((enum nn_jac_way)w), nn_jac_method_name(m));
        nn_lesson_add_number(r, what, 1e6 * sw.gpu_s[w][m][0], 0, gpu_source);
    }
    for (int k = 0; k < r->n_numbers; k++)
        r->number[k].whole = 1;
    int kind = nn_verdict_of(sw.cpu_s[way][m][0], nn_calibration_spread(cpu), sw.gpu_s[way][m][0],
                             nn_calibration_spread(gpu), nn_calibration_contradictory(cpu), &v);
    if (kind == NN_VERDICT_GPU_FASTER || kind == NN_VERDICT_GPU_SLOWER)
        snprintf(r->headline, sizeof r->headline, "GPU %.2fx %s", v.ratio,
                 kind == NN_VERDICT_GPU_SLOWER ? "slower" : "faster");
    else
        snprintf(r->headline, sizeof r->headline, "%s", kind == NN_VERDICT_TOO_CLOSE ? "too close to call"
                 : "no verdict");
    snprintf(r->label, sizeof r->label, "%s, %s at val %ld: CPU %s, GPU %s", nn_jac_way_name((enum nn_jac_way)way),
             nn_jac_method_name(m), s->val, cpu_source, gpu_source);
    snprintf(line, sizeof line, "%s %s at val %ld: CPU %.3g s, GPU %.3g s (both predicted)",
             nn_jac_way_name((enum nn_jac_way)way), nn_jac_method_name(m), s->val, sw.cpu_s[way][m][0],
             sw.gpu_s[way][m][0]);
    nn_lesson_result_add_line(r, line);
    nn_jac_explain(&shape, s->val, m, line, sizeof line);
    nn_lesson_result_add_line(r, line);
    nn_lesson_expect_verdict(s, kind, r);
    if (way == NN_JAC_WAY_FRAMEWORK && m == NN_JAC_ROWS)   /* the write-up's: jacobian(vectorize=False) */
        nn_lesson_compare_writeup(p, "val", (int)s->val, kind, 1, r);
}
