"""The hand-written JVPs the benchmarks time s2s-ad's forward mode against
(``hand_jvp`` of benchmarks/workloads_scalar.py and workloads_loops.py) are
right: value and tangent against the function and its central difference
along the benchmark's own direction (0.5 in every differentiated input) and
along a random one. A wrong reference would make the floor they show wrong."""

import os
import random
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)

import workloads_loops  # noqa: E402
import workloads_scalar  # noqa: E402

CASES = [w for m in (workloads_scalar, workloads_loops) for w in m.WORKLOADS
         if w.hand_jvp is not None]


def _which(w) -> list:
    if w.wrt is None:
        return [i for i, a in enumerate(w.args) if not isinstance(a, int)]
    return list(w.wrt) if isinstance(w.wrt, (list, tuple)) else [w.wrt]


def _moved(w, which, direction, h):
    args = list(w.args)
    for i, d in zip(which, direction):
        a = args[i]
        args[i] = [x + h * dx for x, dx in zip(a, d)] if isinstance(a, list) else a + h * d
    return args


@pytest.mark.parametrize("w", CASES, ids=[w.name for w in CASES])
@pytest.mark.parametrize("kind", ["benchmark direction", "random direction"])
def test_hand_written_jvp_agrees_with_central_differences(w, kind):
    which = _which(w)
    rng = random.Random(7)
    direction = [[(0.5 if kind.startswith("bench") else rng.uniform(-1, 1)) for _ in w.args[i]]
                 if isinstance(w.args[i], list)
                 else (0.5 if kind.startswith("bench") else rng.uniform(-1, 1)) for i in which]
    value, tangent = w.hand_jvp(*w.args, *direction)
    assert value == pytest.approx(w.fn(*w.args), rel=1e-12, abs=1e-12)
    h = 1e-6
    diff = (w.fn(*_moved(w, which, direction, h))
            - w.fn(*_moved(w, which, direction, -h))) / (2 * h)
    assert tangent == pytest.approx(diff, rel=1e-6, abs=1e-6)
