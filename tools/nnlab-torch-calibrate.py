#!/usr/bin/env python3
"""nnlab-torch-calibrate: this CPU's calibration measured through PyTorch's own ops.

`nnlab calibrate --device cpu` measures how fast nnlab's op table runs here; this
measures the same figures at the same sizes through PyTorch's operators, so that the
framework way's CPU step can be priced from what PyTorch does on this machine rather
than from nnlab's rates (docs/ways.md, "Priced from PyTorch's own rates"). It prints
the calibration cache file's lines (the form tests/cal_fixture.c and
tools/fit_framework_cpu.py read), every figure defined as nnlab's calibrate defines it:

    gemm_gflops         torch.mm of 1024 x 1024 by 1024 x 1024 at --threads
    gemm_gflops_1thread the same on one thread
    mem_gbps            a relu (clamp_min) over 8 Mi floats, 2 streams counted
    op_us               the same over one float: the cost of issuing one op
    sync_us             op_us (a CPU's op is done when it returns; no device to copy to)
    host_copy_gbps      a tensor copy_ of 8 Mi floats, the bytes copied
    matrix_op_us        the smaller of a 1x1x1 F.linear and the first shape's call
    linear_fwd/bwd      F.linear at nnlab's shapes, and its backward (dx, dw, dbias: the
                        three products autograd runs) by FLOPs, the fixed call taken off
    conv_fwd/bwd        LeNet's first convolution (3 -> 6, 5x5, 32x32) at batches 1 to
                        1024 (nnlab's stop at 256: PyTorch's rate moves beyond it)
    elem_ns             ns per element of every other op class at 262,144 elements
    threads             --threads: torch's pool and OpenBLAS's (set before torch loads it)
    conv_faults         not a figure nnlab reads: the convolution's minor page faults and
                        system milliseconds a call (getrusage), forward and backward, by batch:
                        memory PyTorch maps fresh each call (glibc returns blocks above its
                        mmap threshold to the kernel on free, and the kernel zeroes each page)

Each figure is the median of five batches of calls (a batch lasts at least 5 ms); the
spread line says how far the batches were apart. The backward calls run with autograd
(torch.autograd.grad on a graph kept), as a training step runs them.

    nnlab-torch-calibrate [--threads T] [--quick] > calibration-cpu-pytorch.txt

Only the standard library and torch; exit 3 when torch cannot be imported.
"""
import argparse
import importlib.util
import os
import platform
import resource
import statistics
import sys
import time

ELEMS = 262144                 # NN_ELEM_CALIBRATION
STREAM_FLOATS = 8 << 20        # calibrate_internal.h
GEMM_N = 1024
LINEAR_SHAPES = ((1, 84, 16), (4, 400, 10), (1, 784, 128), (4, 784, 128), (64, 400, 120), (64, 784, 128),
                 (64, 1000, 1000))
CONV_BATCHES = (1, 4, 16, 64, 256, 1024)
ELEM_CLASSES = ("relu", "tanh", "mish", "dropout", "pool2x2", "pool", "softmax_xent", "mse", "sgd", "adam")


def time_call(fn, batches=5, min_s=0.005):
    """Seconds of one call, the median of `batches` batches of back-to-back calls; and their spread."""
    fn()
    reps, t0 = 1, time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    reps = max(1, int(min_s / one))
    per = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        per.append((time.perf_counter() - t0) / reps)
    med = statistics.median(per)
    return med, (max(per) - min(per)) / med if med > 0 else 0.0


class Spread:
    def __init__(self):
        self.widest = {}

    def note(self, key, spread):
        self.widest[key] = max(self.widest.get(key, 0.0), spread)


def point(flops, call_s, fixed_us):
    """nnlab's add_point: the rate of the work beyond the fixed cost of a call."""
    work_us = call_s * 1e6 - fixed_us
    if work_us < 0.1 * call_s * 1e6:
        work_us = 0.1 * call_s * 1e6
    return flops, flops / work_us * 1e-3


def backward_of(torch, out, inputs, grad):
    """A call of the backward autograd runs for out (the graph kept for the next)."""
    return lambda: torch.autograd.grad(out, inputs, grad, retain_graph=True)


def linear_curves(torch, F, sp, matrix_op_us):
    fwd, bwd, fixed = [], [], matrix_op_us
    for i, (n, k, m) in enumerate(LINEAR_SHAPES):
        x = torch.randn(n, k, requires_grad=True)
        w = torch.randn(m, k, requires_grad=True)
        b = torch.randn(m, requires_grad=True)
        with torch.no_grad():
            s, spr = time_call(lambda: F.linear(x, w, b))
        sp.note("linear", spr)
        if i == 0 and s * 1e6 < fixed:
            fixed = s * 1e6
        macs, outs = n * k * m, n * m
        fwd.append(point(2.0 * macs + outs, s, fixed))
        y = F.linear(x, w, b)
        s, spr = time_call(backward_of(torch, y, (x, w, b), torch.randn(n, m)))
        sp.note("linear", spr)
        bwd.append(point(4.0 * macs + outs, s, fixed))
    return fwd, bwd, fixed


