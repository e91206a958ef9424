"""Functions of yours named like the pairs s2s-ad writes (``sq_fwd`` and
``sq_bwd``, ``cell_fwd_1`` and ``cell_bwd_1``) are helpers like any other.

Only a module s2s-ad wrote holds a forward/backward pair whose tape it made:
read as one before, ``sq_bwd(t, x)`` (the "tape" a tuple of the user's
``sq_fwd``) was refused as a backward function passed a tape not returned to
the caller, and ``sq_bwd((x, y), ...)`` likewise; renaming the functions made
them differentiable. Each gradient against central differences of the
function, also through the CLI's file in a fresh interpreter, and the second
derivative of that file against central differences of its gradient."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.modules import cli_grad, import_source

SOURCE = '''
import math


def sq_fwd(x):
    return x * x, (x, math.sin(x))


def sq_bwd(tape, dy):
    a, b = tape
    return a * b * dy


def f(x, y):
    v, t = sq_fwd(x)
    return v * sq_bwd(t, y) + t[1]


def g(x, y):
    return sq_bwd((x, y), x * y) + sq_fwd(y)[0]


def cell_fwd_1(x):
    return math.tanh(x), (x, x * x)


def cell_bwd_1(tape, d):
    u, v = tape
    return u * d + v


def h(x, y):
    acc = 0.0
    for k in range(3):
        out, tape = cell_fwd_1(x + k * y)
        acc = acc + out * cell_bwd_1(tape, y)
    return acc
'''

POINTS = [[0.7, 0.4], [-0.3, 1.1]]


def differences(fn, point, step=1e-6):
    out = []
    for k in range(len(point)):
        up, down = list(point), list(point)
        up[k] += step
        down[k] -= step
        out.append((np.asarray(fn(*up), dtype=float) - np.asarray(fn(*down), dtype=float))
                   / (2 * step))
    return np.array(out)


@pytest.mark.parametrize("name", ["f", "g", "h"])
def test_functions_named_like_pairs_are_helpers(name, tmp_path):
    fn = getattr(import_source(str(tmp_path), SOURCE, f"user_pairs_{name}"), name)
    for point in POINTS:
        got = np.array(s2s_ad.grad(fn, wrt=(0, 1))(*point), dtype=float)
        np.testing.assert_allclose(got, differences(fn, point), rtol=1e-6, atol=1e-8)
        from_file = cli_grad(tmp_path, SOURCE, name, point)
        np.testing.assert_allclose(np.array(from_file, dtype=float), got, rtol=1e-12,
                                   atol=1e-14)


@pytest.mark.parametrize("name", ["f", "h"])
def test_second_derivative_from_the_file(name, tmp_path):
    """The gradient file holds s2s-ad's pairs of the user's ``sq_fwd``
    (``sq_fwd_fwd``, ``sq_fwd_bwd``), which are read as pairs."""
    fn = getattr(import_source(str(tmp_path), SOURCE, f"user_pairs_second_{name}"), name)
    text = s2s_ad.gradient_source(fn, wrt=(0, 1))
    g = getattr(import_source(str(tmp_path), text, f"user_pairs_grad_{name}"), f"grad_{name}")
    point = POINTS[0]
    for row in range(2):
        part = s2s_ad.grad(g, wrt=(0, 1), output=row)(*point)

        def item(x, y, row=row):
            return g(x, y)[row]
        np.testing.assert_allclose(np.array(part, dtype=float), differences(item, point, 1e-5),
                                   rtol=1e-5, atol=1e-7)
