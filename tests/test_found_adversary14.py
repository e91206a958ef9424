"""Wrong derivatives, crashes and refusals in one position of a construct
taken in another. Each derivative is compared with central differences in
float64 of the original function (second derivatives with central
differences of the gradient); none is marked xfail: each fails until its bug
is fixed."""

from __future__ import annotations

import math

import numpy as np
import pytest

import s2s_ad
from tests.modules import import_source

SRC = '''
import math


def count_from_float(x, y):
    n = int(y * 3)
    s = 0.0
    for i in range(n):
        s = s + x ** i
    return s * y


def steps(x, t):
    n = int(t * 2)
    s = x
    for i in range(n):
        s = s * 0.9 + t
    return s


def helper_count_from_float(x, y):
    return steps(x, y) * y


def index_from_float(x, y):
    xs = [x, x * x, x * y, y]
    return xs[int(y * 2)] * y + xs[math.floor(x * 3)]


def length_from_float(x, y):
    xs = [x] * int(y * 3)
    return sum(xs) * y
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(tmp_path_factory.mktemp("found_adversary14"), SRC,
                         "found_adversary14_src")


def _fd(f, args, i, h=1e-6):
    up, down = list(args), list(args)
    up[i] += h
    down[i] -= h
    return (f(*up) - f(*down)) / (2 * h)


@pytest.mark.parametrize("name", ["count_from_float", "helper_count_from_float",
                                  "index_from_float", "length_from_float"])
@pytest.mark.parametrize("api", ["grad", "vjp", "jvp", "hvp"])
def test_float_made_an_int_by_int_or_floor(mod, name, api):
    """`n = int(y * 3)` used as a range bound, a list index or a list's
    length marked `y` as an integer parameter, though `int` (`round`,
    `math.floor`, ...) makes an int of a float and `y` is used as a float
    besides (`s * y`): grad refused ("it is used as an integer") where jvp
    took it, and vjp returned None for `y` (count_from_float at (0.7, 1.3):
    None for 2.19; index_from_float: None for both, 2.99 and 2.52). The
    integer cuts the derivative (zero almost everywhere), not its operand."""
    f = getattr(mod, name)
    args = (0.7, 1.3)
    want = [_fd(f, args, i) for i in (0, 1)]
    if api == "grad":
        got = s2s_ad.grad(f, wrt=(0, 1))(*args)
    elif api == "vjp":
        got = s2s_ad.vjp(f, *args)[1](1.0)
    elif api == "jvp":
        got = [s2s_ad.jvp(f)(*args, dx=1.0, dy=0.0)[1], s2s_ad.jvp(f)(*args, dx=0.0, dy=1.0)[1]]
    else:
        g = s2s_ad.grad(f, wrt=1)
        got = [s2s_ad.hvp(f, wrt=1)(*args, 1.0)]
        want = [(g(0.7, 1.3 + 1e-5) - g(0.7, 1.3 - 1e-5)) / 2e-5]
    assert np.allclose(got, want, rtol=1e-5, atol=1e-6), (got, want)


CHECKPOINT_SRC = '''
import math

import numpy as np


def grown_inner(x, n, m):
    y = x
    for i in range(n):
        xs = []
        for j in range(m):
            xs.append(math.sin(y * (j + 1)))
        y = max(xs) * 0.5 + sum(xs) * 0.2 + y * 0.3
    return y


def filtered_while(x):
    y = x
    k = 0
    while k < 5:
        y = sum(t * t for t in (y, x, y * x) if t > 0.6) * 0.3 + 0.1
        k += 1
    return y


def filtered_break(x, n):
    y = x
    for i in range(n):
        y = sum(t * 0.5 for t in (y, x, y * x) if t < 1.0) + 0.2
        if y > 5.0:
            break
    return y


def filtered_array(x, n):
    v = np.array([x, 2.0 * x])
    for i in range(n):
        s = sum(t for t in (v[0], v[1], x) if t > 0.5)
        v = np.tanh(v * s) + 0.1
    return float(np.sum(v))


def grown_before(x, n, m):
    xs = [x]
    y = x
    for i in range(n):
        for j in range(m):
            xs.append(y * j)
        y = math.sin(y) + 0.1
    return y + sum(xs)
