"""A list grown at run time returned by the function pulled back through
`s2s_ad.vjp` (tests/list_results_src.py): the value is the list, the
cotangent a list of its length (numbers, or arrays in NumPy code), left as the
caller gave it; every length from one generated pair. Cotangents against
central differences of the cotangent's dot product with the function's value."""

import numpy as np
import pytest

import list_results_src as src
import s2s_ad


def _dot(value, cotangent):
    return sum(float(np.sum(np.asarray(a) * np.asarray(b))) for a, b in zip(value, cotangent))


def _fd(f, args, k, cotangent, h=1e-6):
    a, b = list(args), list(args)
    if isinstance(args[k], np.ndarray):
        out = np.zeros_like(args[k])
        for j in range(args[k].size):
            a, b = list(args), list(args)
            a[k] = args[k].copy()
            b[k] = args[k].copy()
            a[k][j] += h
            b[k][j] -= h
            out[j] = (_dot(f(*a), cotangent) - _dot(f(*b), cotangent)) / (2 * h)
        return out
    a[k] += h
    b[k] -= h
    return (_dot(f(*a), cotangent) - _dot(f(*b), cotangent)) / (2 * h)


@pytest.mark.parametrize("name", ["trajectory", "from_a_helper_sliced"])
def test_a_list_of_numbers(name):
    f = getattr(src, name)
    s2s_ad.clear_cache()
    for n in (0, 1, 4, 7, 4):
        value, back = s2s_ad.vjp(f, 0.3, 0.8, n)
        assert value == f(0.3, 0.8, n)
        cotangent = [0.5 + 0.25 * k for k in range(len(value))]
        given = list(cotangent)
        got = back(cotangent)
        assert cotangent == given  # the caller's list is left as it was
        assert back(tuple(cotangent)) == got  # and the pullback can be called again
        for k in (0, 1):
            assert got[k] == pytest.approx(_fd(f, (0.3, 0.8, n), k, cotangent), rel=1e-6,
                                           abs=1e-9)
    assert s2s_ad.cache_info().misses == 1  # one pair for every length


def test_a_list_of_arrays():
    x = np.array([0.3, -0.2, 0.5])
    for n in (1, 3):
        value, back = s2s_ad.vjp(src.states, x, 0.9, n)
        cotangent = [np.array([1.0, -0.5, 0.25]) * (k + 1) for k in range(n)]
        dx, dw = back(cotangent)[:2]
        np.testing.assert_allclose(dx, _fd(src.states, (x, 0.9, n), 0, cotangent), rtol=1e-6,
                                   atol=1e-9)
        assert dw == pytest.approx(_fd(src.states, (x, 0.9, n), 1, cotangent), rel=1e-6)


def test_a_cotangent_of_another_length_is_refused():
    value, back = s2s_ad.vjp(src.trajectory, 0.3, 0.8, 3)
    with pytest.raises(ValueError, match="a list of 4 items"):
        back([1.0, 2.0])
    with pytest.raises(ValueError, match="a list of 4 items"):
        back(1.0)


def test_grad_of_it_stays_refused_located():
    with pytest.raises(s2s_ad.SourceError, match="returning a list of any length") as err:
        s2s_ad.grad(src.trajectory, wrt=(0, 1))(0.3, 0.8, 3)
    assert "list_results_src.py:" in str(err.value) and "return hs" in str(err.value)
