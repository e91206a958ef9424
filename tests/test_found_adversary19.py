"""Adversarial programs of round 19: what the round found refused or wrong
against the documented behaviour. Each derivative is compared with central
differences in float64 of the function itself (second derivatives with
central differences of the gradient)."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from s2s_ad.errors import SourceError
from tests.modules import import_source

H = 1e-6


def _fd_list(f, args: list, i: int) -> np.ndarray:
    """∂f/∂args[i] by central differences, args[i] a list of floats."""
    xs = args[i]
    out = []
    for k in range(len(xs)):
        up, down = list(args), list(args)
        up[i] = xs[:k] + [xs[k] + H] + xs[k + 1:]
        down[i] = xs[:k] + [xs[k] - H] + xs[k + 1:]
        out.append((f(*up) - f(*down)) / (2 * H))
    return np.array(out)


STARRED_SRC = '''
def first_and_rest(xs):
    a, *rest = xs
    return a * sum(rest) + rest[-1] * rest[0]


def ends(xs, c):
    *init, last = xs
    s = 0.0
    for v in init:
        s = s * c + v * last
    return s


def middle(xs):
    a, *mid, b = xs
    return a * b + sum(m * m for m in mid)
'''
STARRED = {"first_and_rest": [[0.2, 0.5, -1.0, 0.4]], "ends": [[0.2, 0.5, -1.0, 0.4], 0.7],
           "middle": [[0.2, 0.5, -1.0, 0.4, 0.9]]}


@pytest.mark.parametrize("api", ["grad", "value_and_grad", "checkpoint", "vjp", "hvp"])
@pytest.mark.parametrize("name", sorted(STARRED))
def test_a_list_parameter_unpacked_with_a_starred_name(tmp_path, name, api):
    """``a, *rest = xs`` with ``xs`` a list parameter: ``grad`` (which lowers
    a parameter as a number until the code says otherwise) takes the
    unpacking for a use as a list and generates the code for the call's
    list, as ``vjp`` does (before: refused, '`xs` is a number; a starred
    name unpacks a tuple or list built in the function ...')."""
    src = import_source(tmp_path, STARRED_SRC, f"found_adversary19_starred_{name}")
    f = getattr(src, name)
    args = STARRED[name]
    want = _fd_list(f, args, 0)
    if api == "hvp":
        v = [0.3, -0.2, 0.5, 0.1, -0.4][:len(args[0])]
        h = 1e-5
        g = s2s_ad.grad(f, wrt=0)
        up = np.array(g([a + h * d for a, d in zip(args[0], v)], *args[1:]), dtype=float)
        down = np.array(g([a - h * d for a, d in zip(args[0], v)], *args[1:]), dtype=float)
        np.testing.assert_allclose(np.array(g(*args), dtype=float), want, rtol=1e-6, atol=1e-8)
        got = s2s_ad.hvp(f, wrt=0)(*args, v)
        np.testing.assert_allclose(np.array(got, dtype=float), (up - down) / (2 * h),
                                   rtol=1e-4, atol=1e-6)
        return
    if api == "vjp":
        got = s2s_ad.vjp(f, *args)[1](1.0)[0]
    elif api == "value_and_grad":
        value, got = s2s_ad.value_and_grad(f, wrt=0)(*args)
        assert value == f(*args)
    else:
        got = s2s_ad.grad(f, wrt=0, checkpoint=True if api == "checkpoint" else None)(*args)
    np.testing.assert_allclose(np.array(got, dtype=float), want, rtol=1e-6, atol=1e-8)


def test_a_starred_list_parameter_without_a_call_asks_for_its_length(tmp_path):
    """Made without a call, the gradient of such a function asks for the
    list's length and says why a list of any length does not do."""
    src = import_source(tmp_path, STARRED_SRC, "found_adversary19_starred_source")
    with pytest.raises(SourceError) as err:
        s2s_ad.gradient_source(src.first_and_rest)
    text = str(err.value)
    assert "parameter 'xs' is used as a list or tuple; give its length" in text
    assert "a starred name unpacks" in text
    assert "found_adversary19_starred_source.py:3:" in text