def faults_per_call(fn, calls=3):
    """Minor page faults and system seconds of one call (getrusage): memory PyTorch maps fresh."""
    fn()
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(calls):
        fn()
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return (r1.ru_minflt - r0.ru_minflt) / calls, (r1.ru_stime - r0.ru_stime) / calls


def conv_curves(torch, F, sp, fixed, quick):
    """The curves, and per batch the forward's and backward's page faults and system time a call."""
    fwd, bwd, faults = [], [], []
    for n in CONV_BATCHES[:4] if quick else CONV_BATCHES:
        x = torch.randn(n, 3, 32, 32, requires_grad=True)
        w = torch.randn(6, 3, 5, 5, requires_grad=True)
        b = torch.randn(6, requires_grad=True)
        with torch.no_grad():
            s, spr = time_call(lambda: F.conv2d(x, w, b))
            ff, fs = faults_per_call(lambda: F.conv2d(x, w, b))
        sp.note("conv", spr)
        macs, outs = n * 6 * 784 * 75, n * 6 * 784
        fwd.append(point(2.0 * macs + outs, s, fixed))
        y = F.conv2d(x, w, b)
        call = backward_of(torch, y, (x, w, b), torch.randn_like(y))
        s, spr = time_call(call)
        bf, bs = faults_per_call(call)
        sp.note("conv", spr)
        bwd.append(point(4.0 * macs + outs, s, fixed))
        faults.append((n, ff, fs * 1e3, bf, bs * 1e3))
    return fwd, bwd, faults


