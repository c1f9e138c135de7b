"""nnlab_torch_net: an nnlab preset's network as a torch Module, for
nnlab-torch-step.py (beside it, in the source tree's tools/ and in the
installed pkglibexecdir).

Each layer kind of nnlab (src/core/layers/*.c) as PyTorch runs it, with its
shape inferred as nnlab infers it (so `in` may be left out), the graph's
`input`, `inputs` and `weights` keys, and for what PyTorch has no layer of
(ghost batch norm, GLU, sparsemax and its entropy term) pytorch-tabnet's
code, since TabNet's write-up timed pytorch-tabnet. The sections come from
nnlab-torch-step.py's Section, whose errors name the file, the section and
the key. torch is passed in, imported by the caller.
"""
import math

FROM_DATA = -1                  # a layer reference to the data (nnlab's NN_FROM_DATA)


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
