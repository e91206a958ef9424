"""Independent references for gradients: central finite differences.

Nothing here uses s2s-ad's transform; tests compare its output with these.
"""

from __future__ import annotations

import math


def central_difference(f, args: list[float], i: int, h: float | None = None) -> float:
    """∂f/∂args[i] by a central difference, O(h²) accurate.

    The step h = 1e-5·max(1, |x|) balances truncation error (~h²·f''') against
    rounding error (~ε·|f|/h, ε ≈ 2.2e-16): both are ~1e-10 relative for
    smooth f of moderate size, so a 1e-6 relative tolerance leaves a wide margin.
    """
    x = args[i]
    h = h or 1e-5 * max(1.0, abs(x))
    up = list(args)
    down = list(args)
    up[i] = x + h
    down[i] = x - h
    return (f(*up) - f(*down)) / (2 * h)


def second_difference(f, args: list, i: int, j: int, h: float = 1e-4) -> float:
    """∂²f/∂args[i]∂args[j] by central differences of f itself (O(h²))."""
    def at(di, dj):
        a = list(args)
        a[i] += di
        a[j] += dj
        return f(*a)
    return (at(h, h) - at(h, -h) - at(-h, h) + at(-h, -h)) / (4 * h * h)


def fd_gradient(f, args: list[float], wrt: list[int]) -> list[float]:
    return [central_difference(f, args, i) for i in wrt]


def close(a: float, b: float, rtol: float = 1e-6, atol: float = 1e-8) -> bool:
    return math.isclose(a, b, rel_tol=rtol, abs_tol=atol)
