"""One check that several test files make of a function of one float: its
gradient, its JVP and the JVP of its gradient (a second derivative) against
central differences (tests/oracle.py holds the references; this applies
them to s2s-ad's derivatives)."""

from __future__ import annotations

import numpy as np

import s2s_ad


def fd(f, a: float, h: float = 1e-6) -> float:
    return (f(a + h) - f(a - h)) / (2 * h)


def assert_derivatives(fn, a: float, atol: float = 1e-8) -> None:
    """``grad``, ``jvp`` and ``jvp(grad)`` of ``fn`` at ``a`` against central
    differences of ``fn`` (and of ``grad(fn)`` for the second derivative)."""
    want = fd(fn, a)
    assert np.isclose(s2s_ad.grad(fn)(a), want, rtol=1e-6, atol=atol)
    value, tangent = s2s_ad.jvp(fn)(a, dx=1.0)
    assert np.isclose(value, fn(a)) and np.isclose(tangent, want, rtol=1e-6, atol=atol)
    g = s2s_ad.grad(fn)
    assert np.isclose(s2s_ad.jvp(g)(a, dx=1.0)[1], fd(g, a, 1e-5), rtol=1e-5, atol=1e-6)
