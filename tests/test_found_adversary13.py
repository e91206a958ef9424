"""Wrong derivatives, crashes and refusals in one position of a construct
taken in another. Each derivative is compared with central
differences in float64 of the original function (second derivatives with
central differences of the gradient); none is marked xfail: each fails until
its bug is fixed."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.modules import import_source

SRC = '''
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


def sum_of_filtered(x, y):
    xs = [x, y, x * y, x - y]
    return sum(t * t for t in xs if t > 0.5)


def max_of_filtered(x, y):
    xs = [x, y, x * y, x - y]
    return max(t for t in xs if t < 1.0)


def extreme_in_arms(x, y):
    xs = [x, y, x * y, x - y]
    if x > 0.5:
        m = max(t for t in xs if t < 1.0)
    else:
        m = min(t * t for t in xs if t > 0.0)
    return m * y


def sorted_grown(x, n):
    xs = []
    for k in range(n):
        xs.append(math.sin(x * (k + 1)))
    ys = sorted(xs, key=lambda t: (t - 0.2) ** 2, reverse=True)
    return ys[0] * 2.0 + ys[-1] * ys[1] + max(xs) * min(xs)


class Cfg(NamedTuple):
    w: float
    mode: str
    extra: object


def build_cfg(x, n):
    s = x
    for i in range(n):
        s = s * 1.1 + x
    return Cfg(s, "abs", None)


def use_cfg(x, y):
    c = build_cfg(x, 3)
    r = c.w * y
    if c.mode == "abs" and c.extra is None:
        r = r + (c.w - y) ** 2
    return r


@dataclass
class Layer:
    W: np.ndarray
    b: np.ndarray
    act: str = "tanh"


def make_layer(x, y):
    return {"n": x * y, "l": Layer(np.array([x, y]), np.array([y, 1.0]))}


def use_layer(x, y):
    d = make_layer(x, y)
    layer = d["l"]
    z = layer.W * d["n"] + layer.b
    if layer.act == "tanh":
        z = np.tanh(z)
    return np.sum(z ** 2)


def reduce_over(A, ax):
    return np.sum(np.mean(A, axis=ax) ** 2) + np.sum(np.max(A, axis=ax))
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(tmp_path_factory.mktemp("found_adversary13"), SRC,
                         "found_adversary13_src")


def _fd(f, args, i, h=1e-6):
    up, down = list(args), list(args)
    up[i] += h
    down[i] -= h
    return (f(*up) - f(*down)) / (2 * h)


def _gradient_file(src_file, name: str, folder):
    """``s2s-ad grad SRC:name --wrt x, -o folder/grad_name.py``, imported."""
    import importlib.util
    import subprocess
    import sys

    out = folder / f"grad_{name}.py"
    subprocess.run([sys.executable, "-m", "s2s_ad", "grad", f"{src_file}:{name}", "--wrt", "x,",
                    "-o", str(out)], check=True, capture_output=True, cwd=folder)
    spec = importlib.util.spec_from_file_location(f"grad_{name}", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, f"grad_{name}")


@pytest.mark.parametrize("name, args", [
    ("sum_of_filtered", (0.7, 1.3)),
    ("max_of_filtered", (0.7, 1.3)),
    ("extreme_in_arms", (0.7, 1.3)),
    ("extreme_in_arms", (0.3, 1.3)),
    ("sorted_grown", (0.7, 5)),
])
def test_second_derivative_of_a_list_grown_in_arms_or_sorted(mod, name, args):
    """hvp reads back the JVP module: the tangent list of a list made before
    a branch was made inside its arm (`ditems = []` in each arm, refused as
    a different list in each arm), and `max(range(len(items)),
    key=items.__getitem__)`, the form a run-time max/min/sorted is written
    in, was refused ('indices must be integer constants')."""
    f = getattr(mod, name)
    g = s2s_ad.grad(f, wrt=0)
    want = _fd(g, args, 0, h=1e-5)
    got = s2s_ad.hvp(f, wrt=0)(*args, 1.0)
    assert np.isclose(got, want, rtol=1e-5, atol=1e-7), (got, want)
    assert np.isclose(g(*args), _fd(f, args, 0), rtol=1e-6, atol=1e-8)


def _fd_array(f, A, *rest, h=1e-6):
    g = np.zeros_like(A)
    for i in np.ndindex(A.shape):
        e = np.zeros_like(A)
        e[i] = h
        g[i] = (f(A + e, *rest) - f(A - e, *rest)) / (2 * h)
    return g


@pytest.mark.parametrize("ax", [(0, 1), (1,), None, 1, (0, 1)])
def test_vjp_of_an_axis_given_a_tuple(mod, ax):
    """A parameter passed as a NumPy axis given a tuple of ints is static for
    grad, hvp and jvp; vjp lowered it as a number and refused at `axis=ax`
    ("`axis` must be one integer ...")."""
    f = mod.reduce_over
    A = np.arange(12.0).reshape(3, 4) / 7 + np.eye(3, 4)
    value, pullback = s2s_ad.vjp(f, A, ax)
    assert np.isclose(value, f(A, ax))
    assert np.allclose(pullback(1.0)[0], _fd_array(f, A, ax), atol=1e-6)


METHOD_SRC = '''
class K:
    S = 1.0

    @staticmethod
    def sm(x):
        return x * K.S

    def m(self, x):
        return self.sm(x) * x
'''


@pytest.mark.parametrize("change", ["class constant", "staticmethod rebound",
                                    "instance attribute"])
@pytest.mark.parametrize("api", ["grad held", "grad asked again", "jvp", "hvp", "vjp"])
def test_bound_method_calling_a_staticmethod_through_self(tmp_path, change, api):
    """`self.sm(x)` calls a staticmethod, a helper of the derivative: what it
    reads (`K.S`) was not in the fingerprint (a derivative asked for again
    after `K.S = 3.0` was the old one: 1.4, not 4.2), and the derivatives
    returned before a change of `K.sm` (on the class or hidden by the
    object's own) kept calling the old function."""
    src = import_source(tmp_path, METHOD_SRC, "found_adversary13_method")
    k = src.K()
    f = k.m
    made = {"grad held": lambda: s2s_ad.grad(f),
            "grad asked again": lambda: None,
            "jvp": lambda: s2s_ad.jvp(f),
            "hvp": lambda: s2s_ad.hvp(f),
            "vjp": lambda: None}[api]()
    s2s_ad.grad(f)(0.7)
    if made is not None:
        made(0.7, 1.0) if api == "hvp" else made(0.7)
    if change == "class constant":
        src.K.S = 3.0
    elif change == "staticmethod rebound":
        src.K.sm = staticmethod(lambda x: x * x * x)
    else:
        k.sm = lambda x: x * 10.0
    h = 1e-5
    first = (f(0.7 + h) - f(0.7 - h)) / (2 * h)
    second = (f(0.7 + h) - 2 * f(0.7) + f(0.7 - h)) / h ** 2
    if api == "grad held":
        assert np.isclose(made(0.7), first, rtol=1e-6)
    elif api == "grad asked again":
        assert np.isclose(s2s_ad.grad(f)(0.7), first, rtol=1e-6)
    elif api == "jvp":
        assert np.isclose(made(0.7)[1], first, rtol=1e-6)
    elif api == "hvp":
        assert np.isclose(made(0.7, 1.0), second, rtol=1e-4)
    else:
        assert np.isclose(s2s_ad.vjp(f, 0.7)[1](1.0)[0], first, rtol=1e-6)


CLASS_READ_SRC = '''
class C:
    S = 1.0

    @classmethod
    def cm(cls, x):
        return x * cls.S

    def m(self, x):
        return self.cm(x) * x

    def m2(self, x):
        return type(self).S * x * x
'''


@pytest.mark.parametrize("method", ["m", "m2"])
@pytest.mark.parametrize("api", ["grad", "jvp", "hvp", "jacobian"])
def test_class_attribute_hidden_by_the_object_after_the_derivative(tmp_path, method, api):
    """`cls.S` (or `type(self).S`) is read from the object as `self.S` while
    the object does not hide it; `k.S = 3.0` after the derivative was made hid
    it and the derivative read 3.0 where Python reads the class's 1.0 (grad
    4.2 for 1.4). It is refused now, located, as a derivative asked for
    then is."""
    src = import_source(tmp_path, CLASS_READ_SRC, "found_adversary13_class_read")
    k = src.C()
    f = getattr(k, method)
    made = s2s_ad.hvp(f) if api == "hvp" else getattr(s2s_ad, api)(f)
    at = (0.7, 1.0) if api == "hvp" else (0.7,)
    made(*at)
    k.S = 3.0
    with pytest.raises(s2s_ad.SourceError) as info:
        made(*at)
    assert "found_adversary13_class_read.py:" in str(info.value) and "hides" in str(info.value)


@pytest.mark.parametrize("name", ["use_cfg", "use_layer"])
def test_helper_returning_a_structure_with_a_string_or_none(mod, name):
    """A helper returning a NamedTuple or dataclass with a string or None
    field (`Cfg(s, "abs", None)`, a dataclass's `act="tanh"` default) was
    refused by grad ("returning a structure holding a number is not
    supported") while vjp, jvp and hvp differentiated it."""
    f = getattr(mod, name)
    args = (0.7, 1.3)
    want = [_fd(f, args, i) for i in range(2)]
    got = s2s_ad.grad(f, wrt=(0, 1))(*args)
    assert np.allclose(got, want, rtol=1e-6, atol=1e-8), (got, want)


def test_gradient_file_of_a_run_time_max_and_sort_read_back(mod, tmp_path):
    """The gradient module of a run-time sorted/max/min, read back from its
    file and differentiated again (its JVP: a row of the Hessian): the order
    `perm = sorted(range(len(xs)), key=xs.__getitem__)`, its items on a tape
    (`t6 = t6_tape[k]`) and the position `best` a helper's forward function
    puts on its tape were not read as ints ('a list index must be an
    integer')."""
    g = _gradient_file(mod.__file__, "sorted_grown", tmp_path)
    first = lambda x: g(x, 5)[0]  # noqa: E731
    assert np.isclose(first(0.7), _fd(mod.sorted_grown, (0.7, 5), 0), rtol=1e-6)
    _, tangent = s2s_ad.jvp(g, wrt="x")(0.7, 5, dx=1.0)
    assert np.isclose(tangent[0], _fd(first, (0.7,), 0, h=1e-5), rtol=1e-5)


def test_helper_with_a_run_time_max_read_back(tmp_path):
    """The same for a helper (its pair): `best` is an item of its tape."""
    src = import_source(tmp_path, HELPER_MAX_SRC, "found_adversary13_helper_max")
    g = _gradient_file(src.__file__, "twice", tmp_path)
    first = lambda x: g(x, 5)[0]  # noqa: E731
    assert np.isclose(first(0.7), _fd(src.twice, (0.7, 5), 0), rtol=1e-6)
    _, tangent = s2s_ad.jvp(g, wrt="x")(0.7, 5, dx=1.0)
    assert np.isclose(tangent[0], _fd(first, (0.7,), 0, h=1e-5), rtol=1e-5)


HELPER_MAX_SRC = '''
import math


def helper(xs):
    return sorted(xs)[0] + max(xs)


def twice(x, n):
    xs = []
    for k in range(n):
        xs.append(math.cos(x * (k + 1)))
    s = 0.0
    for j in range(2):
        s = s + helper(xs) * x
    return s
'''


POPS_SRC = '''
import math


def stack_made_in_an_arm(x, n):
    s = 0.0
    if x > 0.2:
        xs = []
        for i in range(n):
            xs.append(x * (i + 1.0))
        xs.pop()
        while xs:
            s = s * 0.5 + math.sin(xs.pop())
    else:
        s = x
    return s


def stack_made_in_a_loop(x, n):
    s = 0.0
    for j in range(3):
        xs = []
        for i in range(n):
            xs.append(x * (i + j + 1.0))
        xs.pop()
        s = s + xs.pop() * xs[-1] + len(xs)
    return s


def list_made_in_a_loop(x, n):
    s = 0.0
    for j in range(3):
        xs = []
        for i in range(n):
            xs.append(math.sin(x * (i + j + 1.0)))
        s = s + xs[-1] * xs[0] + sum(xs) * x
    return s
'''


@pytest.mark.parametrize("name, x", [("stack_made_in_an_arm", 0.7), ("stack_made_in_an_arm", 0.1),
                                     ("stack_made_in_a_loop", 0.7),
                                     ("list_made_in_a_loop", 0.7)])
def test_lists_made_in_a_loop_or_arm_popped_and_read_back(tmp_path, name, x):
    """A stack made in an arm or a loop's body and popped there (a pop whose
    item is dropped too) was refused ("`xs.pop` is not supported"), and a
    gradient file whose backward pass pops the adjoint of a list made in a
    loop's body could not be read back: its counter went where the list did
    not exist yet, and the tape of that list's length was written before the
    list was grown (`xs_tape[j] = len(xs)` right after `xs = []`: 0)."""
    src = import_source(tmp_path, POPS_SRC, "found_adversary13_pops")
    f = getattr(src, name)
    args = (x, 4)
    assert np.isclose(s2s_ad.grad(f, wrt=0)(*args), _fd(f, args, 0), rtol=1e-6)
    g = _gradient_file(src.__file__, name, tmp_path)
    first = lambda t: g(t, 4)[0]  # noqa: E731
    assert np.isclose(first(x), _fd(f, args, 0), rtol=1e-6)
    _, tangent = s2s_ad.jvp(g, wrt="x")(x, 4, dx=1.0)
    assert np.isclose(tangent[0], _fd(first, (x,), 0, h=1e-5), rtol=1e-5)


ITEM_SRC = '''
import numpy as np


def list_item_added(x):
    xs = [x, 2.0]
    xs[1] += x * 3.0
    xs[0] *= xs[1]
    return xs[0] + xs[1]


def dict_item_added(x):
    d = {"a": x, "b": 2.0}
    d["b"] += x
    d["a"] -= 1.0
    return d["a"] * d["b"]


def unrolled_loop_item_added(x):
    xs = [x, 2.0]
    for i in range(2):
        xs[1] += x * 3.0
    return xs[0] + xs[1]


def number_item_in_numpy_code(w):
    xs = [w * 1.0, 2.0]
    xs[1] += np.sum(w)
    return np.sum(xs[0]) * xs[1]


def array_item_added(w):
    d = {"a": w, "b": w * 2.0}
    d["a"] += 1.0
    return np.sum(d["a"] * d["b"])


def array_list_item_added(w):
    xs = [w]
    xs[0] += 1.0
    return np.sum(xs[0] * w)
'''


@pytest.mark.parametrize("name, arg", [("list_item_added", 0.7), ("dict_item_added", 0.7),
                                       ("unrolled_loop_item_added", 0.7),
                                       ("number_item_in_numpy_code", None)])
def test_augmented_assignment_to_an_item_of_a_built_structure(tmp_path, name, arg):
    """`xs[1] += v` on a list (or dict) built in the function was refused at the
    top level and in an unrolled loop ('mutates a value in place') while the
    same write in a branch or a `range(n)` loop was differentiated; in NumPy
    code it crashed ('StaticList' object has no attribute 'kind')."""
    src = import_source(tmp_path, ITEM_SRC, "found_adversary13_items")
    f = getattr(src, name)
    if arg is None:
        w = np.array([0.3, -0.2, 0.5])
        assert np.allclose(s2s_ad.grad(f)(w), _fd_array(f, w), atol=1e-7)
    else:
        assert np.isclose(s2s_ad.grad(f)(arg), _fd(f, (arg,), 0), rtol=1e-6)


@pytest.mark.parametrize("name", ["array_item_added", "array_list_item_added"])
def test_augmented_assignment_to_an_array_item_is_refused(tmp_path, name):
    """NumPy's `+=` on an array item writes into the array, which the caller
    holds here: refused, located (it crashed with an AttributeError)."""
    src = import_source(tmp_path, ITEM_SRC, "found_adversary13_items")
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(getattr(src, name))(np.array([0.3, -0.2, 0.5]))
    text = str(info.value)
    assert "found_adversary13_items.py:" in text and "^" in text and "in place" in text, text


PARTIAL_SRC = '''
import functools

import numpy as np


def dot(a, b):
    return np.sum(a * b)


def partial_then_write(a, x):
    b = np.copy(a)
    f = functools.partial(dot, b)
    b[0] = 10.0
    return f(a * x)


def partial_then_write_scaled(a, x):
    b = a * 1.0
    f = functools.partial(dot, b)
    b[0] = 10.0
    return f(a * x) + np.sum(a) * 0.0


def default_then_write(a, x):
    b = a * 1.0
    f = lambda t, c=b: np.sum(t * c)
    b[0] = 10.0
    return f(a * x) + np.sum(a) * 0.0


def def_default_then_augmented(a, x):
    b = a * 1.0

    def g(t, c=b):
        return np.sum(t * c)
    b += x
    return g(a)


def partial_then_augmented(a, x):
    b = np.copy(a)
    f = functools.partial(dot, b=b)
    b += x
    return f(a)
'''


@pytest.mark.parametrize("name", ["partial_then_write", "partial_then_augmented",
                                  "partial_then_write_scaled", "default_then_write",
                                  "def_default_then_augmented"])
@pytest.mark.parametrize("api", ["grad", "vjp", "jvp"])
def test_partial_holding_an_array_written_after(tmp_path, name, api):
    """`functools.partial(dot, b)` holds the array `b`, and so does a nested
    function's default `c=b`; a write into `b` after it (`b[0] = 10.0`,
    `b += x`) is seen by the partial (the default) in Python, and was not by
    s2s-ad (grad 0.42 for 7.0: the partial kept `b`'s value before
    the write; the JVP also for `b = np.copy(a)`, where the gradient was
    right)."""
    src = import_source(tmp_path, PARTIAL_SRC, "found_adversary13_partial")
    f = getattr(src, name)
    a, x = np.array([0.3, 0.5]), 0.7
    want_a, want_x = _fd_array(f, a, x), _fd(lambda t: f(a, t), (x,), 0)
    if api == "grad":
        got_a, got_x = s2s_ad.grad(f, wrt=(0, 1))(a, x)
    elif api == "jvp":
        _, tangent = s2s_ad.jvp(f, wrt=("a", "x"))(a, x, da=np.array([1.0, -2.0]), dx=0.5)
        assert np.isclose(tangent, want_a @ np.array([1.0, -2.0]) + 0.5 * want_x)
        return
    else:
        value, pullback = s2s_ad.vjp(f, a, x)
        assert np.isclose(value, f(a, x))
        got_a, got_x = pullback(1.0)
    assert np.allclose(got_a, want_a, atol=1e-7) and np.isclose(got_x, want_x), \
        (got_a, want_a, got_x, want_x)


VIEW_SRC = '''
import numpy as np


def diagonal_then_write(A, x):
    B = A * 1.0
    v = np.diagonal(B)
    B[0, 0] = x
    return np.sum(v * v) + np.sum(A) * 0.0


def diagonal_method_then_write(A, x):
    B = A * 1.0
    v = B.diagonal()
    B[1, 1] = x
    return np.sum(v * v)


def einsum_then_write(A, x):
    B = A * 1.0
    v = np.einsum("ij->ji", B)
    B[0, 1] = x
    return np.sum(v * v) + np.sum(A) * 0.0


def einsum_then_write_in_a_loop(A, x):
    B = A * 1.0
    v = np.einsum("ii->i", B)
    for i in range(2):
        B[i, i] = x * (i + 1.0)
    return np.sum(v * v) + np.sum(A) * 0.0


def trace_then_write(A, x):
    B = A * 1.0
    v = np.einsum("ii", B)
    B[0, 0] = x
    return v * v + np.sum(B)
'''


@pytest.mark.parametrize("name", ["diagonal_then_write", "diagonal_method_then_write",
                                  "einsum_then_write", "einsum_then_write_in_a_loop"])
def test_views_of_diagonal_and_einsum_written_after(tmp_path, name):
    """np.diagonal (x.diagonal()) and an einsum of one operand return views:
    a write into the array after them shows in them. s2s-ad read them as
    copies (grad [0.6, 0, 0, 0.4] for [0, 0, 0, 0.4]); now such a read is
    refused, located, as for the other views."""
    src = import_source(tmp_path, VIEW_SRC, "found_adversary13_views")
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(getattr(src, name), wrt=(0, 1))(np.array([[0.3, -0.5], [0.8, 0.2]]), 0.7)
    text = str(info.value)
    assert "found_adversary13_views.py:" in text and "^" in text and "view" in text, text


def test_einsum_to_a_number_is_no_view(tmp_path):
    """np.einsum("ii", B) is a number, not a view: read after a write into B."""
    src = import_source(tmp_path, VIEW_SRC, "found_adversary13_views")
    f = src.trace_then_write
    A, x = np.array([[0.3, -0.5], [0.8, 0.2]]), 0.7
    got_a, got_x = s2s_ad.grad(f, wrt=(0, 1))(A, x)
    assert np.allclose(got_a, _fd_array(f, A, x), atol=1e-7)
    assert np.isclose(got_x, _fd(lambda t: f(A, t), (x,), 0))


def test_write_into_an_array_item_says_it_is_an_array(tmp_path):
    """`d["w"][0] = v` (an array item written in place) was refused saying
    "`d['w']` is a number"; it says it is an array, and the rewrite it gives
    is differentiated."""
    src = import_source(tmp_path, ARRAY_ITEM_SRC, "found_adversary13_array_item")
    a = np.array([0.3, -0.2, 0.5])
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(src.write_into_item)(a)
    text = str(info.value)
    assert "is an array" in text and "is a number" not in text and "np.copy" in text, text
    assert np.allclose(s2s_ad.grad(src.rewritten)(a), _fd_array(src.rewritten, a), atol=1e-7)


ARRAY_ITEM_SRC = '''
import numpy as np


def write_into_item(a):
    d = {"w": a * 1.0}
    d["w"][0] = a[1] * 3.0
    return np.sum(d["w"] ** 2)


def rewritten(a):
    d = {"w": a * 1.0}
    w = np.copy(d["w"])
    w[0] = a[1] * 3.0
    d["w"] = w
    return np.sum(d["w"] ** 2)
'''


LAZY_SRC = '''
import numpy as np


def generator_then_write(x, y):
    xs = [x, y]
    g = (t * 2.0 for t in xs)
    xs[0] = y * 10.0
    return sum(g)


def map_then_write(x, y):
    xs = [x, y]
    m = map(lambda t: t * t, xs)
    xs[1] = x * 10.0
    return sum(m)


def zip_then_write(x, y):
    xs = [x, y]
    z = zip(xs, [y, x])
    xs[0] = 3.0 * y
    s = 0.0
    for a, b in z:
        s = s + a * b
    return s


def generator_then_append(x, y):
    xs = [x, y]
    g = (t * 2.0 for t in xs)
    xs.append(x * y)
    return sum(g)


def generator_of_an_array_then_write(x, y):
    b = np.array([x, y])
    g = (t * 2.0 for t in [b])
    b[0] = x * y
    return np.sum(sum(g))


def generator_consumed_twice(x, y):
    xs = [x, y]
    g = (t * 2.0 for t in xs)
    a = sum(g)
    return a + sum(g)


def generator_consumed_at_once(x, y):
    xs = [x, y]
    g = (t * t for t in xs)
    z = zip(xs, [y, x])
    s = sum(g)
    for a, b in z:
        s = s + a * b
    return s
'''


@pytest.mark.parametrize("name", ["generator_then_write", "map_then_write", "zip_then_write",
                                  "generator_then_append", "generator_of_an_array_then_write",
                                  "generator_consumed_twice"])
def test_lazy_iterator_read_after_a_change(tmp_path, name):
    """A generator, `map` or `zip` bound to a name computes its items where it
    is consumed (once): after `xs[0] = ...` or `xs.append(...)`, Python's items
    are the new ones, and a second `sum(g)` is 0. s2s-ad made them where the
    name was bound (grad (2, 2) for (0, 22); (4, 4) for (2, 2) consumed twice):
    refused, located."""
    src = import_source(tmp_path, LAZY_SRC, "found_adversary13_lazy")
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(getattr(src, name), wrt=(0, 1))(0.7, 1.3)
    text = str(info.value)
    assert "found_adversary13_lazy.py:" in text and "^" in text and "lazily" in text, text


def test_lazy_iterator_consumed_where_bound(tmp_path):
    src = import_source(tmp_path, LAZY_SRC, "found_adversary13_lazy")
    f = src.generator_consumed_at_once
    got = s2s_ad.grad(f, wrt=(0, 1))(0.7, 1.3)
    assert np.allclose(got, [_fd(f, (0.7, 1.3), i) for i in range(2)], rtol=1e-6)