def elem_cost(torch, F, name):
    """(forward ns, backward ns) per element of one op class, as nnlab's calibrate counts elements."""
    def act(f):
        x = torch.randn(ELEMS, requires_grad=True)
        y = f(x)
        with torch.no_grad():
            fw = lambda: f(x)   # noqa: E731
        return fw, backward_of(torch, y, (x,), torch.randn(ELEMS))

    if name in ("relu", "tanh", "mish"):
        fw, bw = act({"relu": torch.relu, "tanh": torch.tanh, "mish": F.mish}[name])
    elif name == "dropout":
        fw, bw = act(lambda x: F.dropout(x, 0.2, True))
    elif name in ("pool2x2", "pool"):
        if name == "pool2x2":     # 64 planes of 64 x 64, 2x2 windows
            x = torch.randn(16, 4, 64, 64, requires_grad=True)
            f = lambda t: F.max_pool2d(t, 2)    # noqa: E731
        else:                     # rows of 16 in threes (conv1d-regression's pool)
            x = torch.randn(ELEMS // 128, 8, 16, requires_grad=True)
            f = lambda t: F.max_pool1d(t, 3)    # noqa: E731
        y = f(x)
        fw, bw = (lambda: f(x)), backward_of(torch, y, (x,), torch.randn_like(y))
    elif name in ("softmax_xent", "mse"):    # the loss and its gradient: one call
        x = torch.randn(ELEMS // 16, 16, requires_grad=True)
        if name == "softmax_xent":
            t = torch.zeros(ELEMS // 16, dtype=torch.long)
            loss_fn = lambda: F.cross_entropy(x, t)     # noqa: E731
        else:
            t = torch.randn(ELEMS // 16, 16)
            loss_fn = lambda: F.mse_loss(x, t)          # noqa: E731
        return time_call(lambda: torch.autograd.grad(loss_fn(), (x,)))[0] * 1e9 / ELEMS, 0.0
    else:                         # an optimiser's step over ELEMS parameters: one call
        p = torch.nn.Parameter(torch.randn(ELEMS))
        p.grad = torch.randn(ELEMS)
        opt = (torch.optim.SGD([p], lr=0.001, momentum=0.9) if name == "sgd"
               else torch.optim.Adam([p], lr=0.001))
        return time_call(opt.step)[0] * 1e9 / ELEMS, 0.0
    with torch.no_grad():
        s = time_call(fw)[0]
    return s * 1e9 / ELEMS, time_call(bw)[0] * 1e9 / ELEMS


def load_step_helper():
    """tools/nnlab-torch-step.py, for its bounds on the thread pools (bound_pools, bound_blas_now)."""
    here = os.path.dirname(os.path.realpath(__file__))
    sys.dont_write_bytecode = True
    sys.path.insert(0, here)
    spec = importlib.util.spec_from_file_location("nnlab_torch_step", os.path.join(here, "nnlab-torch-step.py"))
    helper = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helper)
    return helper


def set_threads(torch, helper, n):
    """torch's pool and OpenBLAS's (its CPU matrix products run on a pool of its own)."""
    torch.set_num_threads(n)
    helper.bound_blas_now(n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="conv batches to 64 only (tests)")
    a = ap.parse_args()
    if a.threads < 1:
        ap.error("--threads must be at least 1")
    helper = load_step_helper()
    helper.bound_pools(a.threads)        # before torch loads its libraries
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print("nnlab-torch-calibrate: cannot import torch: %s" % e, file=sys.stderr)
        return 3
    torch.manual_seed(0)
    sp = Spread()
    set_threads(torch, helper, 1)
    A, B = torch.randn(GEMM_N, GEMM_N), torch.randn(GEMM_N, GEMM_N)
    flops = 2.0 * GEMM_N ** 3
    gemm1 = flops / time_call(lambda: torch.mm(A, B), min_s=0.05)[0] * 1e-9
    set_threads(torch, helper, a.threads)
    s, spr = time_call(lambda: torch.mm(A, B), min_s=0.05)
    sp.note("gemm", spr)
    gemm = flops / s * 1e-9
    big, big_out = torch.randn(STREAM_FLOATS), torch.empty(STREAM_FLOATS)
    s, spr = time_call(lambda: torch.clamp_min(big, 0.0, out=big_out), min_s=0.05)
    sp.note("mem", spr)
    mem = 2.0 * STREAM_FLOATS * 4 / s * 1e-9
    del big, big_out
    one, one_out = torch.randn(1), torch.empty(1)
    s, spr = time_call(lambda: torch.clamp_min(one, 0.0, out=one_out))
    sp.note("op", spr)
    op_us = s * 1e6
    src, dst = torch.randn(STREAM_FLOATS), torch.empty(STREAM_FLOATS)
    s, spr = time_call(lambda: dst.copy_(src), min_s=0.05)
    sp.note("host_copy", spr)
    host_copy = STREAM_FLOATS * 4 / s * 1e-9
    del src, dst
    x1, w1 = torch.randn(1, 1), torch.randn(1, 1)
    s, spr = time_call(lambda: F.linear(x1, w1))
    matrix_op_us = s * 1e6
    lf, lb, matrix_op_us = linear_curves(torch, F, sp, matrix_op_us)
    lf.append(point(flops + GEMM_N * GEMM_N, flops / (gemm * 1e9) + matrix_op_us * 1e-6, matrix_op_us))
    cf, cb, faults = conv_curves(torch, F, sp, matrix_op_us, a.quick)
    elem = [(name,) + elem_cost(torch, F, name) for name in ELEM_CLASSES]
    curve = lambda pts: " ".join("%g:%g" % p for p in pts)   # noqa: E731
    print("# PyTorch %s's own rates on this CPU (tools/nnlab-torch-calibrate.py), %d threads,"
          % (torch.__version__, a.threads))
    print("# measured %s; the figures defined as nnlab calibrate's" % time.strftime("%Y-%m-%d %H:%M:%S"))
    print("format = 6\ndevice = cpu")
    print("machine = %s, %d cores" % (platform.processor() or platform.machine(), os.cpu_count() or 0))
    print("created = %d" % int(time.time()))
    print("note = pytorch %s" % torch.__version__)
    print("gemm_gflops = %g\ngemm_gflops_1thread = %g\nmem_gbps = %g\nop_us = %g" % (gemm, gemm1, mem, op_us))
    # a CPU has no device to copy to or wait for: an op is done when it returns
    print("sync_us = %g\nupload_us = 0\nupload_gbps = 0\ndownload_us = 0\nhost_copy_gbps = %g" % (op_us, host_copy))
    print("matrix_op_us = %g" % matrix_op_us)
    print("linear_fwd = %s\nlinear_bwd = %s" % (curve(lf), curve(lb)))
    print("conv_fwd = %s\nconv_bwd = %s" % (curve(cf), curve(cb)))
    print("elem_ns = " + " ".join("%s:%g:%g" % e for e in elem))
    print("spread = " + " ".join("%s:%g" % kv for kv in sp.widest.items()))
    print("threads = %d" % a.threads)
    # not a calibration figure (nnlab reads no such key): memory the convolution maps fresh
    print("# conv page faults a call, batch:forward faults:forward system ms:backward faults:backward system ms")
    print("conv_faults = " + " ".join("%d:%.0f:%.2f:%.0f:%.2f" % f for f in faults))
    return 0


if __name__ == "__main__":
    sys.exit(main())
