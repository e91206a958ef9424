"""s2s_ad.vjp finds the pair of an earlier call again (s2s_ad/callplan.py)
without binding the arguments with inspect: the same cotangents as the first
call, new code when the kinds of the arguments change or when the function's
fingerprint does (an edited module constant), and the cache statistics of a
lookup. Cotangents are compared with central differences of the function."""

import importlib.util
import math
import textwrap

import numpy as np
import pytest

import s2s_ad


def _fd(f, args, i, h=1e-6):
    lo, hi = list(args), list(args)
    lo[i] -= h
    hi[i] += h
    return (f(*hi) - f(*lo)) / (2 * h)


def poly(x, y=2.0, *, z=0.5):
    return x * x * y + math.sin(z * x) + z


def test_repeated_calls_give_the_cotangents_of_each_point():
    s2s_ad.clear_cache()
    for k in range(5):
        x, y, z = 0.3 + 0.1 * k, 1.0 - 0.2 * k, 0.4 + 0.05 * k
        value, vjp_fn = s2s_ad.vjp(poly, x, y, z=z)
        assert value == poly(x, y, z=z)
        dx, dy, dz = vjp_fn(2.0)
        assert math.isclose(dx, 2.0 * _fd(lambda a: poly(a, y, z=z), [x], 0), rel_tol=1e-7)
        assert math.isclose(dy, 2.0 * _fd(lambda b: poly(x, b, z=z), [y], 0), rel_tol=1e-7)
        assert math.isclose(dz, 2.0 * _fd(lambda c: poly(x, y, z=c), [z], 0), rel_tol=1e-7)
    info = s2s_ad.cache_info()
    assert (info.misses, info.hits) == (1, 4)


def test_defaults_and_keywords_are_bound_as_a_call_binds_them():
    a = s2s_ad.vjp(poly, 0.7)[1](1.0)
    b = s2s_ad.vjp(poly, 0.7, 2.0, z=0.5)[1](1.0)
    c = s2s_ad.vjp(poly, x=0.7, z=0.5)[1](1.0)
    assert a == b == c
    with pytest.raises(TypeError, match="vjp\\(poly, ...\\)"):
        s2s_ad.vjp(poly, 0.7, w=1.0)
    with pytest.raises(TypeError, match="vjp\\(poly, ...\\)"):
        s2s_ad.vjp(poly)


def total(xs, w):
    s = 0.0
    for i in range(len(xs)):
        s = s + w * xs[i] * xs[i]
    return s


def test_a_list_then_an_array_then_a_list_of_another_length():
    for xs in ([0.5, -1.0, 2.0], np.array([0.5, -1.0, 2.0]), [0.1, 0.2, 0.3, 0.4, 0.5],
               [0.5, -1.0, 2.0]):
        value, vjp_fn = s2s_ad.vjp(total, xs, 1.5)
        dxs, dw = vjp_fn(1.0)
        assert len(dxs) == len(xs)
        for i in range(len(xs)):
            assert math.isclose(dxs[i], 2 * 1.5 * xs[i], rel_tol=1e-12)
        assert math.isclose(dw, sum(float(v) ** 2 for v in xs), rel_tol=1e-12)
        assert isinstance(dxs, np.ndarray) == isinstance(xs, np.ndarray)


def test_a_loop_tape_is_consumed_by_each_backward_pass_of_its_own_copy():
    value, vjp_fn = s2s_ad.vjp(total, [1.0, 2.0], 3.0)
    value, vjp_fn = s2s_ad.vjp(total, [1.0, 2.0], 3.0)  # the pair found again
    assert vjp_fn(1.0) == vjp_fn(1.0) == ([6.0, 12.0], 5.0)


