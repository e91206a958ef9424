"""``hvp(f)(*args, v)`` with a direction not shaped like its parameter: a
tuple for a number raised TypeError inside the generated module, and after a
first call a direction of another shape was broadcast silently (a (3, 1)
direction for a (3,) parameter gave a product of the wrong shape and value).
Each is refused in words now, on the first call and on later ones (the fast
paths test the direction's class and shape), and a right direction after a
refused one gives the product, against central differences of the gradient."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.modules import import_source

SRC = '''
import math

import numpy as np


def scalar(x, y):
    return math.sin(x * y) * x + y * y * x


def cubes(x):
    return np.sum(x ** 3 * np.arange(1.0, 1.0 + x.shape[0]))


def listed(xs, y):
    s = 0.0
    for v in xs:
        s = s + v * v * y
    return s
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(str(tmp_path_factory.mktemp("hvp_dirs")), SRC, "hvp_directions_src")


def _fd_column(g, args, i, v, h=1e-5):
    plus, minus = list(args), list(args)
    plus[i], minus[i] = args[i] + h * v, args[i] - h * v
    return (np.asarray(g(*plus)) - np.asarray(g(*minus))) / (2 * h)


def test_number_parameter(mod):
    h = s2s_ad.hvp(mod.scalar)
    want = _fd_column(s2s_ad.grad(mod.scalar), [0.7, 1.3], 0, 1.0)
    for v in ((1.0, 0.0), 1.0, [1.0], 1.0):  # refused, right, refused after a right call, right
        if isinstance(v, (tuple, list)):
            with pytest.raises(ValueError, match="the direction for 'x' is a"):
                h(0.7, 1.3, v)
        else:
            assert np.isclose(h(0.7, 1.3, v), want, rtol=1e-6)
    both = s2s_ad.hvp(mod.scalar, wrt=(0, 1))
    assert np.allclose(both(0.7, 1.3, (1.0, 0.0))[0], want, rtol=1e-6)
    with pytest.raises(ValueError, match="the direction for 'x' is a tuple"):
        both(0.7, 1.3, ((1.0, 2.0), 0.0))


def test_array_parameter(mod):
    h = s2s_ad.hvp(mod.cubes)
    x = np.array([0.5, -1.0, 2.0])
    v = np.array([0.3, 1.0, -0.4])
    want = _fd_column(s2s_ad.grad(mod.cubes), [x], 0, v)
    np.testing.assert_allclose(h(x, v), want, rtol=1e-6)
    for bad in (v[:, None], np.ones(1), 1.0, list(v)):
        with pytest.raises(ValueError, match="the direction for 'x'"):
            h(x, bad)
    np.testing.assert_allclose(h(x, v), want, rtol=1e-6)
    x4, v4 = np.array([0.5, -1.0, 2.0, 0.1]), np.array([1.0, 0.0, 0.5, -1.0])
    np.testing.assert_allclose(h(x4, v4), _fd_column(s2s_ad.grad(mod.cubes), [x4], 0, v4),
                               rtol=1e-6)


def test_list_parameter(mod):
    h = s2s_ad.hvp(mod.listed)
    xs = [0.5, 1.0, 2.0]
    assert np.allclose(h(xs, 1.3, [1.0, 0.0, 0.0]), [2.6, 0.0, 0.0])
    for bad in (1.0, [1.0]):
        with pytest.raises(ValueError, match="the direction for 'xs'.*a list of 3"):
            h(xs, 1.3, bad)
    assert np.allclose(h(xs, 1.3, [0.0, 1.0, 0.0]), [0.0, 2.6, 0.0])
