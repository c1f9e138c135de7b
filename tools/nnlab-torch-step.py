#!/usr/bin/env python3
"""nnlab-torch-step: an nnlab preset's training step in PyTorch, timed.

Reads the preset's INI file (man nnlab.ini(5)), builds the same network in
PyTorch (every layer kind nnlab has, the graph's `input`, `inputs` and
`weights` keys included), the same loss and optimiser with the preset's
values, and times the step the write-ups time, nnlab's `framework` way
(docs/ways.md): each step a batch from host memory copied to the device as
`.to(device)` does (pageable memory), forward, backward, the optimiser's
step and the loss read back:

    x = xs[i].to(device); y = ys[i].to(device); optimizer.zero_grad();
    out = net(x); loss = criterion(out, y) [+ aux]; loss.backward();
    optimizer.step(); loss.item()

--data-on-device times another way, `framework-data-on-device`: the batches
kept on the device, no copy in the step (what this helper timed before the
copy was added: the recorded H200 run's torch-*.json). The JSON's "way"
says which.

On a CUDA device two more of PyTorch's own ways (--way), PyTorch's best
against nnlab's CUDA graph; both keep the data on the device, read the
loss back only at the end, and time blocks of steps (a block's time over
its steps, the median of the blocks), as nnlab times its graph way:
    graph    the whole step captured as one CUDA graph, PyTorch's documented
             whole-network capture (torch.cuda.graph: static input and
             target tensors, warm-up on a side stream, the optimiser inside
             the graph, Adam with capturable=True), each step a copy of the
             next batch into the static tensors and a replay;
    compile  torch.compile(net, mode="reduce-overhead") (TorchInductor's
             kernels, replayed as CUDA graphs), the optimiser eager; torch 2
             or later.
TF32 is off on a CUDA device for every way (matmul and cuDNN), as nnlab's
default FP32 math.

It prints one JSON object on one line and exits with:
    0  the result: torch's version, the device, threads (--threads bounds
       BLAS's pool too, blas_threads: OpenBLAS runs PyTorch's CPU matrix
       products on a pool of its own), batch, steps, the parameter count,
       the median and mean microseconds per step, and (the eager way) the
       process's minor page faults and system time per timed step
       (getrusage: memory PyTorch maps fresh, which the kernel zeroes);
    1  {"error": ...}: the step could not run (no CUDA device, a batch
       PyTorch refuses, out of memory);
    2  {"error": ...}: the preset cannot be built (naming the file, the
       [layerN] section and the key) or the arguments are wrong;
    3  {"error": ...}: torch cannot be imported.

    nnlab-torch-step PRESET.ini --batch B [--steps 20] [--warmup 3]
                     [--device cpu|cuda] [--threads T] [--seed S] [--data-on-device]
                     [--way eager|graph|compile]
    nnlab-torch-step --probe      (torch's version and whether CUDA is there)

Only the standard library and torch. nnlab's C runner (src/jobs/torch_step.c)
starts it, reads its JSON and checks its parameter count against nnlab's own.
"""
import argparse
import configparser
import json
import math
import os
import re
import resource
import statistics
import sys
import time

# the network's module lies beside this file; no __pycache__ in an installed
# or read-only folder
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from nnlab_torch_net import FROM_DATA, build_network  # noqa: E402

EXIT_RUNTIME, EXIT_PRESET, EXIT_NO_TORCH = 1, 2, 3

DATA_SHAPES = {"mnist": (1, 28, 28), "cifar10": (3, 32, 32)}
CLASSES = 10                    # mnist and cifar10; random data has targets
ONE_INPUT = ("input",)          # every kind with one input may name it
SHARED = ("weights",)           # every kind with parameters may share them

