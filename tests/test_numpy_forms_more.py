"""``np.column_stack``, ``np.select``, ``np.linalg.matrix_power`` and the
ufunc methods ``np.add.reduce``/``accumulate`` (and their kin), read as NumPy
code of rules s2s-ad has (s2s_ad/frontend/numpy_forms.py). Each was refused
("has no derivative rule", "attribute access is only supported on modules").
Gradients against central differences, the forward values against NumPy's,
``jvp`` against the gradient, and the refusals located."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient
from tests.modules import import_source

SRC = '''
import numpy as np


def reduces(a, b):
    M = np.outer(a, b)
    return (np.sum(np.add.reduce(M) * a) + np.sum(np.add.reduce(M, axis=1, keepdims=True))
            + np.multiply.reduce(a) + np.maximum.reduce(a * b) - np.minimum.reduce(b))


def accumulates(a, b):
    M = np.outer(a, b)
    return np.sum(np.multiply.accumulate(a * b)) + np.sum(np.add.accumulate(M, axis=1) ** 2)


def columns(a, b):
    M = np.column_stack((np.outer(a, b), a, b * b))
    return np.sum(M * M) + np.sum(np.column_stack([a, b]) @ np.ones(2))


def selected(a, b):
    r = np.select([a > 0.5, a < 0.0], [a * b, b * b], default=a)
    return np.sum(r * r) + np.sum(np.select([b > 0.0], [np.exp(b)]))


def selected_by_names(a, b):
    """NumPy's documentation's form: the lists bound to names first."""
    condlist = [a < 0.0, a > 1.0]
    choicelist = [a * b, b ** 2]
    return np.sum(np.select(condlist, choicelist, 42.0) * b)


def powers(a, b):
    M = np.outer(a, b) + np.eye(3)
    return np.sum(np.linalg.matrix_power(M, 1)) + np.sum(np.linalg.matrix_power(M, 3) * M)


def any_all(a, b):
    if np.logical_and.reduce(a > -5.0) and not np.logical_or.reduce(b > 10.0):
        return np.sum(a * b)
    return np.sum(a)
'''

NAMES = ["reduces", "accumulates", "columns", "selected", "selected_by_names", "powers",
         "any_all"]
A, B = np.array([0.3, 1.2, -0.5]), np.array([1.5, -0.4, 0.2])


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(tmp_path_factory.mktemp("numpy_forms_more"), SRC, "np_forms_more")


@pytest.mark.parametrize("name", NAMES)
def test_gradient_and_jvp(mod, name):
    f = getattr(mod, name)
    ga, gb = s2s_ad.grad(f, wrt=None)(A, B)
    assert np.allclose(ga, fd_gradient(f, [A, B], 0), rtol=1e-6, atol=1e-9)
    assert np.allclose(gb, fd_gradient(f, [A, B], 1), rtol=1e-6, atol=1e-9)
    da, db = np.array([0.2, -0.7, 1.1]), np.array([0.5, 0.3, -0.2])
    value, tangent = s2s_ad.jvp(f, wrt=None)(A, B, da=da, db=db)
    assert np.isclose(value, f(A, B))
    assert np.isclose(tangent, ga @ da + gb @ db, rtol=1e-9)


REFUSED = '''
import numpy as np


def zeroth(a):
    return np.sum(np.linalg.matrix_power(np.outer(a, a), 0))


def select_of_names(a, conds, values):
    return np.sum(np.select(conds, values))


def max_accumulate(a):
    return np.sum(np.maximum.reduceat(a, [0, 2]))


def select_of_changed(a):
    conds = [a > 0]
    conds.append(a < -1.0)
    return np.sum(np.select(conds, [a, 2.0 * a]))
'''


def test_refusals(tmp_path):
    mod = import_source(tmp_path, REFUSED, "np_forms_more_refused")
    with pytest.raises(s2s_ad.SourceError, match=r"np_forms_more_refused.py:6:\d+"):
        s2s_ad.grad(mod.zeroth)(A)
    with pytest.raises(s2s_ad.SourceError, match=r"np_forms_more_refused.py:10:\d+"):
        s2s_ad.grad(mod.select_of_names, wrt=0)(A, [A > 0], [A])
    with pytest.raises(s2s_ad.SourceError, match=r"np_forms_more_refused.py:14:\d+: .*the "
                       r"ufunc method `np.maximum.reduceat` is not supported"):
        s2s_ad.grad(mod.max_accumulate)(A)  # (np.maximum.accumulate has a rule now)
    with pytest.raises(s2s_ad.SourceError, match=r"np_forms_more_refused.py:20:\d+"):
        s2s_ad.grad(mod.select_of_changed)(A)