'''


@pytest.mark.parametrize("name, args", [
    ("grown_inner", (0.7, 6, 3)),
    ("filtered_while", (0.7,)),
    ("filtered_break", (0.7, 6)),
    ("filtered_array", (0.7, 5)),
])
@pytest.mark.parametrize("snapshots", [True, 1])
def test_checkpointed_loop_whose_body_grows_a_list_of_its_own(tmp_path, name, args, snapshots):
    """A list the loop's body makes afresh and appends to (an inner loop
    over `range(m)` with `m` known at run time; a filtered generator, which
    s2s-ad reads as `items = []` and an `append` in an arm) changes no
    value the loop carries, yet `checkpoint=` refused the loop ("appends to a
    list ... a snapshot would keep the list as it is at the end"), where the
    taped gradient took it."""
    src = import_source(tmp_path, CHECKPOINT_SRC, "found_adversary14_checkpoint")
    f = getattr(src, name)
    got = s2s_ad.grad(f, checkpoint=snapshots)(*args)
    assert np.isclose(got, s2s_ad.grad(f)(*args), rtol=1e-12, atol=1e-15)
    assert np.isclose(got, _fd(f, args, 0), rtol=1e-6, atol=1e-8)


def test_checkpointed_loop_growing_a_list_made_before_it_is_refused(tmp_path):
    src = import_source(tmp_path, CHECKPOINT_SRC, "found_adversary14_checkpoint_refused")
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(src.grown_before, checkpoint=True)(0.7, 4, 3)
    assert "found_adversary14_checkpoint_refused.py:" in str(info.value)
    assert "appends to a list" in str(info.value)


DEFAULTS_SRC = '''
COEF = [1.0, 2.0]


def list_default(x, y, c=COEF):
    return sum(c) * x * y + c[0] * x


def helper(t, c=COEF):
    return c[0] * t * t + c[1] * t


def helper_default(x, y):
    return helper(x) * y


def keyword_default(x, y, *, c=COEF):
    return c[0] * x * x + c[1] * y * x
'''


@pytest.mark.parametrize("name", ["list_default", "helper_default", "keyword_default"])
@pytest.mark.parametrize("change", ["item", "append"])
@pytest.mark.parametrize("api", ["grad held", "grad asked again", "jvp"])
def test_list_default_changed_in_place(tmp_path, name, change, api):
    """A list of numbers given as a default (`c=COEF`) is the very list
    `COEF`: `COEF[0] = 4.0` (or `COEF.append(3.0)`) after the derivative was
    made changes what the function computes, but the default stood in the
    cache key and the held derivative's check by identity, and the generated
    signature repeats the old items: list_default's gradient stayed 4.9
    (right: 11.8 after `COEF[0] = 4.0`, 8.8 after the append), asked for
    again too."""
    src = import_source(tmp_path, DEFAULTS_SRC, f"found_adversary14_defaults_{name}")
    f = getattr(src, name)
    made = {"grad held": lambda: s2s_ad.grad(f),
            "grad asked again": lambda: s2s_ad.grad(f),
            "jvp": lambda: (lambda x, y: s2s_ad.jvp(f, wrt=0)(x, y)[1])}
    held = made[api]()
    held(0.7, 1.3)
    if change == "item":
        src.COEF[0] = 4.0
    else:
        src.COEF.append(3.0)
    got = (made[api]() if api == "grad asked again" else held)(0.7, 1.3)
    assert np.isclose(got, _fd(f, (0.7, 1.3), 0), rtol=1e-6), got


NUMPY_JVP_SRC = '''
import math

import numpy as np

W = np.array([1.0, 2.0])


def literal_array(x, y):
    return float(np.sum(np.array([1.0, 2.0]) * x * x)) * y


def module_array(x, y):
    return float(np.sum(W * x * x)) * y


def plain(x, y):
    return math.sin(x) * y


def keyword_default(x, y, *, k=2.0):
    return float(np.tanh(x) * k) * y
'''


@pytest.mark.parametrize("name", ["literal_array", "module_array", "plain", "keyword_default"])
@pytest.mark.parametrize("wrt", [0, "x"])
def test_jvp_of_one_number_in_numpy_code_seeds_one(tmp_path, name, wrt):
    """`jvp(f, wrt=0)(0.7, 1.3)` takes `dx=1.0` by default for one number,
    but a function naming NumPy takes its parameters for arrays: its JVP's
    `dx` had no default, and the call raised a bare TypeError ("missing 1
    required keyword-only argument: 'dx'") where the same call of a math-only
    function returned (value, 5.46)."""
    src = import_source(tmp_path, NUMPY_JVP_SRC, f"found_adversary14_jvp_{name}")
    f = getattr(src, name)
    value, tangent = s2s_ad.jvp(f, wrt=wrt)(0.7, 1.3)
    assert np.isclose(value, f(0.7, 1.3))
    assert np.isclose(tangent, _fd(f, (0.7, 1.3), 0), rtol=1e-6)
    assert np.isclose(s2s_ad.jvp(f, wrt=wrt)(0.7, 1.3, dx=2.0)[1], 2 * tangent)
    if name != "plain":  # an array there still needs its tangent
        with pytest.raises(TypeError, match="dx"):
            s2s_ad.jvp(f, wrt=wrt)(np.array([0.7, 0.2]), 1.3)


INTEGER_ARRAYS_SRC = '''
import math

