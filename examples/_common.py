"""What every example shares: command-line options, logging, a progress bar
and matplotlib (both optional).

Each example is run as ``python examples/<name>.py [--small] [--out PATH]``
and writes one PNG (default ``examples/output/<name>.png``).
"""
import argparse
import logging
from pathlib import Path

log = logging.getLogger("adjit.examples")

OUTPUT_DIR = Path(__file__).resolve().parent / "output"


def parse_args(name: str, description: str, steps: int, small_steps: int, steps_help="optimization steps"):
    """Parses ``--out``, ``--small``, ``--steps N`` and ``-v``; sets up logging.

    ``steps`` is the default number of steps (of what: ``steps_help``),
    ``small_steps`` the number ``--small`` uses (a quick run, for tests).
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", type=Path, default=OUTPUT_DIR / f"{name}.png",
                        help="where to write the picture (default: %(default)s)")
    parser.add_argument("--small", action="store_true", help="a quick run on a small problem (for tests)")
    parser.add_argument("--steps", type=int, default=None,
                        help=f"{steps_help} (default {steps}, or {small_steps} with --small)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every step")
    args = parser.parse_args()
    if args.steps is None:
        args.steps = small_steps if args.small else steps
    # The examples log at INFO; -v also shows DEBUG lines and other libraries'
    # messages (adjit logs each kernel it compiles).
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s", datefmt="%H:%M:%S")
    log.setLevel(logging.DEBUG if args.verbose else logging.INFO)
    return args


def progress(iterable, desc: str):
    """A tqdm progress bar if tqdm is installed, else the plain iterable
    (the examples log their progress either way)."""
    try:
        from tqdm import tqdm
    except ImportError:
        return iterable
    # disable=None: no bar when the output is not a terminal (e.g. in tests)
    return tqdm(iterable, desc=desc, leave=False, disable=None)


def pyplot():
    """matplotlib.pyplot (drawing into files, no window), or None with a
    message if matplotlib is not installed: the example still runs and prints
    its numbers, but writes no picture."""
    try:
        import matplotlib
    except ImportError:
        log.warning("matplotlib is not installed, so no picture is written: pip install matplotlib")
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(fig, out: Path) -> None:
    """Writes a figure to ``out`` (creating its folder) and logs where."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    log.info("wrote %s", out)
