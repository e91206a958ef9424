"""Bugs found by adversary 12 (pops in expressions, functools.partial,
quantile/axis statics, late binding, the derivative's __call__). Each
derivative is compared with central differences in float64 of the original
function; none is marked xfail: each fails until its bug is fixed."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.modules import import_source

SRC = '''
import functools
import math

import numpy as np


def alias_then_pop(x, y):
    xs = [x, y]
    ys = xs
    v = xs.pop()
    return ys[-1] * 10.0 + v


def alias_pop_in_expression(x, y):
    xs = [x, y, x * y]
    ys = xs
    return ys[-1] * xs.pop() + ys[-1]


def alias_len_after_pop(x, y):
    xs = [x, y]
    ys = xs
    v = xs.pop()
    return len(ys) * v


def pop_last(xs):
    return xs.pop() * 2.0


def helper_pops_callers_list(x, y):
    xs = [x, y]
    a = pop_last(xs)
    return a + xs[-1] * 10.0


def closure_reads_after_pop(x, y):
    xs = [x, y, x * y]
    def last():
        return xs[-1]
    v = xs.pop()
    return v * 10.0 + last()


def lambda_reads_after_pop(x, y):
    xs = [x, y, x * y]
    last = lambda: xs[-1]
    return xs.pop() * 10.0 + last()


def closure_len_after_pop(x, y):
    xs = [x, y, x * y]
    def n():
        return len(xs)
    a = xs.pop()
    return a * n()


def take(hs):
    return hs.pop() * 2.0


def stack_popped_by_helper(x, y, n):
    hs = []
    for i in range(n):
        hs.append(x * i + y)
    s = 0.0
    while hs:
        s = s + take(hs)
    return s


def stack_alias_len(x, y, n):
    hs = []
    for i in range(n):
        hs.append(x * i + y)
    gs = hs
    s = 0.0
    while hs:
        s = s + hs.pop() * len(gs)
    return s


def stack_closure(x, y, n):
    hs = []
    for i in range(n):
        hs.append(x * i + y)
    def top():
        return hs[-1]
    s = 0.0
    while len(hs) > 1:
        v = hs.pop()
        s = s + v * top()
    return s


def mean_over_no_axes(x):
    return np.sum(np.mean(x, axis=()) * x)


def var_over_no_axes(x):
    return np.sum(np.var(x, axis=()) + x * x)


def mean_axis_param(x, ax):
    return np.sum(np.mean(x, axis=ax) * x)


def g3(a, b, c=1.0):
    return a * b * c


P = functools.partial(g3, 2.0)


def use_module_partial(x):
    return P(x)


def first_scaled(xs, a):
    return xs[0] * a + xs[-1] * 2.0


PL = functools.partial(first_scaled, [1.0, 2.0])


def use_module_partial_list(x):
    return PL(x)
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(tmp_path_factory.mktemp("found_adversary12"), SRC,
                         "found_adversary12_src")


def _fd(f, args, i, h=1e-6):
    up, down = list(args), list(args)
    up[i] += h
    down[i] -= h
    return (f(*up) - f(*down)) / (2 * h)


def _check_grad(f, args):
    wrt = tuple(i for i, a in enumerate(args) if isinstance(a, float))
    want = [_fd(f, args, i) for i in wrt]
    got = s2s_ad.grad(f, wrt=wrt)(*args)
    got = got if isinstance(got, tuple) else (got,)
    assert np.allclose(got, want, rtol=1e-6, atol=1e-8), (got, want)
    value, pullback = s2s_ad.vjp(f, *args)
    assert np.isclose(value, f(*args)), (value, f(*args))


@pytest.mark.parametrize("name", ["alias_then_pop", "alias_pop_in_expression",
                                  "alias_len_after_pop"])
def test_pop_seen_through_an_alias(mod, name):
    """``ys = xs`` names the same list: a pop of ``xs`` is seen by ``ys``
    (s2s-ad read ``ys`` as the list before the pop: value 14.3, not 8.3)."""
    _check_grad(getattr(mod, name), (0.7, 1.3))


def _refused(f, args, words):
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(f)(*args)
    text = str(info.value)
    assert "found_adversary12_src.py:" in text and "^" in text and words in text, text


def test_helper_popping_the_callers_list(mod):
    """A helper's ``xs.pop()`` of a list the caller passed changes the
    caller's list; s2s-ad read the caller's ``xs[-1]`` as the popped item.
    Refused now, located, as ``xs.pop(0)`` there was: a change of the
    caller's list."""
    _refused(mod.helper_pops_callers_list, (0.7, 1.3), "changes a list or dict the caller passed")


