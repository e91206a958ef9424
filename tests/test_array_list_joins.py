"""np.stack/np.hstack/np.concatenate of a parameter receiving a list of
arrays: grad and jvp generate the code for the list's structure, as vjp
does; every derivative against central differences."""
import numpy as np
import pytest

import s2s_ad
from tests import array_list_joins_src as src

EPS = 1e-6


def _fd(fn, xs, rest=()):
    out = []
    for k, a in enumerate(xs):
        g = np.zeros_like(a)
        for i in range(a.size):
            p = [x.copy() for x in xs]
            m = [x.copy() for x in xs]
            p[k].flat[i] += EPS
            m[k].flat[i] -= EPS
            g.flat[i] = (fn(p, *rest) - fn(m, *rest)) / (2 * EPS)
        out.append(g)
    return out


def _lists(n, shape, seed):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape) for _ in range(n)]


CASES = [(src.stacked, (3,)), (src.stacked, (2, 2)), (src.stacked_axis, (2, 3)),
         (src.hstacked, (3,)), (src.concatenated, (2,)), (src.concatenated, (2, 3))]


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("fn,shape", CASES)
def test_grad_vjp_jvp_of_a_list_of_arrays(fn, shape, n):
    xs = _lists(n, shape, seed=n)
    ref = _fd(fn, xs)
    g = s2s_ad.grad(fn)(xs)
    assert isinstance(g, list) and len(g) == n
    for a, b in zip(g, ref):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    value, pullback = s2s_ad.vjp(fn, xs)
    assert np.isclose(value, fn(xs))
    for a, b in zip(pullback(1.0)[0], ref):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    ts = _lists(n, shape, seed=10 + n)
    value, tangent = s2s_ad.jvp(fn)(xs, dxs=ts)
    assert np.isclose(value, fn(xs))
    assert np.isclose(tangent, sum(np.sum(a * t) for a, t in zip(ref, ts)), rtol=1e-6)


def test_a_list_of_another_length_gets_its_own_code():
    grad = s2s_ad.grad(src.stacked)
    for n in (2, 3, 1):
        xs = _lists(n, (3,), seed=20 + n)
        for a, b in zip(grad(xs), _fd(src.stacked, xs)):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_a_tuple_and_a_list_of_numbers():
    xs = tuple(_lists(2, (3,), seed=5))
    for a, b in zip(s2s_ad.grad(src.stacked)(xs), _fd(src.stacked, list(xs))):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    nums = [0.3, -1.1, 0.7]
    g = s2s_ad.grad(src.stacked)(nums)
    ref = [2 * np.sin(v) * np.cos(v) for v in nums]
    np.testing.assert_allclose(np.array(g, dtype=float), ref, rtol=1e-9)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_through_a_helper(n):
    xs = _lists(n, (2, 3), seed=30 + n)
    w = np.random.default_rng(7).normal(size=(2 * n, 3))
    ref = _fd(src.through_helper, xs, (w,))
    gx, gw = s2s_ad.grad(src.through_helper, wrt=(0, 1))(xs, w)
    for a, b in zip(gx, ref):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(gw, np.tanh(np.vstack(xs)), rtol=1e-9)
    value, tangent = s2s_ad.jvp(src.through_helper, wrt=0)(xs, w, dxs=xs)
    assert np.isclose(tangent, sum(np.sum(a * t) for a, t in zip(ref, xs)), rtol=1e-6)


def test_an_array_given_to_np_stack_is_refused_located():
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(src.stacked)(np.ones((2, 3)))
    assert "np.stack" in str(info.value) and "array_list_joins_src.py:7" in str(info.value)


def test_made_without_a_call_asks_for_an_example():
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.gradient_source(src.stacked)
    assert "--like xs=EXAMPLE" in str(info.value)
