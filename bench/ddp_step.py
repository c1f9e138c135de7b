#!/usr/bin/env python3
"""ddp_step: an nnlab preset's training step in PyTorch DistributedDataParallel, timed.

The peer of `nnlab bench --ranks N` (bench/ranks.sh): N processes on this
machine (torch.multiprocessing), each a rank of a process group (gloo on the
CPU, NCCL on CUDA devices, one GPU a rank), each with the same network
(tools/nnlab_torch_net.py, built from the preset as nnlab-torch-step builds
it), wrapped in DistributedDataParallel (its buckets overlap the gradients'
all-reduce with backward), at --batch samples a rank (the global batch is
N x --batch, as nnlab's). A step is the framework way of nnlab-torch-step
with the data already in memory:

    optimizer.zero_grad(); out = net(x); loss = criterion(out, y) [+ aux];
    loss.backward()  # DDP sums the gradients here
    optimizer.step(); loss.item()

Each rank on cores // N threads (at least 1). Rank 0 prints one JSON line:
torch's version, the backend, ranks, per-rank and global batch, threads a
rank, and rank 0's median and mean microseconds per step (every rank waits
for the others at each sum, so rank 0's step is the group's). Exits 1 with
{"error": ...} when the step cannot run, 3 when torch cannot be imported.

    bench/ddp_step.py PRESET.ini --ranks N --batch B [--steps 20] [--warmup 3]
                      [--device cpu|cuda] [--seed S]
"""
import argparse
import importlib.util
import json
import os
import socket
import statistics
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.realpath(__file__))
TOOLS = os.path.join(HERE, "..", "tools")


def load_helper():
    """tools/nnlab-torch-step.py (its name has a '-'): the preset reader,
    the optimiser and the data, shared rather than copied."""
    sys.path.insert(0, TOOLS)
    spec = importlib.util.spec_from_file_location("nnlab_torch_step", os.path.join(TOOLS, "nnlab-torch-step.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_main(rank, args, port, out_path):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    helper = load_helper()
    from nnlab_torch_net import build_network
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    cuda = args.device == "cuda"
    dist.init_process_group("nccl" if cuda else "gloo", rank=rank, world_size=args.ranks)
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // args.ranks))
    torch.manual_seed(args.seed)
    device = torch.device(f"cuda:{rank}" if cuda else "cpu")
    preset = helper.Preset(args.preset)
    net, params = build_network(torch, preset)
    net = net.to(device).train()
    ddp = DDP(net, device_ids=[rank] if cuda else None)
    optimizer = helper.make_optimizer(torch, preset, ddp.parameters())
    criterion = torch.nn.CrossEntropyLoss() if preset.loss == "cross_entropy" else torch.nn.MSELoss()
    xs, ys = helper.make_data(torch, preset, args.batch, device)
    times = []
    for step in range(args.warmup + args.steps):
        x, y = xs[step % len(xs)], ys[step % len(ys)]
        t0 = time.perf_counter()
        optimizer.zero_grad()
        out, aux = ddp(x)
        loss = criterion(out, y)
        if aux is not None:
            loss = loss + aux
        loss.backward()
        optimizer.step()
        loss.item()
        if step >= args.warmup:
            times.append((time.perf_counter() - t0) * 1e6)
    if rank == 0:
        result = {"helper": "ddp_step", "torch": torch.__version__, "backend": dist.get_backend(),
                  "device": args.device, "preset": args.preset, "ranks": args.ranks, "batch": args.batch,
                  "global_batch": args.ranks * args.batch, "threads_per_rank": torch.get_num_threads(),
                  "params": params, "steps": args.steps, "warmup": args.warmup,
                  "us_per_step_median": round(statistics.median(times), 3),
                  "us_per_step_mean": round(statistics.fmean(times), 3)}
        with open(out_path, "w") as f:
            json.dump(result, f)
    dist.destroy_process_group()


def main(argv):
    ap = argparse.ArgumentParser(prog="ddp_step", description=__doc__.splitlines()[0])
    ap.add_argument("preset")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    try:
        import torch
        import torch.multiprocessing as mp
    except Exception as e:
        print(json.dumps({"error": f"cannot import torch: {type(e).__name__}: {e}"}))
        return 3
    if args.device == "cuda" and torch.cuda.device_count() < args.ranks:
        print(json.dumps({"error": f"{args.ranks} ranks need {args.ranks} CUDA devices; "
                          f"this PyTorch sees {torch.cuda.device_count()}"}))
        return 1
    out_path = f"/tmp/ddp_step.{os.getpid()}.json"
    try:
        mp.spawn(rank_main, args=(args, free_port(), out_path), nprocs=args.ranks, join=True)
        with open(out_path) as f:
            print(f.read(), flush=True)
    except Exception as e:
        first = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
        print(json.dumps({"error": f"the DDP step failed: {first}"}))
        return 1
    finally:
        if os.path.exists(out_path):
            os.unlink(out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
