"""Benchmark harness: times workloads side by side in one run and prints ratios.

A workload is a function, a hand-written gradient of it, and arguments. For
each, the harness times the original function, s2s-ad's generated gradient,
the hand-written gradient and — where installed — other AD tools, then prints
gradient/forward and generated/hand-written ratios.

The contenders of one workload are timed interleaved: each one's loop count is
calibrated once, so that a timed loop takes about ``budget / rounds`` seconds
(at least one call), then every round times each contender once, in a rotated
order, and each contender's figure is its fastest round::

    interleaved_times({"forward": f, "s2s-ad": g})
    -> {"forward": 6.6e-06, "s2s-ad": 1.2e-05}      # seconds per call

A burst of load on the shared machine then slows all contenders of a round
alike instead of one contender's whole measurement, so the ratios of a row
are measured side by side. Absolute times still vary with the machine.
"""

from __future__ import annotations

import time
import timeit
from dataclasses import dataclass, field
from typing import Callable


@dataclass
class Workload:
    name: str
    fn: Callable
    hand_grad: Callable | None
    """Same arguments as fn; returns the gradient(s) for ``wrt``."""
    args: tuple
    wrt: object = 0
    others: dict[str, Callable] = field(default_factory=dict)
    """Extra contenders: label -> zero-argument callable computing the gradient
    (set up by the workload module, e.g. autograd or JAX if installed)."""
    lengths: dict | None = None
    """Lengths of list parameters, given to ``s2s_ad.grad``: the code generated
    for those lengths (without, a list read by index and loops gets code for
    every length, which reads its length when it runs)."""
    hand_jvp: Callable | None = None
    """Forward mode by hand: fn's arguments, then the tangent of each ``wrt``
    parameter (positionally); returns ``(value, tangent)``."""


ROUNDS = 40
"""Rounds per workload when the contenders are fast enough."""
MIN_ROUNDS = 7
"""Rounds per workload however slow a contender is (its loops then hold one call)."""
BUDGET = 1.0
"""Seconds of timed loops per contender and workload, when the rounds fit in it."""


def loop_counts(calls: dict[str, Callable[[], object]], budget: float = BUDGET,
                rounds: int = ROUNDS, min_rounds: int = MIN_ROUNDS,
                timer: Callable[[], float] = time.perf_counter) -> tuple[dict[str, int], int]:
    """Calls per timed loop for each contender, and the number of rounds.

    A loop should take about ``budget / rounds`` s. Contenders slower than
    that get one call per loop, and the workload fewer rounds (as many as the
    budget holds for its slowest contender, never fewer than ``min_rounds``):
    a contender of milliseconds gets at least ``min_rounds`` samples.
    """
    per = {label: _per_call(call, timer) for label, call in calls.items()}
    n_rounds = max(min_rounds, min(rounds, int(budget / max(per.values()))))
    loop = budget / n_rounds
    return {label: max(1, round(loop / p)) for label, p in per.items()}, n_rounds


def _per_call(call: Callable[[], object], timer: Callable[[], float],
              at_least: float = 0.02) -> float:
    """A rough per-call time: one warm-up call, then loops doubling in length
    until one takes ``at_least`` s."""
    t = timeit.Timer(call, timer=timer)
    t.timeit(1)
    number = 1
    while True:
        elapsed = t.timeit(number)
        if elapsed >= at_least:
            return elapsed / number
        number *= 2


