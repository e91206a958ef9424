"""A NumPy gradient module whose function never names NumPy itself (every
NumPy operation in it is one of s2s-ad's own helpers: spread, unbroadcast,
astype_like), read back from its file and differentiated again: the module
written for it defines those helpers, which read ``np`` when they are
defined, so it must import NumPy although the code it differentiates does
not mention it."""

import inspect

import numpy as np

import s2s_ad
from tests.modules import import_source

SOURCE = '''
import numpy as np


def f(a, b, s):
    b = b + s
    return np.sum((((b + a) * (a ** 2)) + (s + s)) * a)
'''


def test_jvp_of_a_gradient_module_that_never_names_numpy(tmp_path):
    f = import_source(str(tmp_path), SOURCE, "closure_imports_f").f
    text = s2s_ad.gradient_source(f, wrt=("a", "b", "s"))
    g = import_source(str(tmp_path), text, "closure_imports_g").grad_f
    rng = np.random.default_rng(3)
    a, b, s = rng.normal(size=3), rng.normal(size=3), float(rng.normal())
    da, db, ds = rng.normal(size=3), rng.normal(size=3), float(rng.normal())
    forward = s2s_ad.jvp(g, wrt=("a", "b", "s"))
    assert "import numpy as np" in s2s_ad.jvp_source(g, wrt=("a", "b", "s"))
    keys = list(inspect.signature(forward).parameters)[-3:]  # the tangents' names
    _, tangent = forward(a, b, s, **dict(zip(keys, (da, db, ds))))
    h = 1e-6
    up = g(a + h * da, b + h * db, s + h * ds)
    down = g(a - h * da, b - h * db, s - h * ds)
    for got, hi, lo in zip(tangent, up, down):
        np.testing.assert_allclose(got, (np.asarray(hi) - np.asarray(lo)) / (2 * h),
                                   rtol=1e-6, atol=1e-8)
