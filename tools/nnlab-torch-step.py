#!/usr/bin/env python3
"""nnlab-torch-step: an nnlab preset's training step in PyTorch, timed.

Reads the preset's INI file (man nnlab.ini(5)), builds the same network in
PyTorch (every layer kind nnlab has, the graph's `input`, `inputs` and
`weights` keys included), the same loss and optimiser with the preset's
values, and times the step the write-ups time, on data already on the device:

    optimizer.zero_grad(); out = net(x); loss = criterion(out, y) [+ aux];
    loss.backward(); optimizer.step(); loss.item()

It prints one JSON object on one line and exits with:
    0  the result: torch's version, the device, threads, batch, steps, the
       parameter count, the median and mean microseconds per step;
    1  {"error": ...}: the step could not run (no CUDA device, a batch
       PyTorch refuses, out of memory);
    2  {"error": ...}: the preset cannot be built (naming the file, the
       [layerN] section and the key) or the arguments are wrong;
    3  {"error": ...}: torch cannot be imported.

    nnlab-torch-step PRESET.ini --batch B [--steps 20] [--warmup 3]
                     [--device cpu|cuda] [--threads T] [--seed S]
    nnlab-torch-step --probe      (torch's version and whether CUDA is there)

Only the standard library and torch. nnlab's C runner (src/jobs/torch_step.c)
starts it, reads its JSON and checks its parameter count against nnlab's own.
"""
import argparse
import configparser
import json
import math
import re
import statistics
import sys
import time

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
FROM_DATA = -1


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


# ---------------------------------------------------------------- the network

def build_network(torch, preset):
    """The preset's graph as a torch Module: (module, parameter count)."""
    from torch import nn
    kinds = layer_kinds(torch)
    shapes, modules, sources = [], [], []
    for i, sec in enumerate(preset.layers):
        src = layer_sources(sec, i)
        ins = [preset.input_shape if s < 0 else shapes[s] for s in src]
        module, out_shape = kinds[sec.kind](sec, *ins)
        share_weights(sec, i, module, modules)
        shapes.append(out_shape)
        modules.append(module)
        sources.append(src)
    net = PresetNet(nn, modules, sources)
    return net, sum(p.numel() for p in net.parameters())


def layer_sources(sec, i):
    """0-based indices of the layers feeding layer i; -1 is the data
    (nn_layer_source: absent = the previous layer, the data for layer1)."""
    refs = sec.layer_pair("inputs") if sec.kind in ("add", "mul") else [sec.layer_ref("input")]
    out = []
    for ref in refs:
        if ref == FROM_DATA:
            out.append(-1)
        elif ref == 0:
            out.append(i - 1)
        elif ref - 1 >= i:
            raise sec.error("inputs" if sec.kind in ("add", "mul") else "input",
                            f"layer{ref} is not an earlier layer")
        else:
            out.append(ref - 1)
    return out


def share_weights(sec, i, module, modules):
    """weights = layerN: this layer uses [layerN]'s parameters (the same
    tensors, so they are counted and updated once)."""
    ref = sec.layer_ref("weights")
    if ref == 0:
        return
    if ref < 1 or ref - 1 >= i:
        raise sec.error("weights", "must name an earlier layer with parameters")
    owner = modules[ref - 1]
    for name, p in list(module.named_parameters(recurse=True)):
        theirs = dict(owner.named_parameters(recurse=True)).get(name)
        if theirs is None or theirs.shape != p.shape:
            raise sec.error("weights", f"layer{ref}'s parameters do not have this layer's shapes")
        parent = module
        *path, leaf = name.split(".")
        for part in path:
            parent = getattr(parent, part)
        setattr(parent, leaf, theirs)


def PresetNet(nn, modules, sources):
    """The module class is made once torch is imported (only --probe and the
    step need torch; the preset is read without it)."""
    class Net(nn.Module):
        """Runs the layers in order; each takes its sources' outputs. The
        auxiliary loss terms (sparsemax's entropy) come back beside the output."""

        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(modules)
            self.sources = sources

        def forward(self, x):
            outs, aux = [], None
            for layer, src in zip(self.layers, self.sources):
                y = layer(*[x if s < 0 else outs[s] for s in src])
                term = getattr(layer, "aux_loss", None)
                if term is not None:
                    t = term(y)
                    aux = t if aux is None else aux + t
                outs.append(y)
            return outs[-1], aux
    return Net()


def need_rank(sec, shape, rank, what):
    if len(shape) != rank:
        raise sec.error("type", f"needs {what} input, but its input is {'x'.join(map(str, shape))}")


def checked_in(sec, given_by_input):
    """`in` as given, else inferred; when given it must match."""
    given = sec.integer("in", None, 1)
    if given is not None and given != given_by_input:
        raise sec.error("in", f"{given}, but the input gives {given_by_input}")
    return given_by_input


def window_out(sec, size, kernel, stride, padding, what):
    padded = size + 2 * padding
    if padded < kernel:
        raise sec.error("kernel", f"{kernel} is larger than the {what} input ({padded})")
    return (padded - kernel) // stride + 1


