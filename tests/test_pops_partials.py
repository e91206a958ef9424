"""``xs.pop()`` inside expressions (s2s_ad/frontend/pop_order.py), ``while xs:``
and ``while len(xs) > 0:`` over a stack grown at run time
(s2s_ad/frontend/generated.py's stack tapes), and ``functools.partial``
bound in the function or at module level and then called. Each was refused
("`xs` is a local value, not something s2s-ad can call or look into", "the
call `functools.partial` is not supported"). Every derivative against
central differences in float64 (``grad``, ``jvp``, ``vjp``, the CLI's
module in a fresh interpreter), in helpers and loops; the evaluation order
of a pop against the reads around it; each refusal located."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import s2s_ad
from tests.modules import cli_grad, import_source

SRC = '''
import functools
import math
from functools import partial


def pop_expr(x, y):
    xs = [x, y, x * y]
    a = xs.pop() * 2.0
    return a + xs.pop(0) * xs[0]


def read_then_pop(x, y):
    xs = [x, y]
    return xs[-1] * xs.pop()


def pop_then_read(x, y):
    xs = [x, y]
    return xs.pop() * xs[-1]


def pops_in_calls(x, y):
    xs = [x, y, x * y, math.cos(x), y * y, x - y, 0.5]
    s = x
    s += math.sin(xs.pop())
    c = [1.0, y]
    c[1] += xs.pop() * xs[-1]
    t = max(xs[0], xs.pop()) + len(xs)
    u = (2.0 if xs.pop() > 0.0 else 3.0) * xs[-1]
    return s * c[1] + t * (xs[-1] + xs.pop(0) * xs[0]) + u


def pops_in_loop(x, y):
    xs = [x, y, x * y, y * y]
    s = 0.0
    for i in range(3):
        s = s * 0.5 + math.sin(xs.pop()) * xs[-1]
    return s + xs[0]


def stack_sum(x, y, n):
    hs = []
    for i in range(n):
        hs.append(x * (i + 1) + y)
    s = 0.0
    while hs:
        s = s * 0.5 + math.sin(hs.pop())
    return s


def stack_len(x, y, n):
    hs = []
    for i in range(n):
        hs.append(x * (i + 1) - y)
    s = 0.0
    while len(hs) > 1:
        s = s * 0.5 + hs[-1] * math.sin(hs.pop()) * hs[0] + len(hs)
    return s + hs[0] * y


def stack_and(x, y, n):
    hs = []
    for i in range(n):
        hs.append(x * (i + 1) * y)
    s = 0.0
    while hs and s < 10.0:
        s = hs[-1] * s + hs.pop()
    return s


def in_helper(x, y):
    s = 0.0
    for k in range(2):
        s = s + pop_expr(x * (k + 1.0), y) + stack_sum(x, y * k, 3)
    return s + read_then_pop(x, y) * pop_then_read(y, x)


def partial_inside(x, y):
    def scaled(a, k):
        return a * k
    f = functools.partial(scaled, k=y)
    return f(x) + f(y * y)


def helper_pow(a, p=2):
    return a ** p


def partial_local(x):
    cube = functools.partial(helper_pow, p=3)
    return cube(x) + helper_pow(x)


CUBE = functools.partial(helper_pow, p=3)


def affine(a, b, c, scale=1.0):
    return (a * b + c) * scale


def partial_module(x, y):
    return CUBE(x) * y + CUBE(y, p=2)


def partial_positional(x, y):
    g = partial(affine, x, scale=y)
    h = partial(g, y)
    s = 0.0
    for i in range(3):
        s = s + g(y, x * i) + h(i * 1.0, scale=2.0)
    return s


def partial_in_helper(x, y):
    return partial_inside(x, y) * partial_positional(y, x) + partial_module(x, y)
'''

ARGS = {"pop_expr": (0.7, 1.3), "read_then_pop": (0.7, 1.3), "pop_then_read": (0.7, 1.3),
        "pops_in_calls": (0.7, 1.3), "pops_in_loop": (0.7, 1.3), "stack_sum": (0.7, 0.2, 5),
        "stack_len": (0.7, 0.2, 5), "stack_and": (0.7, 0.4, 5), "in_helper": (0.7, 1.3),
        "partial_inside": (0.7, 1.3), "partial_local": (0.7,), "partial_module": (0.7, 1.3),
        "partial_positional": (0.7, 1.3), "partial_in_helper": (0.7, 1.3)}
POPS = ["pop_expr", "read_then_pop", "pop_then_read", "pops_in_calls", "pops_in_loop",
        "stack_sum", "stack_len", "stack_and", "in_helper"]
PARTIALS = ["partial_inside", "partial_local", "partial_module", "partial_positional",
            "partial_in_helper"]


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(tmp_path_factory.mktemp("pops_partials"), SRC, "pops_partials_src")


def _floats(args):
    return [i for i, a in enumerate(args) if isinstance(a, float)]


def _fd(f, args, i, h=1e-6):
    up, down = list(args), list(args)
    up[i] += h
    down[i] -= h
    return (f(*up) - f(*down)) / (2 * h)


@pytest.mark.parametrize("name", POPS + PARTIALS)
def test_against_central_differences(mod, name):
    f, args = getattr(mod, name), ARGS[name]
    wrt = _floats(args)
    want = [_fd(f, args, i) for i in wrt]
    got = s2s_ad.grad(f, wrt=tuple(wrt))(*args)
    assert np.allclose(got, want, rtol=1e-6, atol=1e-8), (got, want)
    # jvp along each float parameter
    for i, w in zip(wrt, want):
        tangents = {f"d{f.__code__.co_varnames[j]}": float(j == i) for j in wrt}
        value, tangent = s2s_ad.jvp(f, wrt=tuple(wrt))(*args, **tangents)
        assert np.isclose(value, f(*args)) and np.isclose(tangent, w, rtol=1e-6, atol=1e-8)
    value, pullback = s2s_ad.vjp(f, *args)
    back = pullback(2.0)
    assert np.isclose(value, f(*args))
    assert np.allclose([back[i] for i in wrt], [2.0 * w for w in want], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["pops_in_calls", "stack_len", "partial_positional",
                                  "partial_in_helper"])
def test_cli_module(mod, tmp_path, name):
    """``s2s-ad grad file.py:name -o out.py``, the module run in a fresh
    interpreter: a gradient per float parameter."""
    f, args = getattr(mod, name), ARGS[name]
    got = cli_grad(tmp_path, SRC, name, list(args))
    want = [_fd(f, args, i) for i in _floats(args)]
    assert np.allclose([float(g) for g in got], want, rtol=1e-6, atol=1e-8)


def test_evaluation_order(mod):
    """``xs[-1] * xs.pop()`` reads the last item before popping it (y * y);
    ``xs.pop() * xs[-1]`` after (y * x): different gradients, each Python's."""
    x, y = 0.7, 1.3
    assert mod.read_then_pop(x, y) == pytest.approx(y * y)
    assert mod.pop_then_read(x, y) == pytest.approx(y * x)
    assert s2s_ad.grad(mod.read_then_pop, wrt=(0, 1))(x, y) == pytest.approx((0.0, 2 * y))
    assert s2s_ad.grad(mod.pop_then_read, wrt=(0, 1))(x, y) == pytest.approx((y, x))


