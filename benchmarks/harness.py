"""Benchmark harness: times workloads side by side in one run and prints ratios.

A workload is a function, a hand-written gradient of it, and arguments. For
each, the harness times (best of several repeats of a timed loop) the
original function, s2s-ad's generated gradient, the hand-written gradient,
and — where installed — other AD tools, then prints gradient/forward and
generated/hand-written ratios. Absolute times vary on a shared machine; the
ratios, measured in the same run, are what the targets are about.
"""

from __future__ import annotations

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
    """Lengths of list parameters, given to ``s2s_ad.grad`` so the timing is of
    the generated code, not of the per-call dispatch on the lists' lengths."""


def best_time(call: Callable[[], object], budget: float = 0.2, repeat: int = 5) -> float:
    """Seconds per call: the best of ``repeat`` timed loops of ~budget/repeat s."""
    timer = timeit.Timer(call)
    n, t = timer.autorange()
    per = t / n
    number = max(1, int(budget / repeat / per))
    return min(timer.repeat(repeat=repeat, number=number)) / number


def run(workloads: list[Workload], budget: float = 0.2) -> list[dict]:
    import s2s_ad

    rows = []
    for w in workloads:
        g = s2s_ad.grad(w.fn, wrt=w.wrt, **({"lengths": w.lengths} if w.lengths else {}))
        t_f = best_time(lambda: w.fn(*w.args), budget)
        t_g = best_time(lambda: g(*w.args), budget)
        row = {"name": w.name, "forward": t_f, "s2s-ad": t_g}
        if w.hand_grad is not None:
            row["agree"] = _max_difference(g(*w.args), w.hand_grad(*w.args))
            row["hand"] = best_time(lambda: w.hand_grad(*w.args), budget)
        for label, call in w.others.items():
            row[label] = best_time(call, budget)
        rows.append(row)
    return rows


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
        others = [f"{k} {_t(v)} ({v / r['s2s-ad']:.1f}x)" for k, v in r.items()
                  if k not in ("name", "forward", "s2s-ad", "hand", "agree")]
        agree = f"{r['agree']:.0e}" if "agree" in r else "-"
        lines.append(f"{r['name']:<34}{_t(r['forward']):>11}{_t(r['s2s-ad']):>11}"
                     f"{r['s2s-ad'] / r['forward']:>8.2f}x"
                     f"{_t(hand) if hand else '-':>11}"
                     f"{ratio:>9}{agree:>9}"
                     f"  {'; '.join(others)}")
    return "\n".join(lines)


def _t(seconds: float) -> str:
    if seconds < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.2f} ms"
