#!/usr/bin/env python3
"""bench/pytorch_step.py - the peer: one nnlab preset's training step in PyTorch.

Builds the network of an nnlab preset (the INI file itself, so both sides run
the same layers), keeps a batch-sized pool of random data in memory, and times
the step the write-ups time:

    optimizer.zero_grad(); out = net(x); loss = criterion(out, y);
    loss.backward(); optimizer.step(); loss.item()

It prints one JSON line: the median microseconds per step over the timed steps.

    python3 bench/pytorch_step.py PRESET.ini --batch 4 [--steps 200] [--warmup 20]
        [--threads N] [--device cpu|cuda]
"""
import argparse
import configparser
import json
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class MaxOverLength(nn.Module):
    def forward(self, x):
        return torch.max(x, dim=2)[0]


class View(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.shape = shape

    def forward(self, x):
        return x.view(-1, *self.shape)


class Mish(nn.Module):
    def forward(self, x):
        return F.mish(x)


def layer(sec):
    kind = sec["type"].strip()
    get = lambda key, default=None: int(sec[key]) if key in sec else default
    if kind == "linear":
        return nn.Linear(get("in"), get("out"))
    if kind == "conv2d":
        return nn.Conv2d(get("in"), get("out"), get("kernel"), stride=get("stride", 1), padding=get("padding", 0))
    if kind == "conv1d":
        return nn.Conv1d(get("in"), get("out"), get("kernel"), stride=get("stride", 1), padding=get("padding", 0))
    if kind == "maxpool2d":
        return nn.MaxPool2d(get("kernel"), stride=get("stride", get("kernel")))
    if kind == "maxpool1d":
        return nn.MaxPool1d(get("kernel"), stride=get("stride", get("kernel")))
    if kind == "maxlen":
        return MaxOverLength()
    if kind == "flatten":
        return nn.Flatten()
    if kind == "reshape":
        return View(tuple(int(d) for d in sec["shape"].strip().strip('"').split("x")))
    if kind == "relu":
        return nn.ReLU()
    if kind == "tanh":
        return nn.Tanh()
    if kind == "mish":
        return Mish()
    if kind == "dropout":
        return nn.Dropout(float(sec["p"]))
    raise SystemExit(f"unknown layer type {kind}")


def build(path):
    ini = configparser.ConfigParser(inline_comment_prefixes=(";", "#"))
    ini.read(path)
    layers = [s for s in ini.sections() if s.startswith("layer")]
    layers.sort(key=lambda s: int(s[5:]))
    net = nn.Sequential(*[layer(ini[s]) for s in layers])
    data = ini["data"]["set"].strip()
    shape = {"mnist": (1, 28, 28), "cifar10": (3, 32, 32)}.get(data)
    if shape is None:
        shape = (int(ini["data"].get("features", 84)),)
    opt = ini["optimizer"]
    kind = opt["type"].strip()
    lr = float(opt.get("lr", 0.001))
    wd = float(opt.get("weight_decay", 0))
    if kind == "adam":
        make_opt = lambda p: torch.optim.Adam(p, lr=lr, betas=(float(opt.get("beta1", 0.9)),
                                              float(opt.get("beta2", 0.999))), eps=float(opt.get("eps", 1e-8)),
                                              weight_decay=wd)
    else:
        make_opt = lambda p: torch.optim.SGD(p, lr=lr, momentum=float(opt.get("momentum", 0)), weight_decay=wd)
    loss = ini["train"]["loss"].strip()
    targets = int(ini["data"].get("targets", 1))
    return net, shape, make_opt, loss, targets


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("preset")
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    net, shape, make_opt, loss_kind, targets = build(a.preset)
    dev = torch.device(a.device)
    net = net.to(dev).train()
    optimizer = make_opt(net.parameters())
    # a pool of batches already in memory, cycled: no data loader in the timing
    pool = 8
    xs = torch.randn(pool, a.batch, *shape, device=dev)
    if loss_kind == "cross_entropy":
        criterion = nn.CrossEntropyLoss()
        ys = torch.randint(0, 10, (pool, a.batch), device=dev)
    else:
        criterion = nn.MSELoss()
        ys = torch.randn(pool, a.batch, targets, device=dev)
    times = []
    for step in range(a.warmup + a.steps):
        x, y = xs[step % pool], ys[step % pool]
        t0 = time.perf_counter()
        optimizer.zero_grad()
        out = net(x)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
        loss.item()
        dt = time.perf_counter() - t0
        if step >= a.warmup:
            times.append(dt)
    print(json.dumps({"peer": "pytorch", "torch": torch.__version__, "device": a.device,
                      "threads": torch.get_num_threads(), "batch": a.batch, "steps": a.steps,
                      "us_per_step": round(statistics.median(times) * 1e6, 1)}))


if __name__ == "__main__":
    sys.exit(main())