def layer_kinds(torch):
    """kind -> (section, input shapes...) -> (module, output shape)."""
    from torch import nn
    import torch.nn.functional as F

    class Lambda(nn.Module):
        def __init__(self, fn, name):
            super().__init__()
            self.fn, self.name = fn, name

        def forward(self, *xs):
            return self.fn(*xs)

        def extra_repr(self):
            return self.name

    def linear(sec, shape):
        need_rank(sec, shape, 1, "a flat")
        n_in, n_out = checked_in(sec, shape[0]), sec.integer("out", None, 1)
        m = nn.Linear(n_in, n_out, bias=sec.boolean("bias", True))
        init = sec.choice("init", ("default", "xavier_normal"), "default")
        if sec.has("gain") and init != "xavier_normal":
            raise sec.error("gain", "applies only with init = xavier_normal")
        if init == "xavier_normal":
            nn.init.xavier_normal_(m.weight, gain=sec.real("gain", 1.0))
        return m, (n_out,)

    def conv(rank):
        def build(sec, shape):
            need_rank(sec, shape, rank, f"a {'(C, H, W)' if rank == 3 else '(C, L)'}")
            c_in, c_out = checked_in(sec, shape[0]), sec.integer("out", None, 1)
            k, s, p = sec.integer("kernel", None, 1), sec.integer("stride", 1, 1), sec.integer("padding", 0, 0)
            cls = nn.Conv2d if rank == 3 else nn.Conv1d
            out = tuple(window_out(sec, d, k, s, p, "padded") for d in shape[1:])
            return cls(c_in, c_out, k, stride=s, padding=p), (c_out,) + out
        return build

    def pool(rank):
        def build(sec, shape):
            need_rank(sec, shape, rank, f"a {'(C, H, W)' if rank == 3 else '(C, L)'}")
            k = sec.integer("kernel", None, 1)
            s = sec.integer("stride", k, 1)          # PyTorch's default: the kernel
            cls = nn.MaxPool2d if rank == 3 else nn.MaxPool1d
            out = tuple(window_out(sec, d, k, s, 0, "unpadded") for d in shape[1:])
            return cls(k, stride=s), (shape[0],) + out
        return build

    def maxlen(sec, shape):
        need_rank(sec, shape, 2, "a (C, L)")
        return Lambda(lambda x: torch.max(x, dim=2)[0], "max over length"), (shape[0],)

    def flatten(sec, shape):
        return nn.Flatten(), (math.prod(shape),)

    def reshape(sec, shape):
        want = sec.shape("shape")
        if math.prod(want) != math.prod(shape):
            raise sec.error("shape", f"holds {math.prod(want)} values, but the input {math.prod(shape)}")
        return Lambda(lambda x: x.reshape(x.shape[0], *want), f"reshape {want}"), want

    def same(make):
        return lambda sec, shape: (make(sec), shape)

    def dropout(sec):
        p = sec.real("p")
        if not 0 <= p < 1:
            raise sec.error("p", f"{p} must be in [0, 1)")
        return nn.Dropout(p)

    def merge(sec, a, b):
        if a != b:
            raise sec.error("inputs", f"the two inputs differ: {a} and {b}")
        if sec.kind == "mul":
            return Lambda(torch.mul, "mul"), a
        scale = sec.real("scale", 1.0)
        if scale == 1.0:
            return Lambda(torch.add, "add"), a
        return Lambda(lambda x, y: torch.mul(torch.add(x, y), scale), f"add x{scale}"), a

    def slice_(sec, shape):
        need_rank(sec, shape, 1, "a flat")
        lo, hi = sec.integer("from", 0, 0), sec.integer("to", None, 1)
        if hi > shape[0]:
            raise sec.error("to", f"{hi} is past the end: the input has {shape[0]} features")
        if lo >= hi:
            raise sec.error("from", f"{lo} must be below to = {hi}")
        return Lambda(lambda x: x[:, lo:hi], f"[:, {lo}:{hi}]"), (hi - lo,)

    def batchnorm(sec, shape):
        need_rank(sec, shape, 1, "a flat")
        return ghost_batch_norm(torch, sec, checked_in(sec, shape[0])), shape

    def glu(sec, shape):
        need_rank(sec, shape, 1, "a flat")
        if shape[0] % 2:
            raise sec.error("type", f"splits its input in two halves, but it has {shape[0]} features")
        half = shape[0] // 2
        # pytorch-tabnet's GLU_Layer: the first half times the sigmoid of the second
        return Lambda(lambda x: torch.mul(x[:, :half], torch.sigmoid(x[:, half:])), "glu"), (half,)

    def sparsemax(sec, shape):
        need_rank(sec, shape, 1, "a flat")
        return sparsemax_module(torch, sec.real("sparsity", 0.0)), shape

    return {
        "linear": linear, "conv2d": conv(3), "conv1d": conv(2),
        "maxpool2d": pool(3), "maxpool1d": pool(2), "maxlen": maxlen,
        "flatten": flatten, "reshape": reshape,
        "relu": same(lambda s: nn.ReLU()), "tanh": same(lambda s: nn.Tanh()),
        "mish": same(lambda s: Lambda(F.mish, "mish")), "dropout": same(dropout),
        "add": merge, "mul": merge, "slice": slice_, "batchnorm": batchnorm,
        "glu": glu, "sparsemax": sparsemax,
    }


