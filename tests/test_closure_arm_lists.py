"""Closure under differentiation for a helper whose loop runs in one arm of
a branch: its forward function starts the tapes of that loop at ``None``
(``s_tape = None  # defined only if its branch runs``), and the arm makes
them lists of slots (``s_tape = [None] * t3``, filled once per iteration).
Read back, such a list starts as the list its arm fills (one list under one
name, ``s_tape = []`` before the branch), and a helper's tape item that is a
tuple (``np.shape(x)``) starts as a tuple of zeros where its arm does not
run. Each gradient module is written to a file, imported under a new name
and differentiated again, with each arm taken: its JVP (``H·v``) and the
gradient of a probe summing it against ``c`` (reverse over reverse,
``c·(H·v)``) against central differences of the file's gradient. (Both
were refused: "`s_tape` is a list in one branch only".)"""

from __future__ import annotations

import inspect
import sys

import numpy as np
import pytest

import s2s_ad
from s2s_ad.higher import origin
from tests.array_oracle import fd_gradient
from tests.modules import import_source

RNG = np.random.default_rng(5150)

SRC = '''
import numpy as np


def cell(a, w):
    return np.tanh(a * w) + a


def layer(x, w, c):
    s = x
    if c > 0.0:
        for k in range(w.shape[0]):
            s = cell(s, w[k])
    else:
        s = np.sin(x) * w[0]
    return s


def looped(x, w, c):
    t = 0.0
    for r in range(2):
        t = t + np.sum(layer(x + r, w, c) ** 2)
    return t


def once(x, w, c):
    return np.sum(layer(x, w, c) * x)
'''


READ_BACK: dict = {}
"""name -> (fn, its gradient file's text, grad_NAME read back from it, the
probe over it): written and read back once for both arms, so that the JVP of
the file's gradient and the gradient of the probe (s2s-ad caches them per
function) are generated once, not for each arm; each arm still checks all
of it."""


def _read_back(name, tmp_path_factory):
    if name not in READ_BACK:
        folder = tmp_path_factory.mktemp(f"arm_lists_{name}")
        fn = getattr(import_source(str(folder), SRC, f"arm_lists_{name}"), name)
        text = s2s_ad.gradient_source(fn, wrt=(0, 1))
        g = getattr(import_source(str(folder), text, f"arm_lists_{name}_grad"), "grad_" + name)
        sys.path.insert(0, str(folder))
        try:
            probe = import_source(str(folder), f"import numpy as np\nfrom arm_lists_{name}_grad "
                                  f"import grad_{name}\n\n\ndef probe(x, w, c, k0, k1):\n"
                                  f"    a, b = grad_{name}(x, w, c)\n"
                                  "    return np.sum(a * k0) + np.sum(b * k1)\n",
                                  f"arm_lists_{name}_probe").probe
        finally:
            sys.path.remove(str(folder))
        READ_BACK[name] = fn, text, g, probe
    return READ_BACK[name]


@pytest.mark.parametrize("c", [1.0, -1.0], ids=["loop-arm", "other-arm"])
@pytest.mark.parametrize("name", ["looped", "once"])
def test_tape_lists_filled_in_one_arm_read_back(tmp_path_factory, name, c):
    fn, text, g, probe = _read_back(name, tmp_path_factory)
    x, w = RNG.normal(size=3), 0.5 * RNG.normal(size=(3, 3))
    assert "= None  " in text and "[None] *" in text  # the shape read back here
    assert origin(g) is None
    for k, d in enumerate(g(x, w, c)):
        np.testing.assert_allclose(d, fd_gradient(fn, [x, w, c], k), rtol=1e-6, atol=1e-8)
    v = [RNG.normal(size=3), RNG.normal(size=(3, 3))]
    h = 1e-5
    up, down = g(x + h * v[0], w + h * v[1], c), g(x - h * v[0], w - h * v[1], c)
    along = [(a - b) / (2 * h) for a, b in zip(up, down)]
    forward = s2s_ad.jvp(g, wrt=(0, 1))
    keys = list(inspect.signature(forward).parameters)[-2:]
    _, tangent = forward(x, w, c, **dict(zip(keys, v)))
    for got, want in zip(tangent, along):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    cs = [RNG.normal(size=3), RNG.normal(size=(3, 3))]
    second = s2s_ad.grad(probe, wrt=(0, 1))(x, w, c, *cs)
    lhs = sum(float(np.sum(a * b)) for a, b in zip(second, v))
    rhs = sum(float(np.sum(a * b)) for a, b in zip(along, cs))
    assert np.isclose(lhs, rhs, rtol=1e-5, atol=1e-8), (lhs, rhs)