import numpy as np


def slices(a):
    return float(np.sum(np.sin(a[1:] * 0.3) * a[:-1]))


def tiles(a):
    return float(np.sum(np.sin(a[:2] * 0.3)) + np.sum(np.cos(a[2:] * 0.2)))


def fancy(a):
    return float(np.sum(np.sin(a[[0, 2, 2]] * 0.3)))


def strided(a):
    return float(np.sum(np.sin(a[::2] * 0.3)) + np.sum(a[1::2] * 0.1))


def rows_and_columns(A):
    return float(np.sum(np.sin(A[0, :] * 0.3)) + np.sum(np.cos(A[:, 1] * 0.2))
                 + np.sum(A.T[1:] * 0.5))


def unpacked(a):
    p, q, r = a
    return math.sin(p * 0.3) * q * 0.1 + r * 0.2


def stacked(a, b):
    return float(np.sum(np.sin(np.stack([a, b]) * 0.3)) + np.sum(np.concatenate([a, b])[1:] * 0.1))
'''


def _fd_array(f, args, i, h=1e-6):
    args = [np.asarray(a, dtype=float) for a in args]
    g = np.zeros_like(args[i])
    for k in np.ndindex(g.shape):
        up, down = [a.copy() for a in args], [a.copy() for a in args]
        up[i][k] += h
        down[i][k] -= h
        g[k] = (f(*up) - f(*down)) / (2 * h)
    return g


@pytest.mark.parametrize("name, args", [
    ("slices", ([1, 2, 3],)),
    ("tiles", ([1, 2, 3],)),
    ("fancy", ([1, 2, 3],)),
    ("strided", ([1, 2, 3],)),
    ("rows_and_columns", ([[1, 2, 3], [4, 5, 6]],)),
    ("unpacked", ([1, 2, 3],)),
    ("stacked", ([1, 2, 3], [2, 0, 1])),
])
@pytest.mark.parametrize("api", ["grad", "vjp", "hvp"])
def test_integer_array_argument_read_by_index(tmp_path, name, args, api):
    """An integer array argument (`np.array([1, 2, 3])`) read by a slice, an
    index or unpacking: the adjoint was scattered into zeros of the
    argument's dtype, an integer one, and every derivative was cut to an
    integer: `slices` got [0, 0, 0] for [0.565, 1.031, 0.373] (`stacked`:
    0.248 for 0.348, the concatenation's part lost). The zeros are float now."""
    src = import_source(tmp_path, INTEGER_ARRAYS_SRC, f"found_adversary14_int_{name}")
    f = getattr(src, name)
    ints = [np.array(a) for a in args]
    floats = [a.astype(float) for a in ints]
    if api == "grad":
        got = s2s_ad.grad(f, wrt=tuple(range(len(ints))))(*ints)
    elif api == "vjp":
        got = s2s_ad.vjp(f, *ints)[1](1.0)
    if api != "hvp":
        for i, g in enumerate(got):
            assert np.allclose(g, _fd_array(f, floats, i), rtol=1e-6, atol=1e-8), (i, g)
    else:
        v = np.ones(ints[0].shape)
        g = s2s_ad.grad(f, wrt=0)
        want = (g(floats[0] + 1e-5 * v, *floats[1:]) - g(floats[0] - 1e-5 * v, *floats[1:])) / 2e-5
        assert np.allclose(s2s_ad.hvp(f, wrt=0)(*ints, v), want, rtol=1e-5, atol=1e-7)


GETITEM_KEY_SRC = '''
def argmax_known_length(x, y):
    xs = [x, y * 0.5, x * y]
    i = max(range(len(xs)), key=xs.__getitem__)
    return xs[i] * 3.0 + sum(xs)


def argsort_known_length(x, y):
    xs = [x, y * 0.5, x * y]
    order = sorted(range(3), key=xs.__getitem__, reverse=True)
    return xs[order[0]] + 2.0 * xs[order[2]] + xs[min(range(3), key=xs.__getitem__)]


def pick(xs):
    i = max(range(len(xs)), key=xs.__getitem__)
    return xs[i] * 3.0


def argmax_in_helper(x, y):
    return pick([x, y * 0.5, x * y]) * y


def argmax_of_tuple(x, y):
    t = (x, y * 0.5, x * y)
    return t[max(range(3), key=t.__getitem__)]
