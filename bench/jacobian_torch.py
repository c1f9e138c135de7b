#!/usr/bin/env python3
"""bench/jacobian_torch.py - seed 002's measurement, repeatable: the time of
torch.autograd.functional.jacobian of the 1 -> 20 -> 20 -> 400 tanh MLP at
val inputs in (0, 1) shaped (val, 1), as the seed ran it.

    jacobian_torch.py --val 100 [--vectorize] [--threads N] [--device cpu|cuda]
                      [--repeat N] [--check DIR]

Prints one JSON line: {"torch": version, "val": ..., "vectorize": ...,
"seconds": best of the repeats, "seconds_all": [...], "threads": ...}.
--check DIR loads what `nnlab jacobian --dump DIR` wrote (linearN.weight,
linearN.bias, x) into the same network and prints the largest difference
between PyTorch's Jacobian and nnlab's (jacobian_blocks.npy) instead.
"""
import argparse
import json
import time

import torch
import torch.nn as nn


class NetX(nn.Module):
    """The seed's network, verbatim."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(1, 20)
        self.fc2 = nn.Linear(20, 20)
        self.out = nn.Linear(20, 400)

    def forward(self, x):
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        return self.out(x)


def check(net, d, device):
    import numpy as np
    for i, layer in enumerate((net.fc1, net.fc2, net.out), start=1):
        layer.weight.data = torch.from_numpy(np.load(f"{d}/linear{i}.weight.npy")).to(device)
        layer.bias.data = torch.from_numpy(np.load(f"{d}/linear{i}.bias.npy")).to(device)
    x = torch.from_numpy(np.load(f"{d}/x.npy")).to(device)
    blocks = torch.from_numpy(np.load(f"{d}/jacobian_blocks.npy"))
    j = torch.autograd.functional.jacobian(net, x, vectorize=True).cpu()   # (val, 400, val, 1)
    diag = torch.stack([j[i, :, i, :] for i in range(x.shape[0])])
    off = j.clone()
    for i in range(x.shape[0]):
        off[i, :, i, :] = 0
    print(json.dumps({"max_difference": float((diag - blocks).abs().max()),
                      "offdiag_max": float(off.abs().max()), "val": x.shape[0]}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--val", type=int, default=100)
    ap.add_argument("--vectorize", action="store_true")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--check", metavar="DIR")
    a = ap.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    device = torch.device(a.device)
    torch.manual_seed(0)
    net = NetX().to(device)
    if a.check:
        check(net, a.check, device)
        return
    times = []
    for _ in range(a.repeat):
        t = torch.reshape(torch.rand(a.val, requires_grad=True), (a.val, 1)).to(device)
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        j = torch.autograd.functional.jacobian(lambda t_: net(t_), t, vectorize=a.vectorize)
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        assert j.shape == (a.val, 400, a.val, 1)
    print(json.dumps({"torch": torch.__version__, "val": a.val, "vectorize": a.vectorize,
                      "device": a.device, "threads": torch.get_num_threads(),
                      "seconds": min(times), "seconds_all": times}))


if __name__ == "__main__":
    main()
