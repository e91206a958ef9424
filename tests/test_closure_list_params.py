"""The gradient file of a function calling a helper on its list parameter,
read back and differentiated again. ``h_fwd(xs)`` keeps ``xs`` itself on its
tape (``return s, (xs, t3, t1_tape)``): that item is the caller's list, which
the lowering refuses to read as a new list a helper returns; it is read as
the argument itself (``s2s_ad/frontend/tape_params.py``), so ``vjp`` of the
file's gradient works at a list of any length. Each ``vjp`` against central
differences of the file's gradient (itself checked against central
differences of the function) and against ``s2s_ad.hessian`` of the function
times the cotangent; a helper of yours returning its list parameter, or an
alias of it, gives the caller's list itself; a generated forward function
edited to keep an alias of its parameter is refused, located."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from s2s_ad.errors import SourceError
from tests.modules import import_source
from tests.test_lists_across_calls import _list_fd

SOURCE = '''
import math


def h(xs):
    s = 0.0
    for x in xs:
        s = s + x * x * math.sin(x)
    return s


def once(xs):
    return h(xs) * xs[0]


def beside(xs, y):
    return h(xs) * y + y * y


def given_back(xs):
    return xs


def aliased(xs):
    ys = xs
    return ys


def returns_param(xs):
    ys = given_back(xs)
    return ys[0] * ys[1]


def returns_alias(xs):
    ys = aliased(xs)
    return ys[0] * ys[1]


def changed_after(xs):
    ys = [xs[0], xs[1]]
    zs = given_back(ys)
    ys[0] = xs[2]
    return zs[0] * xs[3]
'''

XS = [0.3, -0.7, 1.1, 0.4]
C = [0.5, -0.2, 0.3, 0.9]


def _dotted(g, c):
    """``c · g(xs, ...)``: its gradient is the vjp of ``g`` (its list item)."""
    def dot(xs, *rest):
        out = g(xs, *rest)
        return float(np.dot(out[0] if isinstance(out, tuple) else out, c))
    return dot


@pytest.mark.parametrize("name,rest", [("once", ()), ("beside", (0.8,))])
@pytest.mark.parametrize("n", [4, 6])
def test_vjp_of_the_file_gradient_over_a_list(name, rest, n, tmp_path):
    f = getattr(import_source(str(tmp_path), SOURCE, f"list_params_{name}_{n}"), name)
    xs = (XS + [0.9, -0.35])[:n]
    c = (C + [-0.6, 0.25])[:n]
    text = s2s_ad.gradient_source(f, wrt="xs")
    assert "h_fwd(xs)" in text and "return s, (xs," in text  # the helper keeps xs itself
    g = getattr(import_source(str(tmp_path), text, f"list_params_grad_{name}_{n}"), f"grad_{name}")
    np.testing.assert_allclose(g(xs, *rest), _list_fd(f, xs, *rest), rtol=1e-6, atol=1e-8)
    value, pull = s2s_ad.vjp(g, xs, *rest)
    np.testing.assert_allclose(value, g(xs, *rest), rtol=1e-15)
    got = pull(c)
    want = np.array(_list_fd(_dotted(g, c), xs, *rest))
    np.testing.assert_allclose(np.array(got[0], dtype=float), want, rtol=1e-5, atol=1e-7)
    H = np.array(s2s_ad.hessian(f, wrt="xs")(xs, *rest), dtype=float)
    np.testing.assert_allclose(np.array(got[0], dtype=float), H @ np.array(c), rtol=1e-6,
                               atol=1e-8)
    # the list argument is the caller's: vjp neither changes it nor keeps it
    assert xs == (XS + [0.9, -0.35])[:n]
    # the API's gradient of the function, too
    api_value, api_pull = s2s_ad.vjp(s2s_ad.grad(f, wrt="xs"), xs, *rest)
    np.testing.assert_allclose(np.array(api_pull(c)[0], dtype=float), want, rtol=1e-5,
                               atol=1e-7)


@pytest.mark.parametrize("name", ["returns_param", "returns_alias", "changed_after"])
def test_a_helper_returning_its_list_parameter_returns_the_callers_list(name, tmp_path):
    """A list returned as it is (``return xs``, or an alias bound to it) is
    the caller's list itself, as in Python. It was read as a copy:
    ``changed_after`` then got the gradient of ``xs[0] * xs[3]``, [0.4, 0, 0,
    0.3], where Python computes ``xs[2] * xs[3]``, whose gradient is [0, 0,
    0.4, 1.1] (``zs`` is ``ys``, changed after the call); it was refused
    since, and is differentiated now, against central differences. A
    parameter of any length given to the helper before the function reads it
    as a list (``returns_param``, ``returns_alias``) was refused as a helper
    "returning one number"; the helper's result read as a list makes it a
    list, as a read of the function's own would."""
    f = getattr(import_source(str(tmp_path), SOURCE, f"list_params_own_{name}"), name)
    expected = _list_fd(f, XS)
    for lengths in (None, {"xs": 4}):
        got = s2s_ad.grad(f, wrt="xs", lengths=lengths)(XS)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9)
    if name == "changed_after":
        np.testing.assert_allclose(expected, [0.0, 0.0, 0.4, 1.1], atol=1e-6)


def test_an_edited_forward_function_keeping_an_alias_is_refused(tmp_path):
    """``h_fwd`` edited to keep ``ys = xs`` on its tape: not the parameter
    itself, so not read as the argument; refused, located, as before."""
    f = getattr(import_source(str(tmp_path), SOURCE, "list_params_edited_src"), "once")
    text = s2s_ad.gradient_source(f, wrt="xs")
    kept = "    return s, (xs,"
    assert kept in text
    text = text.replace(kept, "    ys = xs\n    return s, (ys,", 1)
    g = import_source(str(tmp_path), text, "list_params_edited").grad_once
    with pytest.raises(SourceError) as err:
        s2s_ad.vjp(g, XS)[1](C)
    message = str(err.value)
    assert "list_params_edited.py:" in message and "return s, (ys," in message
    assert "the caller passed" in message
