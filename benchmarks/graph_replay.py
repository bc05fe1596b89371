"""Host cost per launch: replaying a captured graph of 100 small launches
against launching them (issue 26, item 2), in one run.

    python benchmarks/graph_replay.py [--device cpu]
"""
from __future__ import annotations

import argparse
import json
import time

import adjit as wp


@wp.kernel
def bump(y: wp.array(dtype=float), x: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = y[i] + x[i]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--launches", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    x, y = wp.ones(1, device=args.device), wp.zeros(1, device=args.device)
    wp.launch(bump, dim=1, inputs=[y, x])
    with wp.ScopedCapture() as capture:
        for _ in range(args.launches):
            wp.launch(bump, dim=1, inputs=[y, x])

    def best_us(run) -> float:
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(args.rounds):
                run()
            wp.synchronize()
            best = min(best, (time.perf_counter() - start) / (args.rounds * args.launches) * 1e6)
        return best

    def eager():
        for _ in range(args.launches):
            wp.launch(bump, dim=1, inputs=[y, x])

    replay = best_us(lambda: wp.capture_launch(capture.graph))
    eagerly = best_us(eager)
    print(json.dumps({"device": args.device, "launches_per_graph": args.launches,
                      "replay_us_per_launch": round(replay, 2), "eager_us_per_launch": round(eagerly, 2),
                      "eager_over_replay": round(eagerly / replay, 2)}, indent=1))


if __name__ == "__main__":
    main()