# The keys each layer kind takes besides `type` (src/core/layers/*.c, the
# `keys` of each nn_layer_def, plus input and weights as nn_layer_keys_of
# adds them). A key not listed here is refused by name: a key nnlab learns
# later must be taught here too, not silently ignored.
KIND_KEYS = {
    "linear": ("in", "out", "bias", "init", "gain") + ONE_INPUT + SHARED,
    "conv2d": ("in", "out", "kernel", "stride", "padding") + ONE_INPUT + SHARED,
    "conv1d": ("in", "out", "kernel", "stride", "padding") + ONE_INPUT + SHARED,
    "maxpool2d": ("kernel", "stride") + ONE_INPUT,
    "maxpool1d": ("kernel", "stride") + ONE_INPUT,
    "maxlen": ONE_INPUT,
    "flatten": ONE_INPUT,
    "reshape": ("shape",) + ONE_INPUT,
    "relu": ONE_INPUT,
    "tanh": ONE_INPUT,
    "mish": ONE_INPUT,
    "dropout": ("p",) + ONE_INPUT,
    "add": ("inputs", "scale"),
    "mul": ("inputs",),
    "slice": ("from", "to") + ONE_INPUT,
    "batchnorm": ("in", "momentum", "virtual_batch", "eps") + ONE_INPUT + SHARED,
    "glu": ONE_INPUT,
    "sparsemax": ("sparsity",) + ONE_INPUT,
}
REQUIRED = {"linear": ("out",), "conv2d": ("out", "kernel"), "conv1d": ("out", "kernel"),
            "maxpool2d": ("kernel",), "maxpool1d": ("kernel",), "reshape": ("shape",),
            "dropout": ("p",), "add": ("inputs",), "mul": ("inputs",), "slice": ("to",)}


class Failure(Exception):
    """An error object for stdout and the exit status that goes with it."""

    def __init__(self, status, kind, message, **where):
        super().__init__(message)
        self.status, self.kind, self.where = status, kind, where

    def as_json(self):
        return {"error": dict(kind=self.kind, message=str(self), **self.where)}


class PresetError(Failure):
    def __init__(self, file, section, key, message):
        where = {"file": file, "section": section, "key": key}
        if key:
            text = f"{file}: [{section}] {key}: {message}"
        elif section:
            text = f"{file}: [{section}]: {message}"
        else:
            text = f"{file}: {message}"
        super().__init__(EXIT_PRESET, "preset", text, **where)


# ---------------------------------------------------------------- the INI file

def raw_value(text):
    """A value as iniparser gives it (nnlab reads presets with iniparser):
    inside its quotes when quoted, else up to a ';' or '#', blanks cut."""
    text = text.strip()
    for quote in ('"', "'"):
        if text.startswith(quote) and quote in text[1:]:
            return text[1:text.index(quote, 1)]
    return re.split(r"[;#]", text, maxsplit=1)[0].strip()


def read_ini(path):
    """{section: {key: value}}, names in lower case as iniparser keeps them."""
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",),
                                       comment_prefixes=("#", ";"), inline_comment_prefixes=None,
                                       strict=True, empty_lines_in_values=False,
                                       default_section="\0 no default section")
    try:
        with open(path, encoding="utf-8-sig") as f:
            parser.read_file(f)
    except OSError as e:
        raise PresetError(path, None, None, f"cannot read: {e.strerror}") from None
    except (configparser.Error, UnicodeDecodeError) as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise PresetError(path, None, None, f"not an INI file nnlab reads: {first}") from None
    return {s.lower(): {k.lower(): raw_value(v) for k, v in parser.items(s)}
            for s in parser.sections()}


