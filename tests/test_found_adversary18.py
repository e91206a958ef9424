"""Adversarial programs of round 18: joins of three lists or more, one of
them of a length known only when the code runs (``ys + xs + ys``, ``[x] +
xs + [x * x]``: Python adds from the left, so one side of the outer join is
the inner join), and ``checkpoint=True`` over code that joins, stacks or
sorts such lists outside any loop it writes (the loops those expressions
stand for are not the code's, and are left taped). Each derivative is
compared with central differences in float64 of the function itself
(second derivatives with central differences of the gradient)."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient as _fd
from tests.modules import import_source

JOINS_SRC = '''
import numpy as np


def three_lists(x, n: int):
    xs = [x[k] for k in range(n)]
    ys = [x[k] * x[k] for k in range(n)]
    zs = ys + xs + ys
    return sum(zs) * zs[1]


def displays_around(x, n: int):
    xs = [x * k for k in range(n)]
    zs = [x] + xs + [x * x]
    return sum(zs) * zs[len(zs) - 1]


def in_a_loop(x, n: int):
    s = 0.0
    for i in range(2):
        xs = [x * (k + i) for k in range(n)]
        zs = xs + [x] + xs
        s = s + sum(zs) * zs[1]
    return s


def joined_three(xs, ys):
    return xs + ys + xs


def in_a_helper(x, n: int):
    zs = joined_three([x * k for k in range(n)], [x * x])
    return sum(zs) * x


def read_in_a_while_loop(x, n: int):
    xs = [x * k for k in range(n)]
    zs = xs + [x] + xs
    k = 0
    s = 0.0
    while k < len(zs):
        s = s + zs[k] * zs[len(zs) - 1 - k]
        k = k + 1
    return s


def in_both_arms(x, n: int):
    xs = [x * k for k in range(n)]
    if x > 0:
        zs = xs + [x] + xs
        s = sum(zs) * zs[1]
    else:
        ws = [x * x] + xs + xs[1:]
        s = sum(ws) * ws[1]
    return s


def four_into_an_array(v, n: int):
    xs = [v[k] * v[k] for k in range(n)]
    zs = xs + xs[1:] + [v[0]] + xs
    return np.sum(np.array(zs) ** 2)


def concatenated(v, n: int):
    xs = [v * k for k in range(n)]
    zs = xs + xs[1:] + [v]
    return np.sum(np.concatenate(zs) ** 2)
'''

V = np.array([0.3, -0.5, 0.8, 1.1])
JOINS = {"three_lists": (V, 3), "displays_around": (0.7, 3), "in_a_loop": (0.7, 3),
         "in_a_helper": (0.7, 3), "read_in_a_while_loop": (0.7, 3), "in_both_arms": (0.7, 3),
         "four_into_an_array": (V, 3), "concatenated": (V[:3], 3)}
NEGATIVE = {"in_both_arms": (-0.7, 3)}
"""The else arm of in_both_arms."""


def _first_order(api, f, args):
    if api == "grad":
        return s2s_ad.grad(f, wrt=0)(*args)
    if api == "checkpoint":
        return s2s_ad.grad(f, wrt=0, checkpoint=True)(*args)
    if api == "vjp":
        return s2s_ad.vjp(f, *args)[1](1.0)[0]
    x, name = args[0], "d" + f.__code__.co_varnames[0]
    out = np.zeros(np.shape(x))
    for k in np.ndindex(np.shape(x)):  # one unit tangent at a time
        e = np.zeros(np.shape(x))
        e[k] = 1.0
        out[k] = s2s_ad.jvp(f, wrt=0)(*args, **{name: e if np.ndim(x) else 1.0})[1]
    return out


@pytest.mark.parametrize("case", sorted(JOINS) + ["in_both_arms, else"])
@pytest.mark.parametrize("api", ["grad", "checkpoint", "vjp", "jvp", "hvp"])
def test_a_join_of_three_lists_of_a_run_time_length(tmp_path, case, api):
    """``ys + xs + ys``: the inner join is a list of a run-time length too,
    joined again (before: refused as 'a list of any length ... is used where
    a number is expected; ... sum() it', at code that sums it; and with the
    inner join's names not reserved, an inner join of an inner join iterated
    over the list it appended to)."""
    name = case.split(",")[0]
    src = import_source(tmp_path, JOINS_SRC, f"found_adversary18_joins_{name}")
    f = getattr(src, name)
    args = NEGATIVE[name] if case.endswith("else") else JOINS[name]
    want = _fd(f, list(args), 0)
    if api == "hvp":
        x = args[0]
        v = np.linspace(0.3, -0.2, np.size(x)).reshape(np.shape(x)) if np.ndim(x) else 0.7
        h = 1e-5
        want = (_fd(f, [x + h * v, *args[1:]], 0) - _fd(f, [x - h * v, *args[1:]], 0)) / (2 * h)
        got = s2s_ad.hvp(f, wrt=0)(*args, v)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5)
        return
    got = _first_order(api, f, args)
    np.testing.assert_allclose(np.asarray(got, dtype=float), want, rtol=1e-6, atol=1e-8)


def test_a_join_of_three_lists_from_the_command_line(tmp_path):
    """The CLI's module of a function joining three lists, imported in a
    fresh interpreter without s2s-ad, agrees with central differences."""
    from tests.modules import cli_grad

    src = import_source(tmp_path, JOINS_SRC, "found_adversary18_cli_ref")
    got = cli_grad(tmp_path, JOINS_SRC, "three_lists", [V, 3])
    np.testing.assert_allclose(got[0], _fd(src.three_lists, [V, 3], 0), rtol=1e-6, atol=1e-8)


EXPRESSION_LOOPS_SRC = '''
import numpy as np


def two_lists(x, n: int):
    xs = [x * k for k in range(n)]
    zs = xs + [x]
    return sum(zs) * zs[1]


def concatenated(v, n: int):
    xs = [v * k for k in range(n)]
    return np.sum(np.concatenate(xs) ** 2)


def stacked(v, n: int):
    xs = [v * k for k in range(n)]
    return np.sum(np.array(xs) ** 2) + np.sum(np.stack(xs, axis=1) * v[0])


def sorted_by_key(x, n: int):
    xs = [x * (k - 1.5) for k in range(n)]
    ys = sorted(xs, key=lambda t: t * t)
    return ys[0] * ys[n - 1] + max(xs, key=abs) * x


def beside_a_loop(x, n: int):
    xs = [x * k for k in range(n)]
    zs = xs + [x]
    s = 0.0
    for k in range(3):
        s = s * x + sum(zs) * zs[k]
    return s
'''
EXPRESSION_POINTS = {"two_lists": (0.7, 3), "concatenated": (V[:3], 3), "stacked": (V[:3], 3),
                     "sorted_by_key": (0.7, 4), "beside_a_loop": (0.7, 3)}


@pytest.mark.parametrize("name", sorted(EXPRESSION_POINTS))
def test_checkpoint_leaves_the_loops_of_joins_stacks_and_sorts_taped(tmp_path, name):
    """``checkpoint=True`` checkpoints the loops the code writes: the loops
    ``xs + ys``, ``np.concatenate``/``np.array``/``np.stack`` of a list of a
    run-time length and ``sorted``/``max`` with a key stand for are taped, as
    a comprehension's are (before: refused, 'cannot checkpoint this loop:
    line 6 appends to a list', at a line without a loop)."""
    src = import_source(tmp_path, EXPRESSION_LOOPS_SRC, f"found_adversary18_ckpt_{name}")
    f = getattr(src, name)
    args = EXPRESSION_POINTS[name]
    got = s2s_ad.grad(f, wrt=0, checkpoint=True)(*args)
    np.testing.assert_allclose(np.asarray(got), _fd(f, list(args), 0), rtol=1e-6, atol=1e-8)