def test_an_edited_module_constant_gives_new_code(tmp_path):
    path = tmp_path / "scaled_mod.py"
    path.write_text(textwrap.dedent("""
        K = 3.0
        def f(x):
            return K * x * x
        """))
    spec = importlib.util.spec_from_file_location("scaled_mod", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    assert s2s_ad.vjp(m.f, 2.0)[1](1.0) == (12.0,)
    assert s2s_ad.vjp(m.f, 2.0)[1](1.0) == (12.0,)
    m.K = 5.0
    assert s2s_ad.vjp(m.f, 2.0)[1](1.0) == (20.0,)


def test_clear_cache_forgets_the_pairs_found():
    s2s_ad.vjp(poly, 0.7)
    s2s_ad.clear_cache()
    s2s_ad.vjp(poly, 0.7)
    assert s2s_ad.cache_info().misses == 1


def test_hvp_found_again_for_arguments_of_these_kinds():
    def f(x, y):
        return x * x * y + math.exp(x * y)

    h = s2s_ad.hvp(f, wrt=("x", "y"))
    for x, y in ((0.3, 0.7), (1.1, -0.4), (0.3, 0.7)):
        hxx = 2 * y + y * y * math.exp(x * y)
        hxy = 2 * x + (1 + x * y) * math.exp(x * y)
        got = h(x, y, (1.0, 0.0))
        assert math.isclose(got[0], hxx, rel_tol=1e-12)
        assert math.isclose(got[1], hxy, rel_tol=1e-12)
    with pytest.raises(ValueError, match="v has 3 part"):
        h(0.3, 0.7, (1.0, 0.0, 0.0))


# -- grad, value_and_grad, jvp: the check of the argument kinds written out per parameter -----


def scale(a, x, *, k=2.0):
    return k * a * x


def test_grad_with_keywords_defaults_and_an_array_where_numbers_were_generated():
    g = s2s_ad.grad(scale, wrt=("a", "x"))
    assert g(3.0, 0.5) == (1.0, 6.0)
    assert g(x=0.5, a=3.0, k=4.0) == (2.0, 12.0)
    assert g(3.0, 0.5, dout=-1.0) == (-1.0, -6.0)
    a = np.array([1.0, 2.0, 3.0])
    da, dx = g(a, 0.5)              # an array: the code generated for it, dx summed over a
    assert np.allclose(da, [1.0, 1.0, 1.0]) and math.isclose(dx, 2.0 * 6.0)
    assert g(3.0, 0.5) == (1.0, 6.0)
    with pytest.raises(TypeError, match="grad_scale"):
        g(3.0)


def test_jvp_tangents_by_keyword_against_central_differences():
    j = s2s_ad.jvp(poly)
    value, tangent = j(0.7, 1.3, z=0.4, dx=0.5, dy=-1.0, dz=0.25)
    fd = (poly(0.7 + 0.5e-6, 1.3 - 1e-6, z=0.4 + 0.25e-6)
          - poly(0.7 - 0.5e-6, 1.3 + 1e-6, z=0.4 - 0.25e-6)) / 2e-6
    assert value == poly(0.7, 1.3, z=0.4) and math.isclose(tangent, fd, rel_tol=1e-7)
    with pytest.raises(TypeError, match="dx"):
        j(0.7, 1.3, z=0.4, dy=-1.0, dz=0.25)


def horner3(c, x):
    s = 0.0
    for i in range(len(c)):
        s = s * x + c[i]
    return s


def test_fixed_length_lists_pass_the_check_and_anything_else_goes_the_long_way():
    g = s2s_ad.grad(horner3, wrt=(0, 1), lengths={"c": 3})
    dc, dx = g([1.0, 2.0, 3.0], 0.5)
    assert dc == [0.25, 0.5, 1.0] and dx == 2 * 1.0 * 0.5 + 2.0
    tdc, tdx = g((1.0, 2.0, 3.0), 0.5)      # a tuple of numbers: the same code
    assert list(tdc) == dc and tdx == dx
    with pytest.raises(ValueError, match="3 items"):
        g([1.0, 2.0], 0.5)
    with pytest.raises(TypeError):
        g([1.0, "a", 3.0], 0.5)
    j = s2s_ad.jvp(horner3, lengths={"c": 3})
    value, tangent = j([1.0, 2.0, 3.0], 0.5, dc=[0.0, 1.0, 0.0], dx=1.0)
    assert value == horner3([1.0, 2.0, 3.0], 0.5)
    assert math.isclose(tangent, 0.5 + dx, rel_tol=1e-15)
    per_length = s2s_ad.jvp(horner3)
    for n in (2, 5, 2):
        c = [0.1 * k for k in range(n)]
        value, tangent = per_length(c, 0.5, dc=[1.0] * n, dx=0.0)
        assert math.isclose(tangent, sum(0.5 ** k for k in range(n)), rel_tol=1e-14)