REFUSED = '''
import math


def under_or(x):
    xs = [x, 2.0 * x]
    return x > 1.0 or xs.pop() > 0.0


def in_arm(x):
    xs = [x, 2.0 * x]
    return xs.pop() if x > 0.0 else x


def in_comprehension(x):
    xs = [x, 2.0 * x, 3.0]
    return sum([xs.pop() for _ in range(2)])


def in_while_test(x):
    xs = [x, 2.0 * x, 3.0]
    s = 0.0
    while xs.pop() > 1.0:
        s = s + x
    return s


def after_starred(x):
    xs = [x, 2.0 * x, 3.0]
    return max(*xs, xs.pop())


def worklist(x, n):
    hs = []
    for i in range(n):
        hs.append(x * (i + 1))
    s = 0.0
    while hs:
        h = hs.pop()
        if h > 1.0:
            hs.append(h * 0.25)
        s = s + math.sin(h)
    return s
'''

REFUSALS = [
    ("under_or", (0.5,), 7, "xs.pop()", "is under `or` (it may not run)"),
    ("in_arm", (0.5,), 12, "xs.pop()", "is in an arm of `a if c else b`"),
    ("in_comprehension", (0.5,), 17, "xs.pop()", "is in a comprehension"),
    ("in_while_test", (0.5,), 23, "xs.pop()", "is in a `while` condition"),
    ("after_starred", (0.5,), 30, "xs.pop()", "follows a `*`/`**` unpacking"),
    ("worklist", (0.5, 3), 39, "hs.pop()",
     "`hs.pop()` is supported on a list built in the function"),
]


@pytest.mark.parametrize("name,args,line,needle,message", REFUSALS)
def test_refusals_are_located(tmp_path, name, args, line, needle, message):
    """Each refusal names the file, line and column of the pop, with a caret
    under it."""
    mod = import_source(tmp_path, REFUSED, "pops_refused")
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(getattr(mod, name))(*args)
    text = str(info.value)
    source_line = REFUSED.splitlines()[line - 1]
    col = source_line.index(needle)
    assert f"pops_refused.py:{line}:{col + 1}: error: " in text, text
    assert message in text
    lines = text.splitlines()
    shown = next(k for k, s in enumerate(lines) if s.strip() == source_line.strip())
    assert lines[shown + 1].index("^") == lines[shown].index(needle), text


