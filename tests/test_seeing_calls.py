"""A derivative of a function calling a helper (or reading a module constant,
or having defaults) runs behind a check that what decided its code is
unchanged; the check is written out as the derivative's own ``__call__``
(s2s_ad/late_constants.py). These tests change what the function reads
between calls, many times, and compare every gradient with central
differences: the call written for the first code must never run the code of
a function read no more."""

import math

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient, make_function

CALLS = '''
def helper(a, b):
    return a * b + a

def other(a, b):
    return math.sin(a) * b

def cube(a, b):
    return a * a * a - b

def f(x, y):
    return helper(x, y) * y + helper(y, x)
'''


def _module():
    ns = {}
    f = make_function(CALLS, "f", env={"math": math, "__name__": "seeing_mod"})
    ns = f.__globals__
    return f, ns


def test_rebinding_the_helper_again_and_again():
    f, ns = _module()
    g = s2s_ad.grad(f, wrt=(0, 1))
    assert type(g).__name__ == "Seeing"
    helpers = [ns["helper"], ns["other"], ns["cube"]]
    for k in range(9):
        ns["helper"] = helpers[k % 3]
        for x, y in ((0.7, -0.4), (1.3, 0.9)):
            got = g(x, y)
            for i in (0, 1):
                assert math.isclose(got[i], fd_gradient(f, [x, y], i), rel_tol=1e-6, abs_tol=1e-9)
    assert s2s_ad.grad(f, wrt=(0, 1)) is s2s_ad.grad(f, wrt=(0, 1))


def test_arguments_of_other_kinds_take_the_slow_way_and_agree():
    f, ns = _module()
    g = s2s_ad.grad(f)
    assert math.isclose(g(0.5, 2.0), fd_gradient(f, [0.5, 2.0], 0), rel_tol=1e-6)
    assert math.isclose(g(y=2.0, x=0.5), fd_gradient(f, [0.5, 2.0], 0), rel_tol=1e-6)
    x = np.array([0.5, -1.5])
    np.testing.assert_allclose(g(x, 2.0), fd_gradient(f, [x, 2.0], 0), rtol=1e-6)
    with pytest.raises(TypeError):
        g(0.5)


DEFAULTS = '''
def helper(a):
    return a * a

def f(x, k=2.0, *, z=0.5):
    return helper(x) * k + z * x
'''


def test_defaults_set_anew_between_calls():
    f = make_function(DEFAULTS)
    g = s2s_ad.grad(f)
    for k, z in ((5.0, 0.5), (2.0, -1.0), (-1.5, 3.0)):
        f.__defaults__ = (k,)
        f.__kwdefaults__ = {"z": z}
        assert math.isclose(g(0.7), fd_gradient(f, [0.7], 0), rel_tol=1e-6)
        assert math.isclose(g(0.7, 1.0), fd_gradient(lambda x: f(x, 1.0), [0.7], 0), rel_tol=1e-6)


LISTS = '''
def helper(c, x):
    return c * x + 1.0

def f(cs, x):
    s = 0.0
    for c in cs:
        s = helper(s, x) + c
    return s
'''


def test_list_arguments_of_new_lengths_behind_the_check():
    f = make_function(LISTS)
    g = s2s_ad.grad(f, wrt=1)
    for n in (3, 5, 1, 3):
        cs = [0.1 * (k + 1) for k in range(n)]
        assert math.isclose(g(cs, 0.8), fd_gradient(lambda x: f(cs, x), [0.8], 0), rel_tol=1e-6)
    f.__globals__["helper"] = lambda c, x: c * x * x + 1.0
    cs = [0.3, -0.2]
    assert math.isclose(g(cs, 0.8), fd_gradient(lambda x: f(cs, x), [0.8], 0), rel_tol=1e-6)


SQRT = '''
def helper(a):
    return math.sqrt(a) * 3.0

def f(x, y):
    return helper(x) + helper(y) * y

def plain(x, y):
    return math.sqrt(x) * y
'''


@pytest.mark.parametrize("name", ["f", "plain"])
def test_a_traceback_through_the_call_shows_the_generated_lines(name):
    # The derivative's call holds the generated code's body itself (one call
    # fewer); its lines, comments included, are what a traceback shows.
    f = make_function(SQRT, name, env={"math": math, "__name__": "seeing_sqrt"})
    g = s2s_ad.grad(f)
    assert math.isclose(g(0.7, 1.3), fd_gradient(f, [0.7, 1.3], 0), rel_tol=1e-6)
    with pytest.raises(ValueError) as info:
        g(-1.0, 1.3)
    shown = [e.statement for e in info.traceback if "s2s-ad call of" in str(e.path)]
    assert shown and "math.sqrt(x)" in str(shown[-1])
    lines = [e for e in info.traceback if "s2s-ad call of" in str(e.path)]
    source = "".join(__import__("linecache").getlines(str(lines[-1].path)))
    assert "# line" in source and "math.sqrt" in source