'''


@pytest.mark.parametrize("name", ["argmax_known_length", "argsort_known_length",
                                  "argmax_in_helper", "argmax_of_tuple"])
@pytest.mark.parametrize("at", [(0.7, 1.3), (1.6, 0.4)])
def test_getitem_key_of_a_list_of_known_length(tmp_path, name, at):
    """`max(range(len(xs)), key=xs.__getitem__)` is taken for a list grown
    at run time, and `key=lambda k: xs[k]` for any list, but for a list of
    known length (built in the function, a helper's list parameter, a tuple)
    it was refused: "`xs` is a local value, not something s2s-ad can call or
    look into". The key is read as `xs[k]` now."""
    src = import_source(tmp_path, GETITEM_KEY_SRC, f"found_adversary14_key_{name}")
    f = getattr(src, name)
    want = [_fd(f, at, i) for i in (0, 1)]
    assert np.allclose(s2s_ad.grad(f, wrt=(0, 1))(*at), want, rtol=1e-6)
    assert np.allclose(s2s_ad.vjp(f, *at)[1](1.0), want, rtol=1e-6)
    assert np.isclose(s2s_ad.jvp(f)(*at, dx=1.0, dy=0.0)[1], want[0], rtol=1e-6)


FACTORY_SRC = '''
def make(coefs, d):
    def f(x, y):
        return coefs[0] * x * x + coefs[1] * x * y + d["k"] * x
    return f
'''


@pytest.mark.parametrize("api", ["grad", "jvp", "value_and_grad"])
def test_closure_list_grown_after_another_closure_of_its_factory(tmp_path, api):
    """Closures of one factory share their generated code. A captured list
    grown after the derivative was made (`coefs.append(3.0)`) needs code for
    its new length, but the lengths were read from the first closure's
    cells, not the closure called: the length-2 code ran and raised a bare
    ValueError ("too many values to unpack (expected 2)"; right: 9.2)."""
    src = import_source(tmp_path, FACTORY_SRC, f"found_adversary14_factory_{api}")
    first = src.make([1.0, 2.0], {"k": 1.0})
    coefs = [1.0, 2.0]
    f = src.make(coefs, {"k": 1.0})
    made = {"grad": lambda g: g,
            "jvp": lambda g: (lambda x, y: g(x, y)[1]),
            "value_and_grad": lambda g: (lambda x, y: g(x, y)[1])}[api]
    make = {"grad": s2s_ad.grad, "jvp": lambda h: s2s_ad.jvp(h, wrt=0),
            "value_and_grad": s2s_ad.value_and_grad}[api]
    made(make(first))(0.7, 1.3)
    held = made(make(f))
    held(0.7, 1.3)
    coefs.append(3.0)
    coefs[0] = 4.0
    assert np.isclose(held(0.7, 1.3), _fd(f, (0.7, 1.3), 0), rtol=1e-6)
    assert np.isclose(made(make(first))(0.7, 1.3), _fd(first, (0.7, 1.3), 0), rtol=1e-6)


UNPACKING_SRC = '''
import math


def unpacked(a):
    p, q, r = a
    return math.sin(p * 0.3) * q * 0.1 + r * r * 0.2
'''


@pytest.mark.parametrize("jacobian", ["jacfwd", "jacrev"])
@pytest.mark.parametrize("kind", ["array", "list"])
def test_jacobian_of_a_gradient_generated_per_length(tmp_path, jacobian, kind):
    """`grad(f)` of a function unpacking its parameter is generated per
    length, behind a function taking `*args, **kwargs`: `jacfwd(grad(f))`
    read that signature and raised WrtError ("grad_unpacked has no
    parameter 'args'") where `hessian(f)` and `jacfwd(grad(g))` of a `g`
    generated once work. It has `f`'s signature now."""
    src = import_source(tmp_path, UNPACKING_SRC, f"found_adversary14_unpack_{jacobian}_{kind}")
    g = s2s_ad.grad(src.unpacked)
    a = [0.5, 2.0, 3.0]
    point = np.array(a) if kind == "array" else a
    got = np.asarray(getattr(s2s_ad, jacobian)(g)(point))
    want = np.array([[-0.009 * math.sin(0.15) * 2.0, 0.03 * math.cos(0.15), 0.0],
                     [0.03 * math.cos(0.15), 0.0, 0.0],
                     [0.0, 0.0, 0.4]])
    assert np.allclose(got, want, atol=1e-9), got
    h = 1e-5
    for j in range(3):  # the Jacobian's columns against central differences of the gradient
        up, down = np.array(a), np.array(a)
        up[j] += h
        down[j] -= h
        assert np.allclose((np.asarray(g(up)) - np.asarray(g(down))) / (2 * h), want[:, j],
                           atol=1e-8)