class Section:
    """One section's values, each parsed by its kind with an error that names
    the file, the section and the key."""

    def __init__(self, file, name, values):
        self.file, self.name, self.values = file, name, values

    def error(self, key, message):
        return PresetError(self.file, self.name, key, message)

    def has(self, key):
        return key in self.values

    def text(self, key, default=None):
        return self.values.get(key, default)

    def number(self, key, default, parse, what):
        if key not in self.values:
            return default
        try:
            v = parse(self.values[key])
        except ValueError:
            raise self.error(key, f"{self.values[key]!r} is not {what}") from None
        if isinstance(v, float) and not math.isfinite(v):
            raise self.error(key, f"{self.values[key]!r} is not a finite number")
        return v

    def integer(self, key, default=None, low=None):
        v = self.number(key, default, lambda s: int(s, 10), "a whole number")
        if v is not None and low is not None and v < low:
            raise self.error(key, f"{v} must be >= {low}")
        return v

    def real(self, key, default=None):
        return self.number(key, default, float, "a number")

    def boolean(self, key, default=False):
        if key not in self.values:
            return default
        word = self.values[key].lower()
        if word not in ("true", "false"):
            raise self.error(key, f"{self.values[key]!r}: expected true or false")
        return word == "true"

    def choice(self, key, names, default=None):
        if key not in self.values:
            if default is None:
                raise self.error(key, f"missing (expected {', '.join(names)})")
            return default
        word = self.values[key].lower()
        if word not in names:
            raise self.error(key, f"{self.values[key]!r}: expected {', '.join(names)}")
        return word

    def shape(self, key):
        try:
            dims = tuple(int(d, 10) for d in self.values[key].split("x"))
        except ValueError:
            dims = ()
        if not 1 <= len(dims) <= 3 or min(dims) < 1:
            raise self.error(key, f"{self.values[key]!r}: expected 1 to 3 sizes like 1x16")
        return dims

    def layer_ref(self, key, text=None):
        """layerN -> N (1-based), data -> FROM_DATA; 0 when absent."""
        text = self.values.get(key) if text is None else text
        if text is None:
            return 0
        word = text.strip().lower()
        if word == "data":
            return FROM_DATA
        m = re.fullmatch(r"layer([1-9][0-9]*)", word)
        if not m:
            raise self.error(key, f"{text!r}: expected a layer, like layer3, or data")
        return int(m.group(1))

    def layer_pair(self, key):
        parts = self.values[key].split(",")
        if len(parts) != 2:
            raise self.error(key, f"{self.values[key]!r}: expected two layers, like layer3, layer5")
        return [self.layer_ref(key, p) for p in parts]


# ---------------------------------------------------------------- the preset

class Preset:
    """What the step needs from a preset file: the data's shape, the loss,
    the optimiser and the layers' sections in order."""

    def __init__(self, path):
        self.path = path
        ini = read_ini(path)
        section = lambda name: Section(path, name, ini.get(name, {}))
        data, train, opt = section("data"), section("train"), section("optimizer")
        self.data = data.choice("set", ("mnist", "cifar10", "random"))
        self.input_shape = DATA_SHAPES.get(self.data) or (data.integer("features", 84, 1),)
        self.targets = data.integer("targets", 1, 1)
        self.loss = train.choice("loss", ("cross_entropy", "mse"))
        self.optimizer = read_optimizer(opt)
        self.layers = layer_sections(path, ini)


def read_optimizer(opt):
    """torch.optim's arguments with the defaults of nn_preset_defaults."""
    kind = opt.choice("type", ("sgd", "adam"))
    common = {"lr": opt.real("lr", 0.001), "weight_decay": opt.real("weight_decay", 0.0)}
    if kind == "adam":
        return kind, dict(common, betas=(opt.real("beta1", 0.9), opt.real("beta2", 0.999)),
                          eps=opt.real("eps", 1e-8))
    return kind, dict(common, momentum=opt.real("momentum", 0.0),
                      dampening=opt.real("dampening", 0.0), nesterov=opt.boolean("nesterov"))


def layer_sections(path, ini):
    """[layer1] .. [layerN], without gaps, each of a known kind whose keys the
    helper knows."""
    numbers = sorted(int(s[5:]) for s in ini if re.fullmatch(r"layer[1-9][0-9]*", s))
    if not numbers:
        raise PresetError(path, None, None, "no [layer1] section: a preset needs at least one layer")
    for n, want in zip(numbers, range(1, len(numbers) + 1)):
        if n != want:
            raise PresetError(path, f"layer{want}", None, f"missing, but [layer{numbers[-1]}] exists")
    layers = []
    for n in numbers:
        sec = Section(path, f"layer{n}", ini[f"layer{n}"])
        kind = sec.text("type")
        if kind is None:
            raise sec.error("type", "missing")
        if kind.lower() not in KIND_KEYS:
            raise sec.error("type", f"layer kind {kind!r} cannot be built in PyTorch by this helper "
                            f"(it builds {', '.join(KIND_KEYS)})")
        sec.kind = kind.lower()
        check_keys(sec)
        layers.append(sec)
    return layers