RULES = '''
def helper(a):
    return a * a

def f(x, y):
    return helper(x) * y + y
'''


def five_fwd(a):
    return a * a, a


def five_bwd(a, g):
    return (5.0 * g,)  # deliberately not the function's derivative (2a): seen in the result


def test_a_rule_given_to_the_helper_after_the_derivative_was_made():
    # The check reads the helper's rule attribute as a look into its
    # __dict__; a rule set later, then set to None, then removed, is seen.
    f = make_function(RULES, "f", env={"math": math, "__name__": "seeing_rules"})
    helper = f.__globals__["helper"]
    g = s2s_ad.grad(f)
    assert math.isclose(g(0.7, 1.3), 2 * 0.7 * 1.3, rel_tol=1e-12)
    helper.__s2s_ad_vjp__ = (five_fwd, five_bwd)
    assert math.isclose(g(0.7, 1.3), 5.0 * 1.3, rel_tol=1e-12)
    helper.__s2s_ad_vjp__ = None
    assert math.isclose(g(0.7, 1.3), fd_gradient(f, [0.7, 1.3], 0), rel_tol=1e-6)
    del helper.__s2s_ad_vjp__
    assert math.isclose(g(0.7, 1.3), fd_gradient(f, [0.7, 1.3], 0), rel_tol=1e-6)


def test_keyword_defaults_of_a_helper_without_keyword_parameters_change_nothing():
    # (not watched: they bind no parameter); those of one with them are
    f = make_function(DEFAULTS, "f", env={"math": math, "__name__": "seeing_kw"})
    helper = f.__globals__["helper"]
    g = s2s_ad.grad(f)
    helper.__kwdefaults__ = {"z": 4.0}
    assert math.isclose(g(0.7), fd_gradient(f, [0.7], 0), rel_tol=1e-6)
    f.__kwdefaults__ = {"z": -2.0}
    assert math.isclose(g(0.7), fd_gradient(f, [0.7], 0), rel_tol=1e-6)


CALLED = '''
def h(x):
    return K * math.sin(x) * x

def plain(x):
    return math.sin(x) * x * x

def loss(x):
    return dh(x) * x

def loss_plain(x):
    return dplain(x) * x
'''


def test_a_rechecked_derivative_called_by_a_differentiated_function_is_read_and_watched():
    # (a derivative re-reading a module constant may change its code between
    # calls: the function calling it is differentiated through the code it
    # runs now, and its own derivative sees the constant change too)
    f = make_function(CALLED, "loss", env={"math": math, "K": 2.0, "__name__": "seeing_called"})
    ns = f.__globals__
    ns["dh"] = s2s_ad.grad(ns["h"])
    ns["dplain"] = s2s_ad.grad(ns["plain"])
    assert type(ns["dh"]).__name__ == "Seeing"
    lp = ns["loss_plain"]
    assert math.isclose(s2s_ad.grad(lp)(0.7), fd_gradient(lp, [0.7], 0), rel_tol=1e-6)
    g = s2s_ad.grad(f)
    assert math.isclose(g(0.7), fd_gradient(f, [0.7], 0), rel_tol=1e-6)
    ns["K"] = 3.0
    assert math.isclose(g(0.7), fd_gradient(f, [0.7], 0), rel_tol=1e-6)
    assert math.isclose(s2s_ad.grad(f)(0.7), g(0.7), rel_tol=1e-12)
    ns["K"] = 2.0
    assert math.isclose(g(0.7), fd_gradient(f, [0.7], 0), rel_tol=1e-6)


STEPPED = '''
def f(x, y):
    return math.sin(x * T) * y
'''


def test_a_constant_changed_on_every_step_keeps_the_cache_bounded(monkeypatch):
    # each new value of T is new code; past cache.LIMIT entries the one asked
    # for least recently is dropped, and every gradient is still right
    from s2s_ad import cache
    monkeypatch.setattr(cache, "LIMIT", 8)
    s2s_ad.clear_cache()
    f = make_function(STEPPED, "f", env={"math": math, "T": 0.1, "__name__": "seeing_stepped"})
    g = s2s_ad.grad(f)
    for i in range(30):
        f.__globals__["T"] = 0.1 + 0.01 * i
        assert math.isclose(g(0.3, 1.2), fd_gradient(f, [0.3, 1.2], 0), rel_tol=1e-6)
        assert s2s_ad.cache_info().size <= 8
    f.__globals__["T"] = 0.1 + 0.01 * 29  # the newest value: still a hit
    misses = s2s_ad.cache_info().misses
    assert math.isclose(g(0.5, 1.2), fd_gradient(f, [0.5, 1.2], 0), rel_tol=1e-6)
    assert s2s_ad.cache_info().misses == misses
