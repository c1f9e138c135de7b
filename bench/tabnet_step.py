#!/usr/bin/env python3
"""bench/tabnet_step.py - the peer of presets/tabnet-regression.ini: pytorch-tabnet's
own network with seed 001's settings, and the training step TabNetRegressor runs:

    optimizer.zero_grad(); out, M_loss = net(x);
    loss = mse(out, y) - lambda_sparse * M_loss; loss.backward(); optimizer.step();
    loss.item()

(TabNetRegressor also clips gradients only when clip_value is set: not here.) The
network is pytorch_tabnet.tab_network.TabNet (input 84, output 1, n_d = n_a = 17,
n_steps = 1, gamma = 1.5, n_independent = 2, n_shared = 2, virtual_batch_size 128,
momentum 0.02, sparsemax masks, and the identity group matrix TabNetRegressor
passes when no features are grouped), Adam at lr 0.02, on random data kept in memory.
It prints one JSON line: the median microseconds per step over the timed steps,
and the parameter counts (all, and those the forward pass uses).

    python3 bench/tabnet_step.py --batch 1024 [--steps 50] [--warmup 5] [--threads N]
"""
import argparse
import importlib.metadata
import importlib.util
import json
import os
import statistics
import sys
import time


def _step_helper():
    """tools/nnlab-torch-step.py (standard library only until it runs a step): its bound_pools."""
    sys.dont_write_bytecode = True
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tools", "nnlab-torch-step.py")
    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location("nnlab_torch_step", path)
    helper = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helper)
    return helper


# --threads bounds every pool before torch loads them: torch.set_num_threads
# alone leaves OpenBLAS's (PyTorch's CPU matrix products) at every core.
_threads = next((int(v) for k, v in zip(sys.argv, sys.argv[1:]) if k == "--threads" and v.isdigit()),
                next((int(a[10:]) for a in sys.argv if a.startswith("--threads=") and a[10:].isdigit()), 0))
if _threads:
    _step_helper().bound_pools(_threads)

import torch  # noqa: E402
from pytorch_tabnet.tab_network import TabNet  # noqa: E402

FEATURES = 84
LAMBDA_SPARSE = 1e-3


def build():
    torch.manual_seed(0)
    return TabNet(input_dim=FEATURES, output_dim=1, n_d=17, n_a=17, n_steps=1, gamma=1.5,
                  n_independent=2, n_shared=2, virtual_batch_size=128, momentum=0.02,
                  mask_type="sparsemax",
                  group_attention_matrix=torch.eye(FEATURES))


def used_parameters(net, x):
    """Parameters that receive a gradient in one step: pytorch-tabnet creates a
    BatchNorm1d(84) in TabNetNoEmbeddings that its forward pass never calls."""
    net.zero_grad(set_to_none=True)
    out, m_loss = net(x)
    (out.sum() - LAMBDA_SPARSE * m_loss).backward()
    used = sum(p.numel() for p in net.parameters() if p.grad is not None)
    net.zero_grad(set_to_none=True)
    return used


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    net = build().train()
    pool = 8  # batches already in memory, cycled: no data loader in the timing
    xs = torch.randn(pool, a.batch, FEATURES)
    ys = torch.randn(pool, a.batch, 1)
    total = sum(p.numel() for p in net.parameters())
    used = used_parameters(net, xs[0])
    optimizer = torch.optim.Adam(net.parameters(), lr=0.02)
    mse = torch.nn.MSELoss()
    times = []
    for step in range(a.warmup + a.steps):
        x, y = xs[step % pool], ys[step % pool]
        t0 = time.perf_counter()
        optimizer.zero_grad()
        out, m_loss = net(x)
        loss = mse(out, y) - LAMBDA_SPARSE * m_loss
        loss.backward()
        optimizer.step()
        loss.item()
        if step >= a.warmup:
            times.append(time.perf_counter() - t0)
    print(json.dumps({"peer": "pytorch-tabnet", "tabnet": importlib.metadata.version("pytorch-tabnet"), "torch": torch.__version__,
                      "threads": torch.get_num_threads(), "blas_threads": _threads or None, "batch": a.batch, "steps": a.steps,
                      "params": total, "params_used": used,
                      "us_per_step": round(statistics.median(times) * 1e6, 1)}))


if __name__ == "__main__":
    sys.exit(main())
