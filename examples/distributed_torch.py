"""Data-parallel training of an adjit kernel's parameters with torch.distributed.

The kernel predicts ``y = a sin(b x + c) + d x`` for every sample; its four
parameters are one torch tensor, fitted to noisy samples of a known curve.
Every process holds a shard of the batch, runs the kernel inside PyTorch
(``adjit.torch.op``: the backward is adjit's adjoint), and the gradients are
summed over the processes with ``all_reduce``, so each step is the step of
one process on the whole batch, and every process keeps the same parameters.

    python examples/distributed_torch.py                    # 2 processes, gloo (CPU)
    python examples/distributed_torch.py --nprocs 4 --steps 500
    torchrun --nproc-per-node 2 examples/distributed_torch.py   # or started by torchrun
    python examples/distributed_torch.py --backend nccl     # GPUs: NCCL all-reduces, adjit on the GPUs
    python examples/distributed_torch.py --backend nccl --nprocs 1   # one GPU, a group of one

``--device`` says where the data, the parameters and adjit's kernel live:
``cpu``, or ``cuda`` (each process its own GPU: ``cuda:LOCAL_RANK``, or
``cuda:N`` for one process); the default is the CPU with gloo and the GPU
with NCCL (``$ADJIT_EXAMPLE_DEVICE`` overrides it). On a GPU the kernel and
its adjoint run there (``adjit.torch.op`` on CUDA tensors, on torch's
stream) and NCCL all-reduces the gradients where they are; with NCCL and
``--device cpu`` they are copied to the GPU for the all-reduce and back.
``--nprocs 1`` runs one process without torch.distributed, except with
NCCL, which then runs a group of one. ``--out params.json`` writes the final
parameters and the loss curve (``tests/python/interop/test_distributed.py``
compares them with one process on the whole batch).
"""
from __future__ import annotations

import argparse
import gc
import json
import logging
import math
import os
import socket
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import adjit
import adjit.torch

log = logging.getLogger("adjit.examples.distributed_torch")

TRUE_PARAMS = (1.5, 2.0, 0.3, -0.4)       # a, b, c, d of the curve the data come from
INITIAL_PARAMS = (1.0, 1.8, 0.0, 0.0)


@adjit.kernel
def predict(x: adjit.array(dtype=adjit.float64), params: adjit.array(dtype=adjit.float64),
            y: adjit.array(dtype=adjit.float64)):
    i = adjit.tid()
    t = x[i]
    y[i] = params[0] * adjit.sin(params[1] * t + params[2]) + params[3] * t


predict_op = adjit.torch.op(predict, outputs="y")   # y shaped like x, one thread per sample