def check_keys(sec):
    for key in sec.values:
        if key != "type" and key not in KIND_KEYS[sec.kind]:
            raise sec.error(key, f"not a key this helper builds for a layer of type {sec.kind} "
                            f"(it knows: {', '.join(KIND_KEYS[sec.kind]) or 'none'})")
    for key in REQUIRED.get(sec.kind, ()):
        if not sec.has(key):
            raise sec.error(key, f"missing: a layer of type {sec.kind} needs it")


# ---------------------------------------------------------------- the step

def make_optimizer(torch, preset, params, capturable=False):
    kind, args = preset.optimizer
    if kind == "adam" and capturable:           # its step counter on the device: capturable
        return torch.optim.Adam(params, capturable=True, **args)
    return (torch.optim.Adam if kind == "adam" else torch.optim.SGD)(params, **args)


WAY = "framework"
WAY_ON_DEVICE = "framework-data-on-device"
WAY_GRAPH = "pytorch-cuda-graph"
WAY_COMPILE = "pytorch-compile-reduce-overhead"
BLOCKS = 5                      # the captured ways: steps timed in this many blocks


def make_data(torch, preset, batch, device):
    """A few batches cycled: no loader in the timing. In host memory
    (pageable, as a DataLoader gives them) unless device is the device
    itself (--data-on-device)."""
    per_batch = batch * (math.prod(preset.input_shape) + max(preset.targets, 1)) * 4
    pool = max(1, min(8, (256 << 20) // max(per_batch, 1)))
    xs = torch.randn(pool, batch, *preset.input_shape, device=device)
    if preset.loss == "cross_entropy":
        ys = torch.randint(0, CLASSES, (pool, batch), device=device)
    else:
        ys = torch.randn(pool, batch, preset.targets, device=device)
    return xs, ys


def time_steps(torch, preset, net, args):
    device = torch.device(args.device)
    net = net.to(device).train()
    optimizer = make_optimizer(torch, preset, net.parameters())
    criterion = torch.nn.CrossEntropyLoss() if preset.loss == "cross_entropy" else torch.nn.MSELoss()
    xs, ys = make_data(torch, preset, args.batch, device if args.data_on_device else torch.device("cpu"))
    times = []
    for step in range(args.warmup + args.steps):
        if step == args.warmup:
            usage0 = resource.getrusage(resource.RUSAGE_SELF)
        x, y = xs[step % len(xs)], ys[step % len(ys)]
        t0 = time.perf_counter()
        if not args.data_on_device:
            x, y = x.to(device), y.to(device)   # the batch up from pageable memory, every step
        optimizer.zero_grad()
        out, aux = net(x)
        loss = criterion(out, y)
        if aux is not None:
            loss = loss + aux
        loss.backward()
        optimizer.step()
        value = loss.item()         # the read-back every step: it waits for the device
        dt = time.perf_counter() - t0
        if step >= args.warmup:
            times.append(dt * 1e6)
    return times, value, usage_per_step(usage0, resource.getrusage(resource.RUSAGE_SELF), args.steps)


def usage_per_step(before, after, steps):
    """The timed steps' minor page faults and system microseconds, per step (all of the process's
    threads): what the kernel did for PyTorch's freshly mapped memory."""
    return {"minor_faults_per_step": round((after.ru_minflt - before.ru_minflt) / steps, 1),
            "system_us_per_step": round((after.ru_stime - before.ru_stime) * 1e6 / steps, 1)}


def loss_of(criterion, out, aux, y):
    loss = criterion(out, y)
    return loss + aux if aux is not None else loss


def capture_step(torch, net, optimizer, criterion, static_x, static_y):
    """PyTorch's whole-network capture (its CUDA graphs documentation): a
    few steps on a side stream first, the gradients set to None, then one
    step recorded; a replay runs forward, backward and the optimiser."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            optimizer.zero_grad(set_to_none=True)
            out, aux = net(static_x)
            loss_of(criterion, out, aux, static_y).backward()
            optimizer.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    optimizer.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        out, aux = net(static_x)
        static_loss = loss_of(criterion, out, aux, static_y)
        static_loss.backward()
        optimizer.step()
    return graph, static_loss


def captured_stepper(torch, preset, net, args, xs, ys):
    """One step of --way graph or compile, and the loss it leaves."""
    criterion = torch.nn.CrossEntropyLoss() if preset.loss == "cross_entropy" else torch.nn.MSELoss()
    if args.way == "graph":
        optimizer = make_optimizer(torch, preset, net.parameters(), capturable=True)
        static_x, static_y = xs[0].clone(), ys[0].clone()
        graph, static_loss = capture_step(torch, net, optimizer, criterion, static_x, static_y)

        def step(i):
            static_x.copy_(xs[i % len(xs)])
            static_y.copy_(ys[i % len(ys)])
            graph.replay()
            return static_loss
        return step
    if not hasattr(torch, "compile"):
        raise Failure(EXIT_RUNTIME, "way", f"--way compile: torch {torch.__version__} has no torch.compile "
                      "(PyTorch 2.0 or later)")
    optimizer = make_optimizer(torch, preset, net.parameters())
    compiled = torch.compile(net, mode="reduce-overhead")

    def step(i):
        optimizer.zero_grad(set_to_none=True)
        out, aux = compiled(xs[i % len(xs)])
        loss = loss_of(criterion, out, aux, ys[i % len(ys)])
        loss.backward()
        optimizer.step()
        return loss
    return step


def time_captured(torch, preset, net, args):
    """--way graph or compile: data on the device, no read-back but at the
    end; each block of steps timed to the device's end (a synchronize),
    its time over its steps."""
    device = torch.device(args.device)
    net = net.to(device).train()
    xs, ys = make_data(torch, preset, args.batch, device)
    step = captured_stepper(torch, preset, net, args, xs, ys)
    for i in range(max(args.warmup, 3)):        # compile's first calls compile and record
        loss = step(i)
    torch.cuda.synchronize()
    per_block = max(1, args.steps // BLOCKS)
    times, done = [], 0
    while done < args.steps:
        n = min(per_block, args.steps - done)
        t0 = time.perf_counter()
        for i in range(done, done + n):
            loss = step(i)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e6 / n)
        done += n
    return times, loss.item()


def device_name(torch, device):
    if device.startswith("cuda"):
        return torch.cuda.get_device_name(torch.device(device))
    return "cpu"


def run(torch, preset, args):
    if args.threads:
        torch.set_num_threads(args.threads)
    # PyTorch's default (no --threads) is its own: on the 2-core Zen 5, torch's pool at 1 and
    # OpenBLAS's at 2, faster there for mnist-mlp-1000 at 256 (18.7 ms) than 1 and 1 (27.1)
    # or 2 and 2 (35.5-40.0: the two pools contend for the cores)
    blas_threads = bound_blas_now(args.threads)
    torch.manual_seed(args.seed)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise Failure(EXIT_RUNTIME, "device", f"--device {args.device}: this PyTorch sees no CUDA device "
                      f"(torch {torch.__version__}, built {'with' if torch.version.cuda else 'without'} CUDA)")
    if args.device.startswith("cuda"):          # FP32 as nnlab's default: no TF32 anywhere
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    net, params = build_network(torch, preset)
    try:
        usage = {}
        if args.way == "eager":
            times, loss, usage = time_steps(torch, preset, net, args)
        else:
            times, loss = time_captured(torch, preset, net, args)
    except (RuntimeError, ValueError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise Failure(EXIT_RUNTIME, "step", f"the PyTorch step ({args.way}) failed at batch {args.batch}: "
                      f"{first}") from None
    median = statistics.median(times)
    on_device = args.data_on_device or args.way != "eager"
    way = {"graph": WAY_GRAPH, "compile": WAY_COMPILE}.get(args.way, WAY_ON_DEVICE if on_device else WAY)
    return {"helper": "nnlab-torch-step", "torch": torch.__version__, "preset": args.preset,
            "device": args.device, "device_name": device_name(torch, args.device),
            "way": way, "timing": "blocks of steps" if args.way != "eager" else "each step",
            "tf32": False if args.device.startswith("cuda") else None,
            "data": "on the device" if on_device else "copied from pageable host memory every step",
            "threads": torch.get_num_threads(),
            "blas_threads": blas_threads,
            "batch": args.batch, "steps": args.steps,
            "warmup": args.warmup, "params": params,
            "us_per_step": round(median, 3), "us_per_step_median": round(median, 3),
            "us_per_step_mean": round(statistics.fmean(times), 3),
            "loss": loss if math.isfinite(loss) else None, **usage}


class Arguments(argparse.ArgumentParser):
    def error(self, message):
        raise Failure(EXIT_PRESET, "usage", f"nnlab-torch-step: {message}")


def parse_args(argv):
    ap = Arguments(prog="nnlab-torch-step", description=__doc__.splitlines()[0])
    ap.add_argument("preset", nargs="?")
    ap.add_argument("--probe", action="store_true", help="torch's version and CUDA, then exit")
    ap.add_argument("--batch", type=int)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="0: PyTorch's default")
    ap.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data-on-device", action="store_true",
                    help="the way framework-data-on-device: batches kept on the device, no copy in the step")
    ap.add_argument("--way", choices=("eager", "graph", "compile"), default="eager",
                    help="graph: the whole step as one CUDA graph; compile: torch.compile reduce-overhead")
    args = ap.parse_args(argv)
    if not args.probe and args.way != "eager" and not args.device.startswith("cuda"):
        ap.error(f"--way {args.way}: PyTorch's CUDA graphs need --device cuda")
    if not args.probe:
        if not args.preset or args.batch is None:
            ap.error("a preset file and --batch are needed (or --probe)")
        if args.batch < 1 or args.steps < 1 or args.warmup < 0 or args.threads < 0:
            ap.error("--batch and --steps must be >= 1, --warmup and --threads >= 0")
        if not re.fullmatch(r"cpu|cuda(:[0-9]+)?", args.device):
            ap.error(f"--device {args.device}: expected cpu, cuda or cuda:N")
    return args


# The pools a CPU step can run on besides torch's own: torch.set_num_threads
# bounds its intra-op pool, not the BLAS Debian's PyTorch calls for its
# matrix products (OpenBLAS's pthreads pool, sized to every core when the
# library loads). With --threads 1 alone, torch.mm of 1024^3 ran on both cores
# of the 2-core Zen 5 of 2026-11-29 (CPU time 1.98x the wall time, 234
# GFLOP/s; 1.00x and 123 GFLOP/s with OPENBLAS_NUM_THREADS=1). Set before
# torch is imported: the libraries read them when they load.
POOL_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


def bound_pools(threads):
    for var in POOL_VARS:
        os.environ[var] = str(threads)


def bound_blas_now(threads):
    """OpenBLAS's pool bounded in a process where it is loaded already (bench/torch_grid.py runs
    many thread counts in one; threads 0: left as it is); its own count after, None where this
    PyTorch loads no OpenBLAS."""
    import ctypes
    # Debian's libblas.so.3 may be OpenBLAS itself (the alternative Debian points it at)
    for name in ("libopenblas.so.0", "libopenblas.so", "libblas.so.3"):
        try:
            lib = ctypes.CDLL(name, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)   # only one loaded already
            if threads:
                lib.openblas_set_num_threads(ctypes.c_int(threads))
            return int(lib.openblas_get_num_threads())
        except (OSError, AttributeError):
            continue        # not loaded, or not OpenBLAS
    return None


def import_torch():
    try:
        import torch
    except Exception as e:      # ImportError, or a broken install's OSError
        # the runner names the python3; a user who ran this one knows it
        raise Failure(EXIT_NO_TORCH, "no-torch", f"cannot import torch: {type(e).__name__}: {e}",
                      python=sys.executable) from None
    return torch


def main(argv):
    try:
        args = parse_args(argv)
        preset = None if args.probe else Preset(args.preset)   # read before torch: no torch needed
        if args.threads:
            bound_pools(args.threads)
        torch = import_torch()
        if args.probe:
            result = {"helper": "nnlab-torch-step", "torch": torch.__version__,
                      "python": sys.version.split()[0], "cuda": bool(torch.cuda.is_available())}
        else:
            result = run(torch, preset, args)
    except Failure as f:
        print(json.dumps(f.as_json()), flush=True)
        return f.status
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
