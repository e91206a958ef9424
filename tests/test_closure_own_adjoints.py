"""Gradient modules of ``np.sort``, ``np.pad``, ``np.take_along_axis``,
``np.tensordot`` and ``np.kron`` read back from their files and
differentiated again: their adjoints call s2s-ad's ``sort_adjoint``,
``pad_adjoint``, ``take_along_axis_adjoint``, ``tensordot_adjoint`` and
``kron_adjoint``, which were refused when read back (a non-constant ``axis``,
``np.asarray`` with ``dtype=``, ``np.zeros_like`` with a computed ``dtype``,
``in`` a list, a tuple used as a number). ``jvp`` of the
gradient function against central differences of it, and ``grad`` of a
caller of it against central differences of the caller."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient, make_function
from tests.modules import import_source

RNG = np.random.default_rng(2207)

FUNCTIONS = '''
def sorted_rows(x, w):
    return np.sum(np.sort(x * x, axis=0) * w)


def sorted_flat(x, w):
    return np.sum(np.sort(np.ravel(x * w)) * np.arange(1.0, 7.0))


def padded(x, w):
    return np.sum(np.pad(x * w, ((1, 2), (0, 1))) ** 2)


def taken(x, w):
    order = np.argsort(w, axis=1)
    return np.sum(np.take_along_axis(x * w, order[:, :2], axis=1) ** 3)


def tensored(x, w):
    return np.sum(np.tensordot(x * x, w, axes=([1, 0], [0, 2])) ** 2)


def kroned(x, w):
    return np.sum(np.sin(np.kron(x, w * w)))
'''

CASES = [("sorted_rows", (3, 2), (3, 2)), ("sorted_flat", (2, 3), (2, 3)),
         ("padded", (3, 2), (2,)), ("taken", (3, 4), (3, 4)), ("tensored", (4, 3), (3, 2, 4)),
         ("kroned", (3, 2), (2, 2))]


@pytest.mark.parametrize("name,xs,ws", CASES, ids=[c[0] for c in CASES])
def test_gradient_file_differentiated_again(name, xs, ws, tmp_path):
    f = make_function(FUNCTIONS, name)
    module = f"g_{name}_again"
    (tmp_path / f"{module}.py").write_text(
        s2s_ad.gradient_source(f, wrt=("x", "w"), arrays=["x", "w"]), encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    try:
        grad_f = getattr(importlib.import_module(module), f"grad_{name}")
        x, w = RNG.uniform(0.5, 1.5, xs), RNG.uniform(0.5, 1.5, ws)
        got = grad_f(x, w)
        for i, g in enumerate(got):  # the file itself, against differences of f
            np.testing.assert_allclose(g, fd_gradient(f, [x, w], i), rtol=1e-6, atol=1e-8)
        # forward mode over the gradient file, against differences of it
        dx, dw = RNG.normal(size=xs), RNG.normal(size=ws)
        _, tangent = s2s_ad.jvp(grad_f, wrt=("x", "w"))(x, w, dx=dx, dw=dw)
        eps = 1e-6
        plus, minus = grad_f(x + eps * dx, w + eps * dw), grad_f(x - eps * dx, w - eps * dw)
        for t, p, m in zip(tangent, plus, minus):
            np.testing.assert_allclose(t, (p - m) / (2 * eps), rtol=1e-5, atol=1e-6)
        # reverse mode over it, through a caller reading both adjoints
        caller = import_source(str(tmp_path), f"import numpy as np\nfrom {module} import grad_{name}\n\n\n"
                               f"def h(x, w, c):\n    dx, dw = grad_{name}(x, w)\n"
                               "    return np.sum(c * dx) + np.sum(dw * dw)\n", f"h_{name}")
        c = RNG.normal(size=xs)
        second = s2s_ad.grad(caller.h, wrt=("x", "w"))(x, w, c)
        for i, g in enumerate(second):
            want = fd_gradient(caller.h, [x, w, c], i)
            np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6 * max(1.0, np.max(np.abs(want))))
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(module, None)
