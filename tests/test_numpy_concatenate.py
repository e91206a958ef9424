"""np.concatenate's adjoint (a slice of the result's adjoint per operand, its
bounds the operands' lengths: ``len(x)`` along axis 0, ``np.shape(x)[axis]``
along another) in every position, against finite differences."""

import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
from array_oracle import assert_gradients, fd_gradient, rand
from modules import import_source, run_generated

RNG = np.random.default_rng(18)

SOURCE = '''import numpy as np


def cell(w, h, x):
    g = np.concatenate((x, h, x, h)) * w
    n = h.shape[0]
    return np.tanh(g[:n]) * g[n:2 * n] + np.sin(g[2 * n:3 * n]) - g[3 * n:] * g[:n]


def inner(w, h, x):
    return cell(w, h, x) * 2.0


def top(w, h, x):
    return np.sum(np.concatenate((x, h, x, h)) ** 2 * w)


def helper(w, h, x):
    return np.sum(cell(w, h, x) ** 2)


def helper_of_helper(w, h, x):
    return np.sum(inner(w, h, x) ** 2)


def loop(w, h, x):
    for _ in range(3):
        h = cell(w, h, x)
        x = np.cos(h)
    return np.sum(h * x)


def branch(w, h, x):
    if np.sum(x) > 0:
        t = np.concatenate([h * x, x])
    else:
        t = np.concatenate([x, h, h])
    return np.sum(np.sin(t)) * np.sum(w)


def with_list(w, h, x):
    t = np.concatenate([np.array([1.0, 2.0]), x * h, np.ones(1) * 3.0])
    return np.sum(t * t) + np.sum(w)


def matrices(w, h, x):
    a = np.concatenate((np.outer(x, h), np.outer(h, h)))
    b = np.concatenate((np.outer(x, h), np.outer(h, x)), axis=1)
    c = np.concatenate((np.outer(h, x), np.outer(x, x)), axis=-1)
    return np.sum(np.sin(a)) + np.sum(b * b) + np.sum(np.cos(c)) * np.sum(w)


def shadowed(w, h, len):
    return np.sum(np.concatenate((h, h * len)) ** 2 * w)
'''

NAMES = ["top", "helper", "helper_of_helper", "loop", "branch", "with_list", "matrices",
         "shadowed"]


def _args(name):
    n = 3
    w = rand(RNG, (4 * n,)) if name in ("top", "helper", "helper_of_helper", "loop") \
        else rand(RNG, (2 * n,)) if name == "shadowed" else rand(RNG, (2,))
    return [w, rand(RNG, (n,)), rand(RNG, (n,))]


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return import_source(tmp_path_factory.mktemp("concat"), SOURCE, "concat_src")


@pytest.mark.parametrize("name", NAMES)
def test_gradient(module, name):
    assert_gradients(getattr(module, name), _args(name), [0, 1, 2])


def test_negative_branch(module):
    w, h, x = _args("branch")
    assert_gradients(module.branch, [w, h, -np.abs(x) - 0.1], [0, 1, 2])


def test_lengths_by_len_along_axis_0_only(module):
    text = s2s_ad.gradient_source(module.matrices, wrt=[1])
    assert "[:len(" in text and ", :np.shape(" in text  # axis 0; axis 1 and -1
    shadowed = s2s_ad.gradient_source(module.shadowed, wrt=[1])
    assert "[:np.shape(h)[0]]" in shadowed and "[:len(" not in shadowed


def test_vjp(module):
    w, h, x = _args("helper")
    ct = rand(RNG, (3,))
    _, pullback = s2s_ad.vjp(module.cell, w, h, x)
    got = pullback(ct)

    def dotted(*a):
        return float(np.sum(module.cell(*a) * ct))
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, fd_gradient(dotted, [w, h, x], i), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", ["loop", "shadowed"])
def test_cli_module_in_a_fresh_interpreter(module, name, tmp_path):
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           f"{module.__file__}:{name}", "-o", str(tmp_path / "g.py")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    args = _args(name)
    got = run_generated(tmp_path, "g", f"grad_{name}", args)
    f = getattr(module, name)
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, fd_gradient(f, args, i), rtol=1e-5, atol=1e-7)
