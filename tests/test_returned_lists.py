"""Lists a helper returns whose adjoint arrives from the caller: returned
twice (``return ys, ys``: the two cotangent lists summed item by item, not
joined by ``+``), and a list parameter returned by a pair's forward function
(the gradient module of a function passing a list to a looping helper, read
back and differentiated in reverse mode: the parameter's adjoint starts as
the caller's cotangent, not as zeros). Each against central differences;
both gave a wrong gradient before (2026-12-06, found by the fuzzer's reverse
over reverse check)."""

import math

import numpy as np
import pytest

import s2s_ad
from tests.modules import import_source

SRC = '''
import math
from typing import NamedTuple

import numpy as np


class Out(NamedTuple):
    ys: list
    zs: list
    s: float


def in_dict(x, n):
    ys = [x]
    for i in range(n):
        ys.append(math.sin(ys[-1]) * x)
    return {"a": ys, "b": ys}


def dict_twice(x, n):
    d = in_dict(x, n)
    return d["a"][-1] * len(d["b"]) + sum(d["b"]) * d["a"][0]


def in_tuple(x, n):
    ys = [x]
    zs = [x * x]
    for i in range(n):
        ys.append(math.sin(ys[-1]) * x)
        zs.append(ys[-1] * zs[-1])
    return Out(ys, zs, x * 2.0)


def named_tuple(x, n):
    o = in_tuple(x, n)
    s = 0.0
    for k in range(len(o.zs)):
        s = s + o.zs[k] * o.ys[k]
    return s + sum(o.ys) * o.s


def beside_a_tuple(x, n):
    s = 0.0
    for k in range(3):
        p, ys = (x * (k + 1.0), x * x), in_dict(x, n)["a"]
        s = s + p[0] * ys[-1] + p[1] * sum(ys)
    return s


def grow(x, n):
    ys = [x]
    for i in range(n):
        ys.append(math.sin(ys[-1]) * x)
    return ys, ys


def twice(x, n):
    a, b = grow(x, n)
    return a[-1] * 2.0 + b[0] * a[0] + sum(b)


def grow_np(x, n):
    ys = [x]
    for i in range(n):
        ys.append(np.sin(ys[-1]) * x)
    return ys, ys


def twice_np(x, n):
    a, b = grow_np(x, n)
    return np.sum(a[-1] * 2.0 + b[0] * a[0])


def total(vs, w):
    t = 0.0
    for v in vs:
        t = t + math.sin(v) * w
    return t


def passed_on(x, w, n):
    xs = [x, w]
    for i in range(n):
        xs.append(x * w)
    return total(xs, w) + xs[-1] * w
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(str(tmp_path_factory.mktemp("returned")), SRC, "returned_lists_src")


@pytest.mark.parametrize("name", ["dict_twice", "named_tuple", "beside_a_tuple"])
@pytest.mark.parametrize("n", [0, 1, 3])
def test_lists_in_a_returned_structure(mod, name, n):
    """A dict holding one list twice, a NamedTuple of lists read by `len`,
    `sum` and index, a structure's list item in a loop."""
    fn, x = getattr(mod, name), 0.7
    want = (fn(x + 1e-6, n) - fn(x - 1e-6, n)) / 2e-6
    assert math.isclose(s2s_ad.grad(fn, wrt="x")(x, n), want, rel_tol=1e-6)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_list_returned_twice(mod, n):
    x = 0.7
    want = (mod.twice(x + 1e-6, n) - mod.twice(x - 1e-6, n)) / 2e-6
    assert math.isclose(s2s_ad.grad(mod.twice, wrt="x")(x, n), want, rel_tol=1e-6)
    _, pullback = s2s_ad.vjp(mod.twice, x, n)
    assert math.isclose(pullback(1.0)[0], want, rel_tol=1e-6)
    xs = np.array([0.7, -0.3])
    want = np.array([(mod.twice_np(xs + 1e-6 * e, n) - mod.twice_np(xs - 1e-6 * e, n)) / 2e-6
                     for e in np.eye(2)])
    np.testing.assert_allclose(s2s_ad.grad(mod.twice_np, wrt="x")(xs, n), want, rtol=1e-6)


@pytest.mark.parametrize("n", [0, 2])
def test_gradient_file_of_a_list_passed_to_a_looping_helper(mod, n, tmp_path):
    g = import_source(str(tmp_path), s2s_ad.gradient_source(mod.passed_on, wrt=("x", "w")),
                      f"passed_on_grad_{n}").grad_passed_on
    x, w, h = 0.6585, -0.6758, 1e-6
    for k in (0, 1):
        row = s2s_ad.grad(g, wrt=(0, 1), output=k)(x, w, n)
        want = [(g(x + h, w, n)[k] - g(x - h, w, n)[k]) / (2 * h),
                (g(x, w + h, n)[k] - g(x, w - h, n)[k]) / (2 * h)]
        np.testing.assert_allclose(row, want, rtol=1e-6, atol=1e-8)
