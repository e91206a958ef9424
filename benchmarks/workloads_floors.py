"""The floor under two targets: the fastest hand-written derivatives found for
the workloads whose target ratio s2s-ad does not reach, timed side by side
with the function, s2s-ad's derivative and the first hand-written one.

    python benchmarks/run.py floors

A target is only worth chasing in the generator if some Python reaches it.
Each row's variants are other ways a person would write the same derivative
(checked against central differences by tests/test_bench_floors.py):

* Horner's gradient (target: ``s2s_ad.grad`` within 2x the forward). Besides
  the taped reverse loop that s2s-ad writes and ``horner_hand`` is, a *mixed*
  one: the derivative in ``x`` carried forward beside the value (one more
  multiply-add a step, no tape), the coefficients' derivatives, the powers of
  ``x``, made by a second loop; and the same with the powers appended then
  reversed.
* The JVP of the list written by index (target: ``s2s_ad.jvp`` within 2x): the
  first loop's value and tangent lists made by comprehensions, and the items
  read once into locals.

The other targets at their floor (the JVPs of Horner, the recurrence and the
50-term expression) are in the loop and scalar tables, whose ``hand_jvp`` are
already the tightest forms found (docs/benchmarks.md, "the floor of forward
mode in CPython").
"""

from __future__ import annotations

import math
import statistics
import timeit

from harness import _t, loop_counts
from workloads_loops import (HORNER_ARGS, PREFIX_ARGS, horner, horner_hand, prefix_writes,
                             prefix_writes_jvp_hand)


def horner_mixed(c, x):
    # d/dx carried forward beside the value; d/dc[i] = x ** (n - 1 - i) by a second loop
    s = 0.0
    ds = 0.0
    for i in range(len(c)):
        ds = ds * x + s
        s = s * x + c[i]
    n = len(c)
    dc = [0.0] * n
    p = 1.0
    for i in range(n - 1, -1, -1):
        dc[i] = p
        p *= x
    return dc, ds


def horner_mixed_appends(c, x):
    s = 0.0
    ds = 0.0
    for ci in c:
        ds = ds * x + s
        s = s * x + ci
    dc = []
    p = 1.0
    for _ in c:
        dc.append(p)
        p *= x
    dc.reverse()
    return dc, ds


def prefix_writes_jvp_comprehensions(xs, a, dxs, da):
    ys = [x * a for x in xs]
    dys = [dx * a + x * da for x, dx in zip(xs, dxs)]
    for i in range(1, len(xs)):
        p = ys[i - 1]
        ys[i] += p * a
        dys[i] += dys[i - 1] * a + p * da
    return sum(ys), sum(dys)


def prefix_writes_jvp_locals(xs, a, dxs, da):
    n = len(xs)
    ys = [0.0] * n
    dys = [0.0] * n
    for i in range(n):
        x = xs[i]
        ys[i] = x * a
        dys[i] = dxs[i] * a + x * da
    for i in range(1, n):
        p = ys[i - 1]
        ys[i] += p * a
        dys[i] += dys[i - 1] * a + p * da
    return sum(ys), sum(dys)


PREFIX_TANGENTS = ([math.sin(0.3 * k) for k in range(len(PREFIX_ARGS[0]))], 0.7)

ROUNDS = 60
BUDGET = 3.0


def _rows():
    import s2s_ad

    c, x = HORNER_ARGS
    g = s2s_ad.grad(horner, wrt=(0, 1))
    xs, a = PREFIX_ARGS
    dxs, da = PREFIX_TANGENTS
    j = s2s_ad.jvp(prefix_writes)
    yield ("horner gradient, 100 floats", {
        "forward": lambda: horner(c, x),
        "s2s_ad.grad": lambda: g(c, x),
        "hand, taped": lambda: horner_hand(c, x),
        "hand, mixed": lambda: horner_mixed(c, x),
        "hand, mixed, appends": lambda: horner_mixed_appends(c, x),
    })
    yield ("[0.0] * n by index, jvp, n=1,000", {
        "forward": lambda: prefix_writes(xs, a),
        "s2s_ad.jvp": lambda: j(xs, a, dxs=dxs, da=da),
        "hand": lambda: prefix_writes_jvp_hand(xs, a, dxs, da),
        "hand, comprehensions": lambda: prefix_writes_jvp_comprehensions(xs, a, dxs, da),
        "hand, locals": lambda: prefix_writes_jvp_locals(xs, a, dxs, da),
    })


def _samples(calls, budget=BUDGET, rounds=ROUNDS):
    """Every round's per-call time of each contender, interleaved and rotated
    as harness.interleave does (it keeps the fastest only; the median is
    printed here too)."""
    numbers, n_rounds = loop_counts(calls, budget, rounds)
    labels = list(calls)
    timers = {k: timeit.Timer(calls[k]) for k in labels}
    out = {k: [] for k in labels}
    for r in range(n_rounds):
        k0 = r % len(labels)
        for k in labels[k0:] + labels[:k0]:
            out[k].append(timers[k].timeit(numbers[k]) / numbers[k])
    return out


def report() -> str:
    lines = ["each contender / the forward pass: fastest round, median of rounds "
             f"({ROUNDS} interleaved rounds at most)"]
    for name, calls in _rows():
        samples = _samples(calls)
        fwd = samples["forward"]
        best, mid = min(fwd), statistics.median(fwd)
        cells = [f"{k} {min(v) / best:.2f}x/{statistics.median(v) / mid:.2f}x"
                 for k, v in samples.items() if k != "forward"]
        lines.append(f"{name:<34} forward {_t(best):>9}   " + "; ".join(cells))
    return "\n".join(lines)
