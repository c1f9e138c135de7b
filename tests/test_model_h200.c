/* tests/test_model_h200.c - the cost model against the first real GPU run
 * (issue 20 item 5): with the shipped h200 profile, the step the model
 * predicts (nn_explain) for every preset and batch of the recorded sweep
 * (tests/fixtures/h200-sweeps.jsonl, a copy of ../shared/gpu-h200/
 * sweeps.jsonl) is within TOLERANCE of the measured us_per_step, in both
 * ways the sweep measured:
 *   "graph": the step replayed as a CUDA graph, the data set on the device
 *            (nnlab's defaults; tag "P default");
 *   "eager": --no-graph --no-data-on-device --sync-every-step (tag "P
 *            eager"): every op launched, each batch copied from pageable
 *            memory (samples and labels), the loss read back every step.
 * The launches and graph nodes per step are not in the file: the model's
 * own estimate (one per op, explain.c) is used, as for any prediction
 * without a measurement.
 *
 * Plain TAP, one line per preset and way, with every point's error printed
 * as a comment. Every point must be within TOLERANCE, with one exception
 * that the data proves: two neighbouring points that no step time growing
 * with the batch (as the model's does: more work, never less) can both
 * meet, the smaller batch's point above the larger's by more than the
 * tolerance bridges (us[i] * (1 - TOLERANCE) > us[i+1] * (1 + TOLERANCE)).
 * Of such a pair the nearer of the two counts (the test finds the pairs in
 * the data itself, contradicting_pair): it does not say which of the two
 * was the noise, only that one must be missed, so the model must still meet
 * the other; and there must be exactly the two pairs the fit knew of, so
 * that no model error can hide behind the rule. A series listed in
 * known_out[] (the model's form does not reach it, with the reason) is
 * marked TODO: the driver counts it as an expected failure, and as XPASS
 * once it holds; a listed series beyond KNOWN_LIMIT fails: what is known
 * not to hold must not get worse. */
#include <stddef.h>

#include "model_fixture.h"

/* Preset and way pairs the model's form does not reach yet, and why. */
static const model_known known_out[] = {
    { "lenet-cifar10", "eager", "-30% at 64: measured 534.5 us at 16 and 1002.3 at 64 (+468), where "
      "lenet5-cifar10, the same layers and three more, took 478.8 and 756.4 (+278); the form's eager step grows "
      "there by its copies alone (its host's issue still the longer), 185 us, and cannot put lenet-cifar10 "
      "above 752 (1002.3 less 25%) while lenet5-cifar10 stays below 945 and 598 at 16. Noise, by a repeat on an "
      "H100 (2026-11-27, bench/results/gpu-nvidia-h100-80gb-hbm3-2026-11-27): two back-to-back runs of this "
      "sweep differed by up to 40% a point, and lenet-cifar10 at 64 (541, 615) stayed below lenet5-cifar10 (809, 760)" },
    { "lenet5-cifar10", "eager", "+30% at 16: 478.8 us, below its own 662.4 at 4 and below lenet-cifar10's 534.5 "
      "at 16 although it runs lenet-cifar10's layers and three more; the form's host cost per step (launches, "
      "cuDNN and cuBLAS calls) is fixed, and lenet-cifar10's 374.9 at 1 bounds it. Noise, by a repeat on an H100 "
      "(2026-11-27): at 16 two back-to-back runs took 652 and 401 us (63% apart)" },
    { "conv1d-regression", "eager", "-28% at 4, the nearer of its contradicting pair (701.0 at 4, 367.7 at 16): "
      "663.3 at 64 and 481.3 at 256 ask for a step flat within 25% from 4 to 256 (526..602 us) and 1408.5 at "
      "1024 for more than its device's time beyond it; the host's fixed cost is shared with the other presets' "
      "cuDNN and cuBLAS calls. Noise, by a repeat on an H100 (2026-11-27): two back-to-back runs took 477 and 294 "
      "us at 16, 595 and 372 at 256 (up to 62% apart)" },
    { NULL, NULL, NULL },
};

int main(void)
{
    /* mnist-mlp-128 graph at 16 and 64, conv1d-regression eager at 4 and 16: no more */
    return model_fixture_run("h200-sweeps.jsonl", "h200", 12, 2,
                             "mnist-mlp-128 graph 16/64, conv1d-regression eager 4/16", known_out);
}
