"""``for i, x in enumerate(xs)``, ``for x, y in zip(xs, ys)`` and the same in
comprehensions, ``max(xs)`` and ``min(...)`` of a generator, against central
differences and sympy; refusals with their location."""

import pytest

import s2s_ad
import iterables_src as z
from array_oracle import make_function
from oracle import close
from s2s_ad import SourceError

CASES = [
    (z.weighted, [[0.3, -1.2, 2.0], 0.7]),
    (z.dot_sin, [[0.3, -1.2, 2.0], [1.0, 0.5]]),
    (z.nested, [[0.3, -1.2, 2.0], [0.1, 0.5, -1.0], 1.3]),
    (z.early_exit, [[0.3, -1.2, 2.0, 4.0]]),
    (z.comprehensions, [[0.3, -1.2, 2.0], [0.4, 0.9], 0.8]),
    (z.softmax_sum, [[0.1, 0.5, -0.3]]),
    (z.extremes, [[0.1, 0.5, -0.3], 1.5]),
]


def _fd(f, args):
    """Central differences of f for every float and every list item."""
    out = []
    for k, a in enumerate(args):
        def at(k, j, h):
            b = [list(x) if isinstance(x, list) else x for x in args]
            if j is None:
                b[k] += h
            else:
                b[k][j] += h
            return f(*b)
        idx = range(len(a)) if isinstance(a, list) else [None]
        g = [(at(k, j, 1e-6) - at(k, j, -1e-6)) / 2e-6 for j in idx]
        out.append(g if isinstance(a, list) else g[0])
    return out


@pytest.mark.parametrize("fn,args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_matches_finite_differences(fn, args):
    got = s2s_ad.grad(fn, wrt=list(range(len(args))))(*args)
    for g, want in zip(got, _fd(fn, args)):
        gl, wl = (g, want) if isinstance(want, list) else ([g], [want])
        assert all(close(a, b) for a, b in zip(gl, wl)), (got, want)


@pytest.mark.parametrize("fn,args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_proved_by_sympy(fn, args):
    names = fn.__code__.co_varnames[:fn.__code__.co_argcount]
    lengths = {n: len(a) for n, a in zip(names, args) if isinstance(a, list)}
    verdict = s2s_ad.check(fn, lengths=lengths)
    assert verdict.status == "proved", str(verdict)


def test_generated_loop_binds_each_name_from_the_index():
    text = s2s_ad.gradient_source(z.nested, lengths={"xs": 3, "ys": 3})
    assert "for k in range(3):" in text and "i = k + 1" in text and "y = ys[k]" in text
    assert "for i, (x, y) in enumerate(zip(xs, ys), 1), backwards" in text


@pytest.mark.parametrize("body, message, col", [
    ("for i, x in range(3):\n        s = s + x", "needs `enumerate", 9),
    ("for i, x, y in enumerate(xs):\n        s = s + x", "unpacks 3 names", 9),
    ("for i, x in enumerate(xs, a):\n        s = s + x", "start of `enumerate` must be", 31),
    ("for x, y in zip(xs, strict=True):\n        s = s + x", "takes a keyword", 17),
])
def test_refusals_name_the_place(body, message, col):
    f = make_function(f"def f(xs, a):\n    s = 0.0\n    {body}\n    return s\n")
    with pytest.raises(SourceError, match=message) as e:
        s2s_ad.grad(f, wrt=[0, 1])([1.0, 2.0], 0.5)
    assert f":3:{col}:" in str(e.value) and "^" in str(e.value)


@pytest.mark.parametrize("xs", [[1.0, 2.0], [1.0], [1.0, 2.0, -0.5]])
def test_zip_of_a_list_of_any_length_with_a_list_display(xs):
    # (was refused: "`zip` in a `for` loop iterates over list or tuple parameters")
    f = make_function("def f(xs, a):\n    s = 0.0\n    for x, y in zip(xs, [a, a * a]):\n"
                      "        s = s + x * y\n    return s\n")
    got = s2s_ad.grad(f, wrt=[0, 1])(xs, 0.5)
    h = 1e-6
    for k in range(len(xs)):
        up, down = list(xs), list(xs)
        up[k] += h
        down[k] -= h
        assert got[0][k] == pytest.approx((f(up, 0.5) - f(down, 0.5)) / (2 * h), rel=1e-6, abs=1e-9)
    assert got[1] == pytest.approx((f(xs, 0.5 + h) - f(xs, 0.5 - h)) / (2 * h), rel=1e-6, abs=1e-9)


def test_max_of_an_empty_sequence_is_refused():
    f = make_function("def f(x):\n    return x + max([])\n")
    with pytest.raises(SourceError, match="empty sequence"):
        s2s_ad.grad(f)
