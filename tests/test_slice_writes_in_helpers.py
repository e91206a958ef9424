"""A slice written in place whose bounds a helper is given (``y[b:e] = v``,
``b`` and ``e`` its parameters): the value's adjoint is the written
elements' adjoint, copied before those elements' adjoint is zeroed in place.
A helper's parameters are lowered as numbers, so the bounds are values of no
int kind; the reverse sweep took two of them for integer arrays side by side,
read the elements with ``gather`` (a view for slices) and zeroed them in
place after: ``v`` got a gradient of zeros. Each program here, at the top
level, in a helper, in a loop and through ``vjp``, against central
differences."""

import numpy as np
import pytest

import s2s_ad
from tests.modules import import_source

SRC = '''
import numpy as np


def put(v, like, b, e):
    y = np.zeros_like(like)
    y[b:e] = v
    return y


def helper(v, w):
    y = put(v, w, 3, 6)
    return np.sum(y * w)


def helper_two(v, w, u):
    y = np.copy(put(v, w, 3, 6))
    y[0:3] = y[0:3] + u
    return np.sum(y * w * y)


def step(v, w, b, e):
    y = np.zeros_like(w)
    y[b:e] = v * v
    y[0:b] = y[0:b] + v
    return y, v * 2.0


def in_loop(v, w):
    s = 0.0
    for k in range(3):
        y, v = step(v, w, 3, 6)
        s = s + np.sum(y * w) * (k + 1.0)
    return s


def top(v, w, b: int, e: int):
    y = np.zeros_like(w)
    y[b:e] = v
    return np.sum(y * w)
'''

RNG = np.random.default_rng(4242)


def _fd(fn, args, k, h=1e-6):
    x = np.asarray(args[k], dtype=float)
    out = np.zeros_like(x)
    for j in range(x.size):
        up, down = list(args), list(args)
        d = np.zeros(x.size)
        d[j] = h
        up[k], down[k] = x + d.reshape(x.shape), x - d.reshape(x.shape)
        out.flat[j] = (fn(*up) - fn(*down)) / (2 * h)
    return out


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(str(tmp_path_factory.mktemp("slices")), SRC, "slice_writes_src")


@pytest.mark.parametrize("name, extra", [("helper", []), ("helper_two", [3]),
                                         ("in_loop", []), ("top", ["b", "e"])])
def test_gradient_of_a_slice_written_with_given_bounds(mod, name, extra):
    fn = getattr(mod, name)
    args = [RNG.normal(size=3), RNG.normal(size=6)]
    args += [RNG.normal(size=3) if x == 3 else (3 if x == "b" else 6) for x in extra]
    wrt = tuple(k for k, a in enumerate(args) if isinstance(a, np.ndarray))
    got = s2s_ad.grad(fn, wrt=wrt)(*args)
    for k, g in zip(wrt, got):
        np.testing.assert_allclose(g, _fd(fn, args, k), rtol=1e-6, atol=1e-8)
    assert np.any(got[0] != 0.0)


def test_vjp_of_the_helper_itself(mod):
    v, w = RNG.normal(size=3), RNG.normal(size=6)
    c = RNG.normal(size=6)
    value, pullback = s2s_ad.vjp(mod.put, v, w, 3, 6)
    np.testing.assert_allclose(value, mod.put(v, w, 3, 6))
    dv = pullback(c)[0]
    np.testing.assert_allclose(dv, _fd(lambda x: float(np.sum(mod.put(x, w, 3, 6) * c)), [v], 0),
                               rtol=1e-6, atol=1e-8)
    assert np.any(dv != 0.0)


# Reads and writes at indices and slice bounds a helper is given, in every
# form, the helper called once, in a loop and twice; its bounds unannotated
# (numbers) or annotated `int`. Each is differentiated or refused, located.
BODIES = {
    "write": "    y = np.zeros_like(w)\n    y[b:e] = v * g\n    return y",
    "write_add": "    y = np.zeros_like(w)\n    y[b:e] = v\n    y[0:b] = y[0:b] + v * g\n"
                 "    return y",
    "element": "    y = np.zeros_like(w)\n    y[b] = v[0] * g[0]\n    y[e - 1] = v[1]\n    return y",
    "two_indices": "    y = np.zeros((6, 6))\n    y[b, e - 1] = v[0] * g[1]\n    y[b:e, b] = v\n"
                   "    return y[0] + y[b]",
    "rows": "    y = np.zeros((6, 3))\n    y[b] = v * g\n    y[b + 1:e] = v\n"
            "    return np.sum(y, axis=1)",
    "read": "    return w[b:e] * v * g",
    "read_element": "    return v * w[b] + v * w[e - 1] * g",
    "augmented": "    y = np.zeros_like(w)\n    y[b:e] += v * g\n    y[b:e] += v\n    return y",
    "negative": "    y = np.zeros_like(w)\n    y[-e:-b] = v * g\n    return y",
    "step": "    y = np.zeros_like(w)\n    y[b - 3:e:2] = v * g\n    return y",
}
CALLERS = {
    "once": "def f(v, w):\n    y = h(v, w, 3, 6)\n    return np.sum(y * y * w[:np.size(y)])\n",
    "loop": "def f(v, w):\n    s = 0.0\n    for k in range(3):\n        y = h(v * (k + 1.0), w, 3, 6)\n"
            "        s = s + np.sum(y * w[:np.size(y)]) * np.sum(y)\n    return s\n",
    "twice": "def f(v, w):\n    y = h(v, w, 3, 6)\n    z = h(v * 2.0, w, 3, 6)\n    return np.sum(y * z)\n",
}


@pytest.mark.parametrize("annotated", [False, True])
@pytest.mark.parametrize("caller", sorted(CALLERS))
@pytest.mark.parametrize("body", sorted(BODIES))
def test_indices_a_helper_is_given(body, caller, annotated, tmp_path):
    head = "def h(v, w, b: int, e: int):\n" if annotated else "def h(v, w, b, e):\n"
    text = ("import numpy as np\n\n\n" + head + "    g = np.sin(v)\n" + BODIES[body] + "\n\n\n"
            + CALLERS[caller])
    f = import_source(str(tmp_path), text, f"given_{body}_{caller}_{annotated}").f
    args = [RNG.normal(size=3), RNG.normal(size=6)]
    try:
        got = s2s_ad.grad(f, wrt=(0, 1))(*args)
    except s2s_ad.SourceError as e:
        assert not annotated, str(e)  # an index lowered as a number: annotate it
        assert "annotate a parameter `i: int`" in str(e) and "^" in str(e), str(e)
        return
    for k in (0, 1):
        np.testing.assert_allclose(got[k], _fd(f, args, k), rtol=1e-6, atol=1e-8)
