"""Wrong derivatives, crashes and refusals found by probing what changes
after a derivative was made, and constructs in positions not tried before.
Each derivative is compared with central differences in float64 of the
original function (second derivatives with central differences of the
gradient); none is marked xfail: each fails until its bug is fixed."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import s2s_ad
from tests.modules import import_source


def _fd(f, args, i, h=1e-6):
    up, down = list(args), list(args)
    up[i] += h
    down[i] -= h
    return (f(*up) - f(*down)) / (2 * h)


UNROLLED_SRC = '''
COEF = [1.0, 2.0]
TERMS = (1.0, 2.0)


def over_list(x):
    s = 0.0
    for c in COEF:
        s = s + c * x * x
    return s


def over_tuple(x):
    s = 0.0
    for c in TERMS:
        s = s * x + c
    return s
'''


def _grown(src, name):
    if name == "over_list":
        src.COEF.append(5.0)
    else:
        src.TERMS = (1.0, 2.0, 3.0)


@pytest.mark.parametrize("name", ["over_list", "over_tuple"])
@pytest.mark.parametrize("api", ["grad", "value_and_grad", "checkpoint"])
def test_seed_renamed_when_a_module_constant_changes_the_unrolled_code(tmp_path, name, api):
    """A loop over a module-level list (or tuple) of numbers is unrolled, and
    the seed of the gradient is named after the returned value's SSA name:
    `ds_1` for two items, `ds_2` for three. A held derivative asked again
    after `COEF.append(5.0)` passed its call on with the old name: TypeError
    "grad_over_list() got an unexpected keyword argument 'ds_1'" (right:
    over_list's gradient 2.6 * 8.0 = 20.8 at 1.3). A seed given by its old
    name is given to the new one."""
    src = import_source(tmp_path, UNROLLED_SRC, f"found_adversary15_unrolled_{name}")
    f = getattr(src, name)
    make = {"grad": lambda: s2s_ad.grad(f),
            "value_and_grad": lambda: s2s_ad.value_and_grad(f),
            "checkpoint": lambda: s2s_ad.grad(f, checkpoint=True)}[api]
    pick = (lambda r: r[1]) if api == "value_and_grad" else (lambda r: r)
    held = make()
    assert np.isclose(pick(held(1.3)), _fd(f, (1.3,), 0), rtol=1e-6)
    seed = list(inspect.signature(held).parameters)[-1]
    _grown(src, name)
    want = _fd(f, (1.3,), 0)
    assert np.isclose(pick(held(1.3)), want, rtol=1e-6)
    assert np.isclose(pick(held(1.3, **{seed: 2.0})), 2.0 * want, rtol=1e-6)
    assert np.isclose(pick(make()(1.3)), want, rtol=1e-6)
