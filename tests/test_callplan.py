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


# -- what a repeated call checks instead of the fingerprint's walk (fingerprint.watched) -----


def _module(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


WATCHED = """
    import math
    import numpy as np
    W = [2.0, 3.0]
    C = 1.5
    def helper(x, k=2.0):
        return k * x * x
    def cube(x, k=2.0):
        return k * x * x * x
    def product(xs):
        return xs[0] * xs[1]
    def f(x, y, *, z=0.5):
        return helper(x) * W[0] + W[1] * y * C + math.sin(z * x) + sum((x, y))
    """


def _check_f(m, x=0.7, y=-0.4, z=0.5):
    """vjp of m.f at a point, against central differences of m.f itself."""
    value, vjp_fn = s2s_ad.vjp(m.f, x, y, z=z)
    assert value == m.f(x, y, z=z)
    dx, dy, dz = vjp_fn(1.0)
    assert math.isclose(dx, _fd(lambda a: m.f(a, y, z=z), [x], 0), rel_tol=1e-7)
    assert math.isclose(dy, _fd(lambda b: m.f(x, b, z=z), [y], 0), rel_tol=1e-7)
    assert math.isclose(dz, _fd(lambda c: m.f(x, y, z=c), [z], 0), rel_tol=1e-7)


def test_the_watch_gives_the_fingerprint_and_sees_every_edit(tmp_path):
    from s2s_ad import fingerprint
    m = _module(tmp_path, "watched_mod", WATCHED)
    fp, watch = fingerprint.watched(m.f)
    assert fp == fingerprint.fingerprint(m.f) and watch.unchanged()
    edits = [
        lambda: setattr(m, "C", 2.5),                       # a module constant rebound
        lambda: m.W.__setitem__(0, 4.0),                    # a list constant changed in place
        lambda: setattr(m.helper, "__defaults__", (3.0,)),  # a helper's default
        lambda: m.f.__kwdefaults__.__setitem__("z", 0.25),  # a keyword default, in place
        lambda: setattr(m, "helper", lambda x, k=2.0: k * x),   # a helper replaced
        lambda: setattr(m, "sum", max),                     # a builtin the code reads, shadowed
    ]
    for edit in edits:
        fp, watch = fingerprint.watched(m.f)
        edit()
        assert not watch.unchanged()
    fp, watch = fingerprint.watched(m.f)
    m.unrelated = 1.0                                       # a name the code does not read
    assert watch.unchanged()


def test_repeated_vjp_calls_follow_edits_of_what_the_code_reads(tmp_path):
    m = _module(tmp_path, "vjp_edits_mod", WATCHED)
    s2s_ad.clear_cache()
    for k in range(3):  # the first call generates, the others run the pair found
        _check_f(m, 0.7 + 0.1 * k)
    assert s2s_ad.cache_info().hits == 2
    m.C = 2.5
    _check_f(m)
    m.W[0] = 4.0
    _check_f(m)
    m.helper.__defaults__ = (3.0,)
    _check_f(m)
    m.helper = m.cube
    _check_f(m)
    _check_f(m, z=0.25)
    m.f.__kwdefaults__["z"] = 0.25
    value, vjp_fn = s2s_ad.vjp(m.f, 0.7, -0.4)
    assert value == m.f(0.7, -0.4) and math.isclose(
        vjp_fn(1.0)[2], _fd(lambda c: m.f(0.7, -0.4, z=c), [0.25], 0), rel_tol=1e-7)
    m.sum = m.product   # a builtin the code calls, shadowed by a module name
    _check_f(m)


def ten_fwd(x):
    return x * x, x


def ten_bwd(x, g):
    return (g * 10.0,)


def test_a_rule_registered_after_a_call_is_used_by_the_next(tmp_path):
    m = _module(tmp_path, "vjp_rule_mod", """
        def sq(x):
            return x * x
        def f(x, y, *, z=0.5):
            return sq(x) * y + z
        """)
    assert s2s_ad.vjp(m.f, 3.0, 2.0)[1](1.0)[0] == 12.0
    assert s2s_ad.vjp(m.f, 3.0, 2.0)[1](1.0)[0] == 12.0
    # a deliberately different (wrong) rule: the next call must use it
    s2s_ad.defvjp(m.sq, ten_fwd, ten_bwd)
    assert s2s_ad.vjp(m.f, 3.0, 2.0)[1](1.0)[0] == 20.0


def test_kinds_switching_back_and_forth_on_the_quick_path():
    for xs in ([0.5, -1.0, 2.0], (0.5, -1.0, 2.0), [0.5, -1.0, 2.0], np.array([0.5, -1.0, 2.0]),
               [0.5, -1.0, 2.0], [1, 2, 3], [0.5, -1.0, 2.0], [0.5, np.float64(-1.0), 2.0]):
        value, vjp_fn = s2s_ad.vjp(total, xs, 1.5)
        assert value == total(xs, 1.5)
        dxs, dw = vjp_fn(1.0)
        for i in range(3):
            assert math.isclose(dxs[i], _fd(lambda v: total(
                [v if j == i else float(xs[j]) for j in range(3)], 1.5), [float(xs[i])], 0),
                rel_tol=1e-7)
        assert math.isclose(dw, _fd(lambda w: total([float(v) for v in xs], w), [1.5], 0),
                            rel_tol=1e-7)
    with pytest.raises(TypeError, match="vjp\\(total, ...\\)"):
        s2s_ad.vjp(total, [0.5, -1.0, 2.0])


def test_hvp_quick_path_switches_kinds_and_words_a_wrong_direction():
    def f(x, y):
        return np.sum(x * x) * y + np.sum(np.sin(x)) * y

    h = s2s_ad.hvp(f, wrt=("x", "y"))
    for x in (0.3, np.array([0.3, -0.2]), 0.3, np.array([[0.1, 0.2], [0.3, 0.4]]), 0.3):
        y = 0.7
        v = (np.ones_like(x) * 0.5, -1.0) if isinstance(x, np.ndarray) else (0.5, -1.0)
        got = h(x, y, v)
        # H·v by central differences of the gradient (the gradient by hand, independent)
        def g(x, y):
            return 2 * x * y + np.cos(x) * y, np.sum(x * x) + np.sum(np.sin(x))
        eps = 1e-6
        hi = g(x + eps * v[0], y + eps * v[1])
        lo = g(x - eps * v[0], y - eps * v[1])
        assert np.allclose(got[0], (hi[0] - lo[0]) / (2 * eps), rtol=1e-6)
        assert np.isclose(got[1], (hi[1] - lo[1]) / (2 * eps), rtol=1e-6)
        with pytest.raises(ValueError, match="v has 1 part"):
            h(x, y, (v[0],))


def test_per_length_code_runs_again_for_arguments_like_the_last_and_only_for_those():
    j = s2s_ad.jvp(horner3)
    g = s2s_ad.grad(horner3, wrt=(0, 1))
    calls = [([0.5, -1.0, 2.0], 0.7), ([0.5, -1.0, 2.0], 0.7), ((0.5, -1.0, 2.0), 0.7),
             ([1, 2, 3, 4], 0.5), ([1, 2, 3, 4], 0.5), ([0.5, -1.0, 2.0], 2),
             ([0.5, -1.0, 2.0], True), ([0.5, -1.0, 2.0], 0.7)]
    for c, x in calls:
        n = len(c)
        dc = [0.1 * (k + 1) for k in range(n)]
        value, tangent = j(c, x, dc=dc, dx=-0.5)
        assert value == horner3(c, x)
        fd = (horner3([a + 1e-6 * d for a, d in zip(c, dc)], x - 0.5e-6)
              - horner3([a - 1e-6 * d for a, d in zip(c, dc)], x + 0.5e-6)) / 2e-6
        assert math.isclose(tangent, fd, rel_tol=1e-7)
        # the JVP of a list parameter read when the code runs: one module for every length
        assert "range(len(c))" in s2s_ad.source_of(j)
        gc, gx = g(c, x, ds=2.0) if n == 4 else g(c, x)
        seed = 2.0 if n == 4 else 1.0
        assert math.isclose(gx, seed * _fd(lambda v: horner3(list(c), v), [float(x)], 0),
                            rel_tol=1e-6)
        assert len(gc) == n
    with pytest.raises(TypeError):
        j([0.5, -1.0, 2.0], 0.7, dc=[0.1, 0.2, 0.3])          # dx missing
    with pytest.raises(TypeError):
        j([0.5, -1.0, 2.0], 0.7, dc=[0.1, 0.2, 0.3], dx=0.1, dz=1.0)
    value, tangent = j(np.array([0.5, -1.0, 2.0]), 0.7, dc=np.array([1.0, 0.0, 0.0]), dx=0.0)
    assert math.isclose(tangent, 0.7 ** 2, rel_tol=1e-12)


def shadowing(len, hasattr, getattr):
    # parameters named like the builtins the generated checks call
    return len * hasattr + getattr * getattr


def test_parameters_named_like_builtins_do_not_confuse_the_generated_checks():
    for point in ((0.5, 2.0, -1.5), (0.25, 3.0, 1.0)):
        value, vjp_fn = s2s_ad.vjp(shadowing, *point)
        assert value == shadowing(*point)
        got = vjp_fn(1.0)
        for i in range(3):
            assert math.isclose(got[i], _fd(shadowing, list(point), i), rel_tol=1e-7)
    # the Hessian by hand: [[0, 1, 0], [1, 0, 0], [0, 0, 2]]
    h = s2s_ad.hvp(shadowing, wrt=(0, 1, 2))
    assert h(0.5, 2.0, -1.5, (1.0, 0.0, 1.0)) == h(0.5, 2.0, -1.5, [1.0, 0.0, 1.0]) \
        == (0.0, 1.0, 2.0)



def test_a_plan_is_dropped_with_its_function_and_a_new_function_gets_its_own(tmp_path):
    import gc
    from s2s_ad import callplan

    for k, scale in enumerate((2.0, 3.0, 5.0, 3.0)):
        # a plain function (not a closure) made anew each time, perhaps at a freed id
        m = _module(tmp_path, f"plan_mod_{k}", f"""
            def f(x, y):
                return {scale} * x * x * y
            """)
        for x in (0.5, 0.75):
            value, vjp_fn = s2s_ad.vjp(m.f, x, 2.0)
            dx, dy = vjp_fn(1.0)
            assert dx == 2 * scale * x * 2.0 and dy == scale * x * x
        assert id(m.f) in callplan._plans
        key = id(m.f)
        del m, value, vjp_fn
        gc.collect()
        assert key not in callplan._plans