def test_module_partial_rebound(mod):
    """A module-level ``functools.partial`` given a new value: Python calls
    the new one; ``grad`` (the one returned before, and a fresh call of
    ``grad``, which returned the cached code) kept the old bound argument
    (2.0, not 5.0)."""
    import functools
    held = s2s_ad.grad(mod.use_module_partial)
    assert held(0.7) == pytest.approx(_fd(mod.use_module_partial, (0.7,), 0))
    old = mod.P
    try:
        mod.P = functools.partial(mod.g3, 5.0)
        want = _fd(mod.use_module_partial, (0.7,), 0)
        assert want == pytest.approx(5.0)
        assert s2s_ad.grad(mod.use_module_partial)(0.7) == pytest.approx(want)
        assert held(0.7) == pytest.approx(want)
        mod.P = functools.partial(mod.g3, 2.0, c=4.0)
        want = _fd(mod.use_module_partial, (0.7,), 0)
        assert s2s_ad.grad(mod.use_module_partial)(0.7) == pytest.approx(want)
    finally:
        mod.P = old


@pytest.mark.parametrize("name", ["closure_reads_after_pop", "lambda_reads_after_pop",
                                  "closure_len_after_pop"])
def test_pop_seen_by_a_closure(mod, name):
    """A nested function (or lambda) reading ``xs`` called after
    ``xs.pop()`` sees the shorter list (``xs.pop(0)`` there is right);
    s2s-ad's value was 10.01, Python's 10.4."""
    _check_grad(getattr(mod, name), (0.7, 1.3))


def test_stack_popped_by_a_helper_terminates(mod):
    """``while hs: s = s + take(hs)``, the helper popping the run-time
    stack: the generated ``while len(hs) > 0`` never shortens ``hs`` (the
    helper's counter is its own), so the derivative loops forever."""
    import signal

    def stop(*_):
        raise TimeoutError("the derivative did not return within 20 s")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(20)
    try:  # refused now, located: the helper pops the caller's list
        _refused(mod.stack_popped_by_helper, (0.7, 1.3, 4), "is supported on a list built")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("name", ["stack_alias_len", "stack_closure"])
def test_run_time_stack_seen_through_alias_or_closure(mod, name):
    """A run-time stack (``while hs: ... hs.pop()``) read through an alias
    (``len(gs)``) or a closure (``hs[-1]``): s2s-ad read the list before the
    pops (value 37.6, not 17.6, for the alias). Refused now, located: the
    counter of the items left would stand for the pops of ``hs`` alone."""
    _refused(getattr(mod, name), (0.7, 1.3, 4), "read by another name or a nested function")


def test_module_partial_bound_list_changed_in_place(mod):
    """A module-level partial binding a list of numbers (allowed: "numbers,
    strings, None, tuples and lists of them"), the list changed in place:
    Python's call sees 5.0; the held and a fresh ``grad`` kept 1.0."""
    held = s2s_ad.grad(mod.use_module_partial_list)
    assert held(0.7) == pytest.approx(_fd(mod.use_module_partial_list, (0.7,), 0))
    bound = mod.PL.args[0]
    try:
        bound[0] = 5.0
        want = _fd(mod.use_module_partial_list, (0.7,), 0)
        assert want == pytest.approx(5.0)
        assert s2s_ad.grad(mod.use_module_partial_list)(0.7) == pytest.approx(want)
        assert held(0.7) == pytest.approx(want)
    finally:
        bound[0] = 1.0


def _fd_array(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        g[i] = (f(up) - f(down)) / (2 * h)
    return g


@pytest.mark.parametrize("name", ["mean_over_no_axes", "var_over_no_axes", "mean_axis_param"])
def test_mean_var_over_an_empty_tuple_of_axes(mod, name):
    """``axis=()`` (NumPy reduces over no axis: the mean is ``x``, the
    variance 0), written or given to a parameter (a tuple: static): an
    IndexError in s2s_ad/rules/templates.py's _reduced_size."""
    x = np.array([[0.3, -0.5, 1.1], [0.8, -0.2, 0.45]])
    if name == "mean_axis_param":
        f = mod.mean_axis_param
        got = s2s_ad.grad(f, wrt=0)(x, ())
        want = _fd_array(lambda a: f(a, ()), x)
    else:
        f = getattr(mod, name)
        got = s2s_ad.grad(f)(x)
        want = _fd_array(f, x)
    assert np.allclose(got, want, rtol=1e-6, atol=1e-8)


def test_arrays_given_as_positions_is_a_type_error(mod):
    """``gradient_source(f, arrays=[0])`` (a position, not a name) raised an
    AttributeError from inside s2s-ad; it is a TypeError saying what it takes."""
    with pytest.raises(TypeError, match="arrays must be a sequence of parameter names"):
        s2s_ad.gradient_source(mod.mean_over_no_axes, arrays=[0])
