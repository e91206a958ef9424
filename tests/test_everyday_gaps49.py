"""Python as people write it, the gaps left: a parameter indexing an array
(``x[k]``, ``np.take(x, k)``) is an integer with no gradient, as a list's
index is. Each derivative is compared with central differences in float64
of the function itself, through ``grad``, ``vjp`` and ``jvp``, at the top
level, in a helper and in a loop."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient as _fd
from tests.modules import import_source

INDEX_SRC = '''
import numpy as np


def read_at(x, k):
    return x[k] * k


def read_at_annotated(x, k: int):
    return x[k] * k


def row_at(m, k):
    return np.sum(m[k, :]) * k


def tail_from(x, k):
    return np.sum(x[k:]) * k


def at_arithmetic(x, k):
    return x[2 * k - 1] * x[k]


def taken(x, k):
    return np.sum(np.take(x, k) * x) * k


def pick(x, k):
    return x[k]


def through_a_helper(x, k):
    return pick(x, k) * k


def in_a_loop(x, k):
    s = 0.0
    for i in range(3):
        s = s + x[k] * x[i] * k
    return s


def masked(x, m):
    return np.sum(x[m] ** 2) + np.sum(x[x > 0.0]) * np.sum(m)
'''
INDEX_POINTS = {"read_at": 2, "read_at_annotated": 2, "row_at": 1, "tail_from": 1,
                "at_arithmetic": 1, "taken": 2, "through_a_helper": 2, "in_a_loop": 2}


@pytest.mark.parametrize("name", sorted(INDEX_POINTS))
def test_a_parameter_indexing_an_array_has_no_gradient(tmp_path, name):
    """A parameter an array is indexed by (``x[k]``, ``x[2 * k - 1]``,
    ``m[k, :]``, ``x[k:]``, ``np.take(x, k)``, in a helper, in a loop) is an
    int: a gradient with respect to it is refused, located, ``wrt=None``
    leaves it out and ``vjp`` gives None for it, as for a list's index (it
    was a number, the derivative with the element read held fixed:
    ``read_at`` at k = 2 gave x[2]); the array's gradient against central
    differences."""
    src = import_source(tmp_path, INDEX_SRC, f"everyday_gaps49_index_{name}")
    f = getattr(src, name)
    x = np.array([0.3, -0.2, 0.5, 0.9])
    args = [np.outer(x, [1.0, -2.0]) if name == "row_at" else x, INDEX_POINTS[name]]
    with pytest.raises(s2s_ad.SourceError, match="used as an integer") as e:
        s2s_ad.grad(f, wrt=1)(*args)
    assert "everyday_gaps49_index_" in str(e.value)
    _, back = s2s_ad.vjp(f, *args)
    got = back(1.0)
    assert got[1] is None
    np.testing.assert_allclose(got[0], _fd(f, args, 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s_ad.grad(f)(*args), _fd(f, args, 0), rtol=1e-6, atol=1e-8)
    _, tangent = s2s_ad.jvp(f)(*args, **{"d" + f.__code__.co_varnames[0]: np.ones_like(args[0])})
    assert tangent == pytest.approx(float(np.sum(_fd(f, args, 0))), rel=1e-6)


def test_a_mask_made_by_a_comparison_is_not_an_integer_use(tmp_path):
    """``x[x > 0.0]``: the comparison's operand keeps its gradient (the mask,
    a parameter, has none)."""
    src = import_source(tmp_path, INDEX_SRC, "everyday_gaps49_index_masked")
    x = np.array([0.3, -0.2, 0.5, 0.9])
    m = np.array([True, False, True, True])
    np.testing.assert_allclose(s2s_ad.grad(src.masked)(x, m), _fd(src.masked, [x, m], 0),
                               rtol=1e-6, atol=1e-8)
    assert s2s_ad.vjp(src.masked, x, m)[1](1.0)[1] is None