def make_data(n: int, seed: int = 0, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """The whole batch: the same on every process (a fixed seed), on ``device``."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3.0, 3.0, n)
    a, b, c, d = TRUE_PARAMS
    y = a * np.sin(b * x + c) + d * x + 0.05 * rng.standard_normal(n)
    return torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)


def shard(n: int, rank: int, world_size: int) -> slice:
    """The contiguous part of the batch that process ``rank`` trains on."""
    per = math.ceil(n / world_size)
    return slice(min(rank * per, n), min((rank + 1) * per, n))


def train(rank: int = 0, world_size: int = 1, steps: int = 200, n: int = 4096, lr: float = 0.1,
          comm_device: torch.device | None = None, device: torch.device | str | None = None) -> dict:
    """Trains the parameters on this process's shard, all-reducing the
    gradients when torch.distributed is initialized. The loss is the mean
    squared error over the whole batch: each process adds its samples'
    squared errors divided by the whole batch's size. ``device``: where the
    data, the parameters and the kernel live (default: the CPU)."""
    device = torch.device(device or "cpu")
    x, y = make_data(n, device=device)
    part = shard(n, rank, world_size)
    x, y = x[part].contiguous(), y[part].contiguous()
    params = torch.nn.Parameter(torch.tensor(INITIAL_PARAMS, dtype=torch.float64, device=device))
    collectives = dist.is_available() and dist.is_initialized()
    if collectives:  # (the same anyway: every process starts from rank 0's)
        params.data.copy_(_collective(dist.broadcast, params.data, comm_device, src=0))
    optimizer = torch.optim.SGD([params], lr=lr, momentum=0.9)
    losses = []
    for step in range(steps):
        optimizer.zero_grad()
        loss = ((predict_op(x, params) - y) ** 2).sum() / n
        loss.backward()
        total = loss.detach()
        if collectives:
            # the whole batch's gradient, and its loss (to log)
            params.grad.copy_(_collective(dist.all_reduce, params.grad, comm_device, op=dist.ReduceOp.SUM))
            total = _collective(dist.all_reduce, total, comm_device, op=dist.ReduceOp.SUM)
        optimizer.step()
        losses.append(float(total))
        if rank == 0 and (step % max(steps // 10, 1) == 0 or step == steps - 1):
            log.info("step %4d  loss %.6f  params %s", step, losses[-1],
                     np.array2string(params.detach().cpu().numpy(), precision=4))
    return {"params": params.detach().cpu().numpy().tolist(), "losses": losses, "world_size": world_size,
            "device": str(device)}


def _collective(fn, tensor: torch.Tensor, comm_device, **kwargs) -> torch.Tensor:
    """Runs the collective ``fn`` on a copy of ``tensor`` on ``comm_device``
    (NCCL's GPU; gloo: where the tensor is) and returns that copy, on the
    tensor's device."""
    data = tensor.to(comm_device, copy=True) if comm_device is not None else tensor.clone()
    fn(data, **kwargs)
    return data.to(tensor.device)


def _devices(args, rank: int) -> tuple[torch.device | None, torch.device]:
    """The collectives' device (NCCL: this process's GPU; gloo: None) and
    the training's (``--device``)."""
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    wanted = args.device or os.environ.get("ADJIT_EXAMPLE_DEVICE") or ("cuda" if args.backend == "nccl" else "cpu")
    device = torch.device(wanted)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", local_rank)
    comm_device = None
    if args.backend == "nccl":
        comm_device = device if device.type == "cuda" else torch.device("cuda", local_rank)
    for d in (device, comm_device):
        if d is not None and d.type == "cuda" and not torch.cuda.is_available():
            raise SystemExit(f"{d} needs a CUDA GPU, and torch sees none (use --backend gloo --device cpu)")
    if comm_device is not None:
        torch.cuda.set_device(comm_device)
    return comm_device, device


def worker(rank: int, world_size: int, args, init_method: str) -> None:
    """One process: joins the group, trains, and (rank 0) writes the result."""
    logging.basicConfig(level=logging.INFO, format=f"[rank {rank}] %(message)s")
    comm_device, device = _devices(args, rank)
    dist.init_process_group(args.backend, init_method=init_method, rank=rank, world_size=world_size)
    try:
        result = train(rank, world_size, args.steps, args.n, args.lr, comm_device, device)
        if rank == 0:
            log.info("final loss %.6f (true parameters %s)", result["losses"][-1], TRUE_PARAMS)
            if args.out is not None:
                Path(args.out).write_text(json.dumps(result))
    finally:
        dist.destroy_process_group()
        # Free the process group's objects now, while the interpreter is whole:
        # left to interpreter shutdown, gloo's worker threads are torn down in
        # a race that can abort the process (seen with torch 2.13 on the CPU).
        gc.collect()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nprocs", type=int, default=2, help="processes to start (default %(default)s)")
    parser.add_argument("--backend", choices=("gloo", "nccl"), default="gloo",
                        help="torch.distributed backend: gloo (CPU) or nccl (GPUs)")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--n", type=int, default=4096, help="samples in the whole batch")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--device", default=None,
                        help="where the data, parameters and kernel live: cpu, cuda or cuda:N (default: cpu with "
                             "gloo, cuda with nccl; $ADJIT_EXAMPLE_DEVICE overrides the default)")
    parser.add_argument("--out", type=Path, default=None,
                        help="write the final parameters and losses (JSON) here")
    args = parser.parse_args()
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # started by torchrun
        worker(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args, "env://")
    elif args.nprocs == 1 and args.backend == "nccl":  # a group of one, in this process
        worker(0, 1, args, f"tcp://127.0.0.1:{free_port()}")
    elif args.nprocs == 1:
        logging.basicConfig(level=logging.INFO, format="%(message)s")
        _, device = _devices(args, 0)
        result = train(0, 1, args.steps, args.n, args.lr, device=device)
        if args.out is not None:
            args.out.write_text(json.dumps(result))
    else:
        init_method = f"tcp://127.0.0.1:{free_port()}"
        mp.spawn(worker, args=(args.nprocs, args, init_method), nprocs=args.nprocs, join=True)


if __name__ == "__main__":
    main()
