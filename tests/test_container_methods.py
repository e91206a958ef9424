"""Methods of lists and dicts known while lowering (``d.get``, ``d.update``,
``dict(a=x)``, ``xs.insert``, ``xs.reverse``, ``xs.pop(i)``: s2s_ad/frontend/
container_methods.py), dict comprehensions, keys made by f-strings and ``str``
(``params[f"W{i}"]`` in a loop over layers, which is then unrolled), and
``math.isnan``/``isinf``/``isfinite`` in checks. Each was refused ("`d` is a
local value", "dict comprehensions are not supported", "f-strings are
supported as the message of a check", "`math.isnan` has no derivative
rule"). Every derivative against central differences, in helpers and loops,
with ``jvp`` and ``jvp(grad)``, NumPy code and dict parameters."""

from __future__ import annotations

import math

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient
from tests.modules import cli_grad, import_source
from tests.scalar_checks import assert_derivatives

SRC = '''
import math

import numpy as np


def gets(x):
    d = {"a": x, "b": math.sin(x)}
    return d["a"] * d.get("b") + d.get("c", 2.0) * d.get("a", 0.0)


def made_by_dict(x):
    d = dict(a=x, b=x * x)
    e = dict(d, c=math.exp(x))
    e.update(a=3.0 * x)
    e.update({"d": e["a"] * e["b"]})
    return e["a"] + e["c"] * d["a"] + e["d"]


def list_moves(x):
    xs = [x, 2.0 * x, math.cos(x)]
    xs.insert(1, x * x)
    xs.reverse()
    first = xs.pop(0)
    xs.pop(-1)
    ys = [math.sin(x), x, 0.3]
    ys.sort()
    zs = [x * x, -x, 1.0]
    zs.sort(key=lambda t: t * t, reverse=True)
    return first * xs[0] + xs[-1] * 3.0 + len(xs) + ys[0] * 2.0 + ys[2] + zs[0] * zs[1]


def dict_comprehension(x):
    ws = {"w1": x, "w2": x * x}
    grads = {k: v * 2.0 for k, v in ws.items()}
    scaled = {f"s{i}": x * i + 1.0 for i in range(3)}
    return sum(grads[k] * ws[k] for k in ws) + scaled["s2"] * scaled["s1"]


def keyed_layers(x):
    p = {"w0": x, "w1": math.sin(x), "w2": 0.5}
    h = x
    for i in range(3):
        h = math.tanh(p[f"w{i}"] * h + p["w" + str(i)])
    return h


def checked(x):
    if math.isnan(x) or math.isinf(x) or not math.isfinite(x * x):
        raise ValueError(f"x is {x}")
    return x * math.exp(x)


def made_in_loop_and_arm(x):
    s = 0.0
    for j in range(3):
        xs = [x, 2.0, x * x * (j + 1.0)]
        xs.reverse()
        xs.insert(0, x)
        d = dict(a=x)
        d.update(b=2.0 * x * j)
        s = s + xs.pop(1) * xs[0] + d.get("b", 0.0)
    if x > 0.0:
        ys = [x * x, 0.5, x]
        ys.sort()
        s = s + ys[0] + ys[2] * 2.0
    return s


def in_helpers(x):
    s = 0.0
    for k in range(2):
        s = s + gets(x * (k + 1.0)) + list_moves(x) * made_by_dict(x)
    return s + dict_comprehension(x) * keyed_layers(x) + checked(x)


def mlp(params, x):
    h = x
    for i in range(2):
        h = np.tanh(params[f"W{i}"] @ h + params.get(f"b{i}", 0.0))
    return np.sum(h * h) * params.get("scale", 1.0)


def sgd_step(params, x):
    grads = {k: 2.0 * v for k, v in params.items()}
    new = {k: params[k] - 0.1 * grads[k] for k in params}
    return mlp(new, x)
'''

SCALAR = ["made_in_loop_and_arm", "gets", "made_by_dict", "list_moves", "dict_comprehension", "keyed_layers",
          "checked", "in_helpers"]


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(tmp_path_factory.mktemp("container_methods"), SRC,
                         "container_methods_src")


@pytest.mark.parametrize("name", SCALAR)
def test_scalar(mod, name):
    assert_derivatives(getattr(mod, name), 0.6)


def _params():
    rng = np.random.default_rng(3)
    return {"W0": rng.normal(size=(3, 3)), "b0": rng.normal(size=3),
            "W1": rng.normal(size=(2, 3))}


@pytest.mark.parametrize("name", ["mlp", "sgd_step"])
def test_dict_of_arrays(mod, name):
    f = getattr(mod, name)
    params, x = _params(), np.array([0.3, -1.1, 0.8])
    g = s2s_ad.grad(f)(params, x)
    assert set(g) == set(params)
    for k in params:
        def at(v, k=k):
            return f({**params, k: v}, x)
        assert np.allclose(g[k], fd_gradient(at, [params[k]], 0), rtol=1e-6, atol=1e-9), k


def test_cli_module(mod, tmp_path):
    (got,) = cli_grad(tmp_path, SRC, "in_helpers", [0.6])
    f, h = mod.in_helpers, 1e-6
    assert np.isclose(got, (f(0.6 + h) - f(0.6 - h)) / (2 * h), rtol=1e-6)


def test_check_raises_where_python_does(mod):
    grad = s2s_ad.grad(mod.checked)
    for bad in (math.nan, math.inf, 1e200):
        with pytest.raises(ValueError):
            mod.checked(bad)
        with pytest.raises(ValueError):
            grad(bad)


REFUSED = '''
def reversed_in_loop(x, n: int):
    xs = [x, 2.0 * x]
    for i in range(n):
        xs.reverse()
    return xs[0]


def popped_in_branch(x):
    xs = [x, 2.0 * x]
    if x > 0.0:
        xs.pop(0)
    return xs[0]


def update_argument(d, x):
    d.update(a=x)
    return d["a"]
'''


def test_changes_where_they_cannot_be_followed(tmp_path):
    """A change made while lowering inside a loop the code keeps, or in an
    arm, would be made once on every path: refused, located."""
    mod = import_source(tmp_path, REFUSED, "container_methods_refused")
    with pytest.raises(s2s_ad.SourceError, match=r"container_methods_refused.py:5:\d+.*"
                                                 r"inside a loop or a branch"):
        s2s_ad.grad(mod.reversed_in_loop)(0.5, 3)
    with pytest.raises(s2s_ad.SourceError, match=r"container_methods_refused.py:12:\d+"):
        s2s_ad.grad(mod.popped_in_branch)(0.5)
    with pytest.raises(s2s_ad.S2SError, match=r"container_methods_refused.py:17:\d+"):
        s2s_ad.grad(mod.update_argument, wrt=None)({"a": 1.0}, 0.5)