def interleave(calls: dict[str, Callable[[], object]], numbers: dict[str, int], rounds: int,
               timer: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Seconds per call of each contender: the fastest of ``rounds`` rounds,
    each round timing one loop of ``numbers[label]`` calls per contender,
    starting one contender further each round (so none is always first)."""
    labels = list(calls)
    timers = {label: timeit.Timer(calls[label], timer=timer) for label in labels}
    best = {label: float("inf") for label in labels}
    for r in range(rounds):
        k = r % len(labels)
        for label in labels[k:] + labels[:k]:
            n = numbers[label]
            best[label] = min(best[label], timers[label].timeit(n) / n)
    return best


def interleaved_times(calls: dict[str, Callable[[], object]], budget: float = BUDGET,
                      rounds: int = ROUNDS, min_rounds: int = MIN_ROUNDS,
                      timer: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Seconds per call of each contender, timed interleaved (see the module docstring)."""
    numbers, n_rounds = loop_counts(calls, budget, rounds, min_rounds, timer)
    return interleave(calls, numbers, n_rounds, timer)


def run(workloads: list[Workload], budget: float = BUDGET) -> list[dict]:
    import s2s_ad

    rows = []
    for w in workloads:
        g = s2s_ad.grad(w.fn, wrt=w.wrt, **({"lengths": w.lengths} if w.lengths else {}))
        calls = {"forward": lambda: w.fn(*w.args), "s2s-ad": lambda: g(*w.args)}
        row = {"name": w.name}
        if w.hand_grad is not None:
            row["agree"] = _max_difference(g(*w.args), w.hand_grad(*w.args))
            calls["hand"] = lambda: w.hand_grad(*w.args)
        calls.update(w.others)
        row.update(interleaved_times(calls, budget))
        rows.append(row)
    return rows


def _tangents(w: Workload, j, inspect) -> dict:
    import sys

    which = ([i for i, a in enumerate(w.args) if not isinstance(a, int)] if w.wrt is None
             else list(w.wrt) if isinstance(w.wrt, (list, tuple)) else [w.wrt])
    params = list(inspect.signature(w.fn).parameters)
    return {sys.intern("d" + params[i]):
            [0.5] * len(w.args[i]) if isinstance(w.args[i], list) else 0.5 for i in which}


def run_jvp(workloads: list[Workload], budget: float = BUDGET) -> list[dict]:
    """Forward mode: each workload's ``s2s_ad.jvp`` along the direction 0.5 in
    every ``wrt`` parameter, timed against the function itself. ``agree``
    compares the tangent with the hand-written gradient's dot product with
    that direction (an independent reference)."""
    import inspect
    import sys

    import numpy as np
    import s2s_ad

    rows = []
    for w in workloads:
        try:
            j = s2s_ad.jvp(w.fn, wrt=w.wrt, **({"lengths": w.lengths} if w.lengths else {}))
            j(*w.args, **_tangents(w, j, inspect))
        except Exception as exc:  # printed as the row, so one failure does not hide the others
            rows.append({"name": w.name, "error": f"{type(exc).__name__}: {str(exc)[:60]}"})
            continue
        if w.wrt is None:
            which = [i for i, a in enumerate(w.args) if not isinstance(a, int)]
        else:
            which = list(w.wrt) if isinstance(w.wrt, (list, tuple)) else [w.wrt]
        params = list(inspect.signature(w.fn).parameters)
        # the tangent of parameter p is the keyword d<p> (docs/forward.md),
        # interned as the names a user writes (`dx0=0.5`) are: a call then
        # matches keywords by identity, as it does for the user
        kwonly = [sys.intern("d" + params[i]) for i in which]
        direction = [[0.5] * len(w.args[i]) if isinstance(w.args[i], list) else 0.5
                     for i in which]
        seeds = dict(zip(kwonly[-len(which):], direction))
        row = {"name": w.name}
        if w.hand_grad is not None:
            grads = w.hand_grad(*w.args)
            grads = grads if isinstance(w.wrt, (list, tuple)) or w.wrt is None else (grads,)
            dot = sum(float(np.dot(np.ravel(g), np.ravel(v))) for g, v in zip(grads, direction))
            row["agree"] = abs(j(*w.args, **seeds)[1] - dot) / max(1.0, abs(dot))
        # the tangents as a call written out passes them (`j(*args, dx0=0.5, ...)`,
        # as docs/forward.md shows), and from a dict (`j(*args, **seeds)`), which
        # unpacks the dict into keywords on every call
        calls = {"forward": lambda: w.fn(*w.args), "jvp": _written_call(j, w.args, seeds),
                 "jvp **": lambda: j(*w.args, **seeds)}
        if calls["jvp"]() != calls["jvp **"]():
            rows.append({"name": w.name, "error": "the written call and the dict's differ"})
            continue
        if w.hand_jvp is not None:
            # the hand-written JVP must agree with s2s-ad's before it is timed
            value, tangent = w.hand_jvp(*w.args, *direction)
            got = j(*w.args, **seeds)
            row["hand agree"] = max(abs(got[0] - value), abs(got[1] - tangent)) \
                / max(1.0, abs(tangent))
            calls["hand"] = lambda: w.hand_jvp(*w.args, *direction)
        row.update(interleaved_times(calls, budget))
        rows.append(row)
    return rows


def _written_call(j, args: tuple, seeds: dict) -> Callable[[], object]:
    """``lambda: j(x, y, dx=..., dy=...)``: the arguments and the tangents
    written out in the call, as a user writes them (``j(*args, dx=...)``
    would build a dict of the keywords on every call, as ``**seeds`` does)."""
    space = {"_j": j, **{f"_a{i}": a for i, a in enumerate(args)},
             **{f"_v{i}": v for i, v in enumerate(seeds.values())}}
    written = [f"_a{i}" for i in range(len(args))] + [f"{k}=_v{i}" for i, k in enumerate(seeds)]
    return eval(f"lambda: _j({', '.join(written)})", space)


def report_jvp(rows: list[dict]) -> str:
    """The forward-mode table: ``agree`` is the tangent against the
    hand-written gradient's dot product with the direction; the hand-written
    JVP's own agreement with s2s-ad's is ``hand agree``."""
    lines = [f"{'workload (forward mode)':<34}{'forward':>11}{'jvp':>11}{'jvp/fwd':>9}"
             f"{'hand':>11}{'hand/fwd':>9}{'jvp/hand':>9}{'agree':>9}{'hand agree':>11}"
             f"{'jvp(**d)/fwd':>13}"]
    for r in rows:
        agree = f"{r['agree']:.0e}" if "agree" in r else "-"
        if "error" in r:
            lines.append(f"{r['name']:<34}  failed: {r['error']}")
            continue
        hand = ((f"{_t(r['hand']):>11}{r['hand'] / r['forward']:>8.2f}x"
                 f"{r['jvp'] / r['hand']:>8.2f}x") if "hand" in r else f"{'-':>11}{'-':>9}{'-':>9}")
        hand_agree = f"{r['hand agree']:.0e}" if "hand agree" in r else "-"
        lines.append(f"{r['name']:<34}{_t(r['forward']):>11}{_t(r['jvp']):>11}"
                     f"{r['jvp'] / r['forward']:>8.2f}x{hand}{agree:>9}{hand_agree:>11}"
                     f"{r['jvp **'] / r['forward']:>12.2f}x")
    return "\n".join(lines)


def _max_difference(a, b) -> float:
    """Largest relative difference between two gradients (nested tuples,
    lists or arrays): a benchmark of a wrong gradient would mean nothing."""
    import numpy as np

    fa = [np.asarray(x, dtype=float).ravel() for x in _leaves(a)]
    fb = [np.asarray(x, dtype=float).ravel() for x in _leaves(b)]
    if len(fa) != len(fb):
        return float("inf")
    worst = 0.0
    for x, y in zip(fa, fb):
        if x.shape != y.shape:
            return float("inf")
        if x.size:
            worst = max(worst, float(np.max(np.abs(x - y) / np.maximum(1.0, np.abs(y)))))
    return worst


def _leaves(x):
    if isinstance(x, (tuple, list)):
        for e in x:
            yield from _leaves(e)
    else:
        yield x


def report(rows: list[dict]) -> str:
    lines = [f"{'workload':<34}{'forward':>11}{'s2s-ad':>11}{'grad/fwd':>9}{'hand':>11}"
             f"{'s2s/hand':>9}{'agree':>9}  others (time, s2s-ad speed-up)"]
    for r in rows:
        hand = r.get("hand")
        ratio = f"{r['s2s-ad'] / hand:.2f}x" if hand else "-"
        others = [f"{k} {_t(v)} ({v / r['s2s-ad']:.1f}x)" + _own_ratio(r, k)
                  for k, v in r.items()
                  if k not in ("name", "forward", "s2s-ad", "hand", "agree")
                  and not k.endswith(OWN_FORWARD)]
        agree = f"{r['agree']:.0e}" if "agree" in r else "-"
        lines.append(f"{r['name']:<34}{_t(r['forward']):>11}{_t(r['s2s-ad']):>11}"
                     f"{r['s2s-ad'] / r['forward']:>8.2f}x"
                     f"{_t(hand) if hand else '-':>11}"
                     f"{ratio:>9}{agree:>9}"
                     f"  {'; '.join(others)}")
    return "\n".join(lines)


OWN_FORWARD = " forward"
"""A contender ``label`` may come with ``label + OWN_FORWARD``: that tool's
own forward pass, timed in the same rounds, so that its gradient/forward
ratio is printed beside s2s-ad's (``jax (jit) 26.3 ms (0.9x), its grad/fwd
1.42x``)."""


def _own_ratio(row: dict, label: str) -> str:
    own = row.get(label + OWN_FORWARD)
    return f", its grad/fwd {row[label] / own:.2f}x" if own else ""


def _t(seconds: float) -> str:
    if seconds < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.2f} ms"
