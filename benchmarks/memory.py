"""Memory and time of gradients with and without checkpointing.

    python benchmarks/memory.py            # scalar recurrence 10^3..10^6, array state 10^3..10^5
    python benchmarks/memory.py --quick    # 10^3..10^4 only

Two loops, each differentiated taped (``checkpoint=False``) and checkpointed
with K snapshots (``checkpoint=K``):

* ``scalar``: ``y = sin(y) * a + y * 0.5``, n iterations; the tape holds two
  floats per iteration, the state is one float;
* ``array``: ``u = tanh(u * w + 0.1) + 0.5 * u`` on a 1,000-element array;
  the tape holds two arrays per iteration, the state is one array.

For each, it prints the peak memory of one gradient call (``tracemalloc``: the
Python and NumPy allocations the call makes, beyond what existed before it),
next to the prediction: the tape, n x bytes per iteration, when taped; K
snapshots of the state plus one block's tape when checkpointed. It prints
the forward runs of the loop body: counted (the body's ``sin``/``tanh``
calls, through a counting stand-in for ``math``/``numpy``) next to
revolve's count for K snapshots over blocks of iterations taped at once (32
for the scalar loop, 1 for the array: ``r*b - C(K+r, r-1)`` untaped block
runs for b blocks), plus one taped run per iteration, plus the forward
pass's own run of the last block. Times are the least CPU time of a few calls,
without tracemalloc or counting, against the taped gradient and the function itself;
the predicted time is the taped gradient's plus the extra forward runs at the
function's own speed per iteration.

A taped gradient whose predicted tape passes ``--max-tape`` (default 400 MB)
is not run: its row prints the prediction only.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import tracemalloc

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import s2s_ad  # noqa: E402
from s2s_ad.reverse import checkpoint  # noqa: E402


def scalar(y, a, n):
    for i in range(n):
        y = math.sin(y) * a + y * 0.5
    return y


def array(u, w, n):
    for i in range(n):
        u = np.tanh(u * w + 0.1) + 0.5 * u
    return np.sum(u)


ELEMENTS = 1000
FLOAT = 32                     # a taped float: list slot + float object
ARRAY = 8 * ELEMENTS + 112     # a 1,000-element float64 array with its header


class _Counting:
    """A module whose function ``name`` is counted (everything else passes through)."""

    def __init__(self, module, name):
        self._module, self._name, self.calls = module, name, 0
        real = getattr(module, name)

        def counted(*args, **kwargs):
            self.calls += 1
            return real(*args, **kwargs)

        setattr(self, name, counted)

    def __getattr__(self, attr):
        return getattr(self._module, attr)


def _compiled(fn, wrt, option, counting=None):
    """The generated gradient: as s2s-ad compiles it, or, with ``counting``
    (module, alias, function), run against a counting stand-in."""
    if counting is None:
        return s2s_ad.grad(fn, wrt=wrt, checkpoint=option), None
    module, alias, name = counting
    text = s2s_ad.gradient_source(fn, wrt=wrt, checkpoint=option,
                                  arrays=["u", "w"] if fn is array else ())
    stand_in = _Counting(module, name)
    ns: dict = {"__name__": "counted"}
    exec(compile(text, f"<counted {fn.__name__}>", "exec"), ns)
    ns[alias] = stand_in
    return ns[f"grad_{fn.__name__}"], stand_in


def _best(call, budget: float = 1.0, most: int = 5) -> float:
    """The least CPU time of up to ``most`` calls (CPU time: on a shared machine
    a call of 10 ms loses whole time slices to other processes, which wall
    time would count)."""
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < most and (not times or time.perf_counter() - start < budget):
        t = time.process_time()
        call()
        times.append(time.process_time() - t)
    return min(times)


def _peak(call) -> int:
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def predicted_runs(n: int, k: int | None, unit: int) -> int:
    """Forward runs of the body: taped, n; checkpointed, revolve's untaped
    runs over blocks of ``unit`` iterations, one taped run each and one more
    run of a block by the forward pass."""
    if k is None or n == 0:
        return n
    blocks = -(-n // unit)
    return unit * (checkpoint.forward_steps(blocks, k) + 1) + n


def _mb(b: float) -> str:
    return f"{b / 1e6:9.3f} MB"


def run(kind: str, lengths: list[int], budgets: list[int], max_tape: float) -> list[str]:
    rng = np.random.default_rng(0)
    if kind == "scalar":
        fn, wrt, counting = scalar, ("y", "a"), (math, "math", "sin")
        args = lambda n: (0.3, 0.9, n)  # noqa: E731
        per_iteration, state = 2 * FLOAT, FLOAT + 64  # a snapshot: (k, y) tuple + float + int
        unit = checkpoint.NUMBER_BLOCK  # iterations taped at once
    else:
        fn, wrt, counting = array, ("u", "w"), (np, "np", "tanh")
        u, w = rng.uniform(-1, 1, ELEMENTS), rng.uniform(-1, 1, ELEMENTS)
        args = lambda n: (u, w, n)  # noqa: E731
        per_iteration, state = 2 * ARRAY, ARRAY + 64
        unit = 1
    rows = [f"{'n':>9} {'gradient':>14} {'peak predicted':>16} {'peak measured':>16} "
            f"{'runs predicted':>15} {'runs counted':>13} {'time predicted':>14} {'time':>10} "
            f"{'x taped':>8} {'x forward':>9}"]
    for n in lengths:
        forward = _best(lambda: fn(*args(n)))
        taped_time = None
        for k in [None, *budgets]:
            label = "taped" if k is None else f"K={k} snapshots"
            if k is None:
                peak_pred = n * per_iteration
            else:
                peak_pred = min(k, max(n, 1)) * state + unit * per_iteration
            if k is None and peak_pred > max_tape:
                rows.append(f"{n:>9} {label:>14} {_mb(peak_pred):>16} {'not run':>16} "
                            f"{predicted_runs(n, k, unit):>15,} {'':>13} {'':>14} {'':>10} "
                            f"{'':>8} {'':>9}")
                continue
            g, _ = _compiled(fn, wrt, False if k is None else k)
            g(*args(2))
            elapsed = _best(lambda: g(*args(n)))
            counted_g, counter = _compiled(fn, wrt, False if k is None else k, counting)
            peak = _peak(lambda: counted_g(*args(n)))
            if k is None:
                taped_time = elapsed
            ratio = f"{elapsed / taped_time:8.2f}" if taped_time else f"{'':>8}"
            # the taped gradient plus the extra forward runs, each at the function's speed
            runs = predicted_runs(n, k, unit)
            guess = f"{(taped_time + forward * (runs - n) / n) * 1e3:12.1f}ms" \
                if taped_time and n else f"{'':>14}"
            rows.append(f"{n:>9} {label:>14} {_mb(peak_pred):>16} {_mb(peak):>16} "
                        f"{runs:>15,} {counter.calls:>13,} {guess} "
                        f"{elapsed * 1e3:8.1f}ms {ratio} {elapsed / forward:9.2f}")
    return rows


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="lengths 10^3 and 10^4 only")
    p.add_argument("--max-tape", type=float, default=400e6, metavar="BYTES",
                   help="do not run a taped gradient predicted to keep more (default 4e8)")
    p.add_argument("--snapshots", default="10,100", help="budgets K, comma-separated")
    opts = p.parse_args(argv)
    budgets = [int(k) for k in opts.snapshots.split(",")]
    load = f"load average {os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else ""
    print(f"Python {sys.version.split()[0]}; NumPy {np.__version__}; {load}")
    for kind, top in (("scalar", 6), ("array", 5)):
        lengths = [10 ** e for e in range(3, (4 if opts.quick else top) + 1)]
        print(f"\n== {kind}: " + ("y = sin(y) * a + y * 0.5" if kind == "scalar" else
                                   f"u = tanh(u * w + 0.1) + 0.5 * u, {ELEMENTS} elements"))
        for row in run(kind, lengths, budgets, opts.max_tape):
            print(row, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