REFUSED_PARTIALS = '''
import functools


def scaled(a, k):
    return a * k


def apply(g, v):
    return g(v)


def made_in_loop(x):
    s = 0.0
    for i in range(3):
        f = functools.partial(scaled, k=x * i)
        s = s + f(x)
    return s


def passed_on(x):
    f = functools.partial(scaled, k=x)
    return apply(f, x)


def with_array(x):
    return ARRAY_BOUND(x)


ARRAY_BOUND = functools.partial(scaled, k=__import__("numpy").ones(2))
'''

PARTIAL_REFUSALS = [
    ("made_in_loop", 16, "functools.partial(", "made inside a loop or a branch"),
    ("passed_on", 23, "f, x", "`f` is a functools.partial; s2s-ad calls it"),
    ("with_array", 27, "ARRAY_BOUND", "binding `k` to a ndarray"),
]


@pytest.mark.parametrize("name,line,needle,message", PARTIAL_REFUSALS)
def test_partial_refusals_are_located(tmp_path, name, line, needle, message):
    mod = import_source(tmp_path, REFUSED_PARTIALS, "partials_refused")
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(getattr(mod, name))(0.5)
    text = str(info.value)
    source_line = REFUSED_PARTIALS.splitlines()[line - 1]
    col = source_line.index(needle)
    assert f"partials_refused.py:{line}:{col + 1}: error: " in text, text
    assert message in text, text
    lines = text.splitlines()
    shown = next(k for k, s in enumerate(lines) if s.strip() == source_line.strip())
    assert lines[shown + 1].index("^") == lines[shown].index(needle), text


def test_a_module_partial_rebound_or_changed_gets_new_code(mod):
    # the code calls the partial's function with its bound values written in:
    # rebinding the module's name, or changing its keywords in place, must be
    # seen by a derivative returned before and by a new one (both kept the
    # first partial's p=3 before)
    f, args = mod.partial_module, (0.7, 1.3)
    g = s2s_ad.grad(f, wrt=(0, 1))
    saved = mod.CUBE
    try:
        for new in (functools.partial(mod.helper_pow, p=4), functools.partial(mod.helper_pow, p=2),
                    functools.partial(mod.helper_pow, p=1.5)):
            mod.CUBE = new
            for h in (g, s2s_ad.grad(f, wrt=(0, 1))):
                assert np.allclose(h(*args), [_fd(f, args, 0), _fd(f, args, 1)], rtol=1e-6)
        mod.CUBE = functools.partial(mod.helper_pow, p=3)
        assert np.allclose(g(*args), [_fd(f, args, 0), _fd(f, args, 1)], rtol=1e-6)
        mod.CUBE.keywords["p"] = 5
        assert np.allclose(g(*args), [_fd(f, args, 0), _fd(f, args, 1)], rtol=1e-6)
    finally:
        mod.CUBE = saved


DICT_POPS = '''
def dpop(x, y):
    d = {"a": x, "b": y, "c": x * y}
    a = d.pop("a") * 2.0
    d.pop("b")
    return a + d.get("b", 1.5) * y + d["c"] + d.pop("z", x) * len(d)


def dpop_loop(x, y):
    d = {"k0": x, "k1": y}
    s = 0.0
    for i in range(3):
        e = {"a": x * i, "b": y}
        s = s + e.pop("a") * e["b"]
    return s + d.pop("k1") * x


def helper(opts, x):
    return x * opts.pop("lr", 0.1)


def dpop_caller(x, y):
    return helper({"lr": y}, x)
'''


@pytest.mark.parametrize("name", ["dpop", "dpop_loop"])
def test_dict_pops(tmp_path, name):
    # `d.pop(k)` and `d.pop(k, default)` of a dict built in the function (they
    # were refused with a message about lists), in expressions and statements
    f = getattr(import_source(str(tmp_path), DICT_POPS, f"dict_pops_{name}"), name)
    args = (0.7, 1.3)
    want = [_fd(f, args, 0), _fd(f, args, 1)]
    assert np.allclose(s2s_ad.grad(f, wrt=(0, 1))(*args), want, rtol=1e-6, atol=1e-8)
    value, tangent = s2s_ad.jvp(f, wrt=(0, 1))(*args, dx=1.0, dy=0.0)
    assert np.isclose(value, f(*args)) and np.isclose(tangent, want[0], rtol=1e-6)


def test_a_helper_popping_its_callers_dict_is_refused_located(tmp_path):
    f = import_source(str(tmp_path), DICT_POPS, "dict_pops_caller").dpop_caller
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(f)(0.7, 1.3)
    text = str(info.value)
    assert "dict_pops_caller.py:" in text and "^" in text and "the caller passed" in text
