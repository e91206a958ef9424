"""Array gradients proved with sympy where NumPy can carry sympy values:
products, sums, transposes, broadcasting and indexing run on object arrays of
symbols, so the original function gives one sympy expression and the
generated gradient gives, element by element, what sympy.diff must equal."""

import numpy as np
import pytest
import sympy

import s2s_ad
from array_oracle import make_function


def _symbols(name, shape):
    if shape == ():
        return sympy.Symbol(name, real=True)
    out = np.empty(shape, dtype=object)
    for k in np.ndindex(*shape):
        out[k] = sympy.Symbol(f"{name}_{'_'.join(map(str, k))}", real=True)
    return out


CASES = [
    ("np.sum((W @ x) * (W @ x))", {"W": (2, 3), "x": (3,)}),
    ("np.sum(np.dot(x, W.T) ** 2) + np.sum(W[0] * x)", {"W": (2, 3), "x": (3,)}),
    ("np.sum(A @ B - A.T @ A @ B)", {"A": (2, 2), "B": (2, 3)}),
    ("np.sum(np.outer(x, y) * x[0])", {"x": (2,), "y": (3,)}),
    ("np.sum(np.sum(A * b, axis=0) ** 2)", {"A": (3, 2), "b": (2,)}),
    ("np.sum(A[::2, 1:] * A[:2, :2]) + A[1, 0] * b[1]", {"A": (3, 3), "b": (2,)}),
    ("x @ y * (x @ x)", {"x": (3,), "y": (3,)}),
    ("np.sum(c * A - np.mean(A, axis=1, keepdims=True))", {"A": (2, 3), "c": ()}),
]


@pytest.mark.parametrize("expr, shapes", CASES, ids=[c[0] for c in CASES])
def test_matches_sympy_diff(expr, shapes):
    names = list(shapes)
    f = make_function(f"def f({', '.join(names)}):\n    return {expr}\n")
    args = [_symbols(n, shapes[n]) for n in names]
    original = sympy.expand(f(*args))
    grads = s2s_ad.grad(f, wrt=names)(*args)
    for name, arg, g in zip(names, args, grads):
        assert np.shape(g) == shapes[name]
        for k in np.ndindex(*shapes[name]):
            sym = arg[k] if shapes[name] else arg
            got = g[k] if shapes[name] else g
            assert sympy.simplify(sympy.diff(original, sym) - got) == 0, (name, k)