PARAM_JOINS_SRC = '''
def display_first(xs, a):
    zs = [a] + xs
    return sum(zs) * zs[1]


def display_between(xs, a):
    zs = [a] + xs + [a * a] + xs
    t = 0.0
    for z in zs:
        t = t * 0.5 + z * a
    return t


def display_last(xs, a):
    s = 0.0
    k = 0
    while k < 2:
        zs = xs + [a * k]
        s = s + zs[len(zs) - 1] * zs[0]
        k = k + 1
    return s
'''


@pytest.mark.parametrize("name", ["display_first", "display_between", "display_last"])
@pytest.mark.parametrize("api", ["grad", "checkpoint", "vjp"])
def test_a_list_parameter_joined_to_a_list_display(tmp_path, name, api):
    """``[a] + xs`` with ``xs`` a list parameter: the join says ``xs`` is a
    list, and ``grad`` (which lowers a parameter as a number until the code
    says otherwise) lowers it again as one (before: refused, 'a list is used
    where a number is expected; index it, unpack it or sum() it', at the
    join; ``vjp``, which lowers for the call's arguments, agreed already)."""
    src = import_source(tmp_path, PARAM_JOINS_SRC, f"found_adversary18_param_joins_{name}")
    f = getattr(src, name)
    xs, a = [0.3, -0.5, 0.8], 0.7
    h = 1e-6
    for i in range(2):
        if i == 0:
            want = [(f(xs[:k] + [xs[k] + h] + xs[k + 1:], a)
                     - f(xs[:k] + [xs[k] - h] + xs[k + 1:], a)) / (2 * h) for k in range(3)]
        else:
            want = (f(xs, a + h) - f(xs, a - h)) / (2 * h)
        if api == "vjp":
            got = s2s_ad.vjp(f, list(xs), a)[1](1.0)[i]
        else:
            got = s2s_ad.grad(f, wrt=i, checkpoint=api == "checkpoint" or None)(list(xs), a)
        np.testing.assert_allclose(np.asarray(got, dtype=float), want, rtol=1e-6, atol=1e-8)
