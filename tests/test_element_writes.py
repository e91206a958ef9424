"""A list adjoint set element by element (``dc[i] = g``, s2s_ad.reverse.element_writes)
where each element gets exactly one contribution, and added to where an
element may get several: gradients against central finite differences, and
the generated statement that says which path was taken."""

import pytest

import s2s_ad
import element_writes_src as P
from oracle import central_difference, close

C = [0.3, -0.7, 1.1, 0.5]
X = 0.8

CASES = [  # function, whether the sweep sets elements (True) or adds (False)
    (P.horner, True),
    (P.weighted_from_one, False),   # c read twice per iteration
    (P.every_other, True),
    (P.negative_start, False),      # a negative index may name a positive one's element
    (P.nested, False),              # the inner loop visits its indices again
    (P.read_twice, False),
    (P.two_loops, False),
    (P.stops_early, True),
    (P.in_branch, True),
    (P.index_reversed, False),      # the index is not the loop's own
]


def _fd_list(f, c, x):
    out = []
    for k in range(len(c)):
        def g(t, k=k):
            b = list(c)
            b[k] = t
            return f(b, x)
        out.append(central_difference(g, [c[k]], 0))
    return out, central_difference(lambda t: f(c, t), [x], 0)


@pytest.mark.parametrize("f,sets", CASES, ids=[f.__name__ for f, _ in CASES])
@pytest.mark.parametrize("lengths", [None, {"c": 4}], ids=["any length", "length 4"])
def test_list_gradient_matches_finite_differences(f, sets, lengths):
    g = s2s_ad.grad(f, wrt=(0, 1), **({"lengths": lengths} if lengths else {}))
    dc, dx = g(C, X)
    want_dc, want_dx = _fd_list(f, C, X)
    assert isinstance(dc, list) and len(dc) == len(C)
    for got, want in zip(list(dc) + [dx], want_dc + [want_dx]):
        assert close(got, want, rtol=1e-6, atol=1e-8), (f.__name__, dc, dx, want_dc, want_dx)


@pytest.mark.parametrize("f,sets", CASES, ids=[f.__name__ for f, _ in CASES])
def test_sets_only_where_each_element_gets_one_contribution(f, sets):
    text = s2s_ad.source_of(s2s_ad.grad(f, wrt=(0, 1), lengths={"c": 4}))
    assert ("dc[i] = " in text) is sets, text
    assert ("dc[i] += " in text) is not sets or f is P.index_reversed, text


def test_called_twice_gives_the_same_gradient():
    g = s2s_ad.grad(P.horner, wrt=(0, 1), lengths={"c": 4})
    assert g(C, X) == g(C, X)