def ghost_batch_norm(torch, sec, features):
    """BatchNorm1d over ghost batches, as pytorch-tabnet's GBN: the batch cut
    by torch.chunk into ceil(n / virtual_batch) chunks, each normalised on its
    own (virtual_batch 0: the whole batch at once)."""
    from torch import nn
    virtual = sec.integer("virtual_batch", 0, 0)
    momentum, eps = sec.real("momentum", 0.1), sec.real("eps", 1e-5)

    class GhostBatchNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm1d(features, momentum=momentum, eps=eps)

        def forward(self, x):
            if virtual == 0:
                return self.bn(x)
            chunks = x.chunk(int(math.ceil(x.shape[0] / virtual)), 0)
            return torch.cat([self.bn(c) for c in chunks], dim=0)
    return GhostBatchNorm()


def sparsemax_module(torch, sparsity):
    """pytorch-tabnet's sparsemax (sort, cumulative sum, threshold; its own
    backward), and with sparsity the term its training adds to the loss,
    sparsity * mean over samples of -sum M log(M + 1e-15)."""
    from torch import nn

    class SparsemaxFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x = x - x.max(dim=-1, keepdim=True)[0]
            srt = torch.sort(x, descending=True, dim=-1)[0]
            cumsum = srt.cumsum(-1) - 1
            rho = torch.arange(1, x.shape[-1] + 1, device=x.device, dtype=x.dtype)
            support = (rho * srt > cumsum).sum(dim=-1, keepdim=True)
            tau = cumsum.gather(-1, support - 1) / support.to(x.dtype)
            out = torch.clamp(x - tau, min=0)
            ctx.save_for_backward(support, out)
            return out

        @staticmethod
        def backward(ctx, dy):
            support, out = ctx.saved_tensors
            dx = dy.clone()
            dx[out == 0] = 0
            v_hat = dx.sum(dim=-1, keepdim=True) / support.to(out.dtype)
            return torch.where(out != 0, dx - v_hat, dx)

    class Sparsemax(nn.Module):
        def forward(self, x):
            return SparsemaxFunction.apply(x)

        def extra_repr(self):
            return f"sparsity={sparsity}"

    m = Sparsemax()
    if sparsity:
        m.aux_loss = lambda y: sparsity * torch.mean(torch.sum(-y * torch.log(y + 1e-15), dim=1))
    return m


# ---------------------------------------------------------------- the step

def make_optimizer(torch, preset, params):
    kind, args = preset.optimizer
    return (torch.optim.Adam if kind == "adam" else torch.optim.SGD)(params, **args)


def make_data(torch, preset, batch, device):
    """A few batches kept on the device and cycled: no loader in the timing."""
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
    xs, ys = make_data(torch, preset, args.batch, device)
    times = []
    for step in range(args.warmup + args.steps):
        x, y = xs[step % len(xs)], ys[step % len(ys)]
        t0 = time.perf_counter()
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
    return times, value


def device_name(torch, device):
    if device.startswith("cuda"):
        return torch.cuda.get_device_name(torch.device(device))
    return "cpu"


def run(torch, preset, args):
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise Failure(EXIT_RUNTIME, "device", f"--device {args.device}: this PyTorch sees no CUDA device "
                      f"(torch {torch.__version__}, built {'with' if torch.version.cuda else 'without'} CUDA)")
    net, params = build_network(torch, preset)
    try:
        times, loss = time_steps(torch, preset, net, args)
    except (RuntimeError, ValueError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise Failure(EXIT_RUNTIME, "step", f"the PyTorch step failed at batch {args.batch}: {first}") from None
    median = statistics.median(times)
    return {"helper": "nnlab-torch-step", "torch": torch.__version__, "preset": args.preset,
            "device": args.device, "device_name": device_name(torch, args.device),
            "threads": torch.get_num_threads(), "batch": args.batch, "steps": args.steps,
            "warmup": args.warmup, "params": params,
            "us_per_step": round(median, 3), "us_per_step_median": round(median, 3),
            "us_per_step_mean": round(statistics.fmean(times), 3),
            "loss": loss if math.isfinite(loss) else None}


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
    args = ap.parse_args(argv)
    if not args.probe:
        if not args.preset or args.batch is None:
            ap.error("a preset file and --batch are needed (or --probe)")
        if args.batch < 1 or args.steps < 1 or args.warmup < 0 or args.threads < 0:
            ap.error("--batch and --steps must be >= 1, --warmup and --threads >= 0")
        if not re.fullmatch(r"cpu|cuda(:[0-9]+)?", args.device):
            ap.error(f"--device {args.device}: expected cpu, cuda or cuda:N")
    return args


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
