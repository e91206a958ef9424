"""Adversarial programs of round 17: np.where discarding a root or a
logarithm under conditions made otherwise than by one comparison with a
number (``~(a <= 0)``, ``np.logical_not``, ``a > b`` of two arrays, the
tests ``np.isnan``/``np.isfinite``), and under wheres nested in wheres
(the discarded value picked by the inner where, dropped by the outer; an
outer condition on another array, whose shape is not known, leaves the
inner one in force). Each
derivative is compared with central differences in float64 of the original
function (second derivatives with central differences of the gradient)."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient as _fd
from tests.modules import import_source
from tests.test_found_adversary16 import _tangent_columns

WHERE_SRC = '''
import numpy as np


def tilde_of_comparison(a):
    return np.sum(np.where(~(a <= 0), np.sqrt(a), 0.0))


def logical_not_of_comparison(a):
    return np.sum(np.where(np.logical_not(a <= 0), np.sqrt(a) * a, a))


def logical_or_of_comparisons(a):
    r = np.log(a)
    return np.sum(np.where(np.logical_or(a > 2.0, (a > 0) & (a < 1.0)), r * a, 0.0))


def two_arrays_compared(a, b):
    return np.sum(np.where(a > b, np.sqrt(a - b), 0.0))


def finite_test(a):
    r = np.log(a)
    return np.sum(np.where(np.isfinite(r), r, 0.0)) + np.sum(np.where(~np.isnan(r), r * r, 1.0))


def nested_in_else(a):
    return np.sum(np.where(a <= 0, 0.0, np.where(a > 1, np.log(a - 1.0), np.sqrt(a))))


def nested_in_then(a):
    return np.sum(np.where(a > 0, np.where(a > 1, np.log(a - 1.0), np.sqrt(a)), 0.0))


def nested_scaled(a):
    r = np.sqrt(a)
    return np.sum(np.where(a > 0, 2.0 * np.where(a > 1, 1.0, r * a), a))


def nested_three(a):
    r = np.log(a)
    inner = np.where(a < 3.0, r, 1.0)
    middle = np.where(a > 0.5, inner * 2.0, 0.5 * a)
    return np.sum(np.where(a > 0, middle, a * a))


def nested_in_loop(a):
    s = 0.0
    b = a
    for k in range(3):
        b = b * 0.9 - 0.2
        s = s + np.sum(np.where(b <= 0, b, np.where(b > 1, np.log(b), np.sqrt(b) * b)))
    return s


def root_or_log(b):
    return np.where(b <= 0, 2.0 * b, np.where(b > 1, np.log(b), np.sqrt(b)))


def nested_in_helper(a):
    return np.sum(root_or_log(a) * root_or_log(a - 0.5))


def nested_matrix_row(m, a):
    return np.sum(np.where(a > 0, np.where(a < 2.0, np.sqrt(a), 1.0) * m, m))


def outer_on_another_array(a, b):
    inner = np.where((a > 0) & (a < 0.5), np.sqrt(a) * b, 0.0)
    return np.sum(np.where(a > b, inner, 0.0) * a)


def inner_test_outer_on_another_array(a, b):
    r = np.log(a)
    return np.sum(np.where(a > b, np.where(np.isfinite(r), 2.0 * np.sqrt(a) * b, a * b), b * b))
'''

A = np.array([0.7, -1.3, 2.1, 1.4, -0.2])
M = np.array([[0.7, -1.3, 2.1, 0.2, 1.0], [-0.4, 0.9, 1.6, -2.0, 0.3]])
WHERE_POINTS = {
    "tilde_of_comparison": (A,), "logical_not_of_comparison": (A,),
    "logical_or_of_comparisons": (A,), "two_arrays_compared": (A, np.array([0.5, -0.2, 2.5, 1.0, 0.3])),
    "finite_test": (A,), "nested_in_else": (A,), "nested_in_then": (A,), "nested_scaled": (A,),
    "nested_three": (np.array([0.7, -1.3, 3.5, 0.3, -0.2]),), "nested_in_loop": (A,),
    "nested_in_helper": (A,), "nested_matrix_row": (M, A),
    "outer_on_another_array": (np.array([0.7, -1.3, 0.2, 1.4, -0.2, 0.3]),
                               np.array([0.5, -2.0, -0.1, 1.0, -0.3, 0.5])),
    "inner_test_outer_on_another_array": (A, np.array([0.5, -2.0, 2.5, 1.0, -0.3])),
}


FIRST_ORDER = {
    "grad": lambda f, args, i: s2s_ad.grad(f, wrt=i)(*args),
    "checkpoint": lambda f, args, i: s2s_ad.grad(f, wrt=i, checkpoint=True)(*args),
    "vjp": lambda f, args, i: s2s_ad.vjp(f, *args)[1](1.0)[i],
    "jvp": _tangent_columns,
}
"""Each entry point's derivative of f in argument i at args."""


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", sorted(WHERE_POINTS))
@pytest.mark.parametrize("api", ["grad", "vjp", "checkpoint", "jvp", "hvp"])
def test_where_discarding_under_other_conditions_and_nested_wheres(tmp_path, name, api):
    """A root or logarithm np.where discards where it is nan (a < 0) has a
    zero adjoint there, as central differences give: under a condition made
    by `~`, np.logical_not, np.logical_or, a comparison of two arrays or a
    test of the value, and where a where picks it that another where, reading
    the first, drops (before: nan at those elements, e.g. nested_in_else at
    a = [0.7, -1.3, 2.1, 1.4, -0.2] gave [0.598, nan, 0.909, 2.5, nan] where
    [0.598, 0, 0.909, 2.5, 0])."""
    src = import_source(tmp_path, WHERE_SRC, f"found_adversary17_where_{name}")
    f = getattr(src, name)
    args = WHERE_POINTS[name]
    if api == "hvp":
        a = args[-1]
        v = np.linspace(0.3, -0.2, a.size).reshape(a.shape)
        wrt = len(args) - 1
        grad = s2s_ad.grad(f, wrt=wrt)  # checked against central differences by api="grad"
        up, down = list(args), list(args)
        up[wrt], down[wrt] = a + 1e-5 * v, a - 1e-5 * v
        want = (grad(*up) - grad(*down)) / 2e-5
        got = s2s_ad.hvp(f, wrt=wrt)(*[x.copy() for x in args], v)
        assert np.all(np.isfinite(got)), got
        assert np.allclose(got, want, rtol=1e-4, atol=1e-5), (got, want)
        return
    for i in range(len(args)):
        got = FIRST_ORDER[api](f, [x.copy() for x in args], i)
        assert np.all(np.isfinite(got)), got
        assert np.allclose(got, _fd(f, list(args), i), rtol=1e-6, atol=1e-8), (name, i, got)


TREE_SRC = '''
from typing import NamedTuple

import numpy as np


class Layer(NamedTuple):
    W: np.ndarray
    b: np.ndarray


def in_a_dict(p, x):
    return np.sum(p["W"] @ x) ** 2 + np.sum(p["b"] * x[:2])


def in_a_list(ws, x):
    W, b = ws
    return np.sum(np.tanh(W @ x + b))


def in_named_tuples(layers, x):
    h = x
    for layer in layers:
        h = np.tanh(layer.W @ h + layer.b)
    return np.sum(h * h)
'''


@pytest.mark.parametrize("api", ["grad", "vjp", "value_and_grad", "hvp"])
def test_float32_leaves_and_items_get_float32_gradients(tmp_path, api):
    """A float32 array in a structure parameter (a dict, a list, NamedTuples)
    gets a float32 gradient where the function mixes it with float64 arrays,
    as a float32 array parameter does (before: float64 for the leaves and
    items, float32 for a parameter of its own); its values are those of
    central differences in float64."""
    src = import_source(tmp_path, TREE_SRC, "found_adversary17_trees")
    rng = np.random.default_rng(17)
    W1, W2 = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    b1, b2 = rng.normal(size=3), rng.normal(size=3)
    x = rng.normal(size=3)
    cases = [(src.in_a_dict, lambda t: {"W": t(W1), "b": t(b1[:2])}),
             (src.in_a_list, lambda t: [t(W1), t(b1)]),
             (src.in_named_tuples, lambda t: [src.Layer(t(W1), t(b1)), src.Layer(t(W2), t(b2))])]
    single = lambda a: a.astype(np.float32)  # noqa: E731
    for f, make in cases:
        p32, p64 = make(single), make(np.asarray)
        if api == "grad":
            got = s2s_ad.grad(f, wrt=0)(p32, x)
        elif api == "vjp":
            got = s2s_ad.vjp(f, p32, x)[1](1.0)[0]
        elif api == "value_and_grad":
            got = s2s_ad.value_and_grad(f, wrt=0)(p32, x)[1]
        else:
            got = s2s_ad.hvp(f, wrt=0)(p32, x, make(lambda a: np.ones_like(a, dtype=np.float32)))
        leaves = _leaves(got)
        assert all(a.dtype == np.float32 for a in leaves), [a.dtype for a in leaves]
        if api == "hvp":
            continue
        flat = np.concatenate([a.ravel() for a in leaves]).astype(np.float64)
        want = []
        for k in range(flat.size):  # central differences in float64, leaf by leaf
            def moved(h):
                arrays = [a.copy() for a in _leaves(p64)]
                sizes = np.cumsum([0] + [a.size for a in arrays])
                j = int(np.searchsorted(sizes, k, side="right")) - 1
                arrays[j].reshape(-1)[k - sizes[j]] += h
                return f(_rebuilt(p64, arrays), x)
            want.append((moved(1e-6) - moved(-1e-6)) / 2e-6)
        assert np.allclose(flat, want, rtol=1e-4, atol=1e-5), (flat, want)


def _leaves(tree):
    """The arrays of ``tree`` (a dict, list or list of NamedTuples), in order."""
    items = tree.values() if isinstance(tree, dict) else tree
    return [a for t in items for a in (t if isinstance(t, tuple) else (t,))]


def _rebuilt(tree, arrays):
    """``tree`` (a dict, list or list of NamedTuples of arrays) holding
    ``arrays`` in the order of its leaves."""
    it = iter(arrays)
    if isinstance(tree, dict):
        return {k: next(it) for k in tree}
    return [type(t)(*[next(it) for _ in t]) if isinstance(t, tuple) else next(it) for t in tree]


def test_a_refusal_quoting_a_method_keeps_its_name_whole(tmp_path):
    """The code a message quotes is put back as written only where a name
    stands alone: a comprehension over NamedTuples calling `._replace` is
    refused naming `._replace()` (before: the `l` inside `_replace` was
    replaced by the comprehension's text, `._rep[l._replace(b=[...]) for l in
    layers]ace()`)."""
    src = import_source(tmp_path, '''
from typing import NamedTuple

import numpy as np


class Layer(NamedTuple):
    W: np.ndarray
    b: np.ndarray


def doubled_biases(layers, x):
    new = [l._replace(b=l.b * 2.0) for l in layers]
    h = x
    for l in new:
        h = np.tanh(l.W @ h + l.b)
    return np.sum(h)
''', "found_adversary17_replace")
    layers = [src.Layer(np.eye(2), np.ones(2)), src.Layer(np.eye(2), np.zeros(2))]
    with pytest.raises(s2s_ad.SourceError) as err:
        s2s_ad.grad(src.doubled_biases, wrt=0)(layers, np.ones(2))
    first = str(err.value).splitlines()[0]
    assert "found_adversary17_replace.py:13:" in first, first
    assert "the method `._replace()` is not supported" in first, first


ARRAY_VALUE_SRC = '''
import numpy as np


def number_and_array(a, x):
    return a * 2.0 + x ** 2


def number_times_sum(a, x):
    return a * 2.0 + np.sum(x) * x


def pair_of_values(a, x):
    return np.sin(x) * a + a, a * a


def in_a_dataclass_field(c, x):
    return c.d["p"] * c.s + c.d["q"] ** 2 * x
'''


def _sum_fd(f, args, i, weights=None):
    """Central differences of Σ_k w_k · f(args)_k (f an array, or a tuple of
    an array and a number) in argument i."""
    def total(*a):
        out = f(*a)
        if isinstance(out, tuple):
            return sum(np.sum(w * o) for w, o in zip(weights, out))
        return np.sum((1.0 if weights is None else weights) * out)
    return _fd(total, list(args), i)


@pytest.mark.parametrize("cotangent", [1.0, 2.5])
def test_vjp_of_an_array_value_given_a_number(tmp_path, cotangent):
    """`vjp_fn(c)` with a number `c` for an array value is the cotangent `c`
    at every element, as `grad`'s seed `dout=c` is, for every parameter; an
    array of another shape is refused, one that broadcasts too (before: a number the value broadcast got `c` summed once, the arrays `c`
    at each element: `a * 2.0 + x ** 2` at a = 1.5, x = [0.5, 0.2] gave
    (2.0, [1.0, 0.4]) where (4.0, [1.0, 0.4]))."""
    src = import_source(tmp_path, ARRAY_VALUE_SRC, "found_adversary17_array_value")
    x = np.array([0.5, 0.2, -0.3])
    for f in (src.number_and_array, src.number_times_sum):
        for _ in range(2):  # the second call runs the pair the first one made
            value, pull = s2s_ad.vjp(f, 1.5, x)
            got = pull(cotangent)
            for i in range(2):
                want = cotangent * _sum_fd(f, (1.5, x), i)
                assert np.allclose(got[i], want, rtol=1e-6, atol=1e-8), (f.__name__, i, got, want)
            assert np.allclose(pull(np.full(3, cotangent))[0], got[0])
    m = np.arange(6.0).reshape(2, 3) / 4
    value, pull = s2s_ad.vjp(src.number_and_array, 1.5, m)
    got = pull(cotangent)  # a number: at each of the (2, 3) elements
    for i in range(2):
        want = cotangent * _sum_fd(src.number_and_array, (1.5, m), i)
        assert np.allclose(got[i], want, rtol=1e-6, atol=1e-8), (i, got, want)
    # an array of another shape, even one NumPy would broadcast, is refused (as JAX does)
    for other in (np.array([1.0, cotangent, -0.5]), np.ones(2)):
        with pytest.raises(ValueError, match=r"the cotangent has shape \(\d,\) where the value"):
            pull(other)
    value, pull = s2s_ad.vjp(src.pair_of_values, 1.5, x)
    got = pull((cotangent, 1.0))
    for i in range(2):
        want = _sum_fd(src.pair_of_values, (1.5, x), i, weights=(cotangent, 1.0))
        assert np.allclose(got[i], want, rtol=1e-6, atol=1e-8), (i, got, want)


def test_dict_field_of_a_dataclass_indexed_by_a_key(tmp_path):
    """`c.d["p"]`, a dict held by a dataclass field read by its key in NumPy
    code, is read as the leaf (before: refused as `index a tuple, list or
    dict through a name`); the gradient, a dataclass holding a dict, against
    central differences, by `grad` and by `vjp` with the number 1.0 for the
    array value."""
    src = import_source(tmp_path, ARRAY_VALUE_SRC + '''

from dataclasses import dataclass


@dataclass
class Holder:
    d: dict
    s: float
''', "found_adversary17_dataclass_dict")
    c = src.Holder({"p": 1.1, "q": np.array([0.5, 0.2])}, 0.3)
    want_c = _fd(lambda p, s, q, x: np.sum(src.in_a_dataclass_field(
        src.Holder({"p": p, "q": q}, s), x)), [1.1, 0.3, np.array([0.5, 0.2]), 0.7], 0)
    g = s2s_ad.grad(src.in_a_dataclass_field, wrt=(0, 1))(c, 0.7)
    by_vjp = s2s_ad.vjp(src.in_a_dataclass_field, c, 0.7)[1](1.0)
    for dc, dx in (g, by_vjp):
        assert isinstance(dc, src.Holder) and list(dc.d) == ["p", "q"]
        assert np.isclose(dc.d["p"], want_c), (dc, want_c)
        args = [1.1, 0.3, np.array([0.5, 0.2]), 0.7]
        full = lambda p, s, q, x: np.sum(src.in_a_dataclass_field(  # noqa: E731
            src.Holder({"p": p, "q": q}, s), x))
        assert np.isclose(dc.s, _fd(full, args, 1))
        assert np.allclose(dc.d["q"], _fd(full, args, 2))
        assert np.isclose(dx, _fd(full, args, 3))


DICT_FORMS_SRC = '''
import numpy as np


def merged_display(p, x):
    q = {**p, "b": p["b"] * 3.0}
    return np.sum(np.tanh(q["W"] @ x + q["b"]))


def merged_by_call(p, x):
    q = dict(p, b=p["b"] * 3.0)
    return np.sum(np.tanh(q["W"] @ x + q["b"]))


def merged_by_or(p, x):
    q = p | {"b": p["b"] * 3.0}
    r = {"b": x[:2]} | q
    return np.sum(np.tanh(r["W"] @ x + r["b"]))


def copied_then_written(p, x):
    q = p.copy()
    q["b"] = q["b"] * 3.0
    return np.sum(np.tanh(q["W"] @ x + q["b"])) + np.sum(p["b"] ** 2)


def steps_on_a_copy(p, x):
    q = dict(p)
    for i in range(3):
        q["b"] = q["b"] - 0.1 * np.tanh(q["W"] @ x)
    return np.sum(q["b"] ** 2)


def numbers_merged_by_or(p, x):
    q = p | {"b": p["a"] * x}
    return q["a"] * q["b"] + p["b"] * x
'''


@pytest.mark.parametrize("name", ["merged_display", "merged_by_call", "merged_by_or",
                                  "copied_then_written", "steps_on_a_copy",
                                  "numbers_merged_by_or"])
@pytest.mark.parametrize("api", ["grad", "value_and_grad", "vjp", "jvp"])
def test_dict_parameter_merged_or_copied(tmp_path, name, api):
    """A dict parameter merged into a new dict (`{**p, ...}`, `dict(p, ...)`,
    `p | {...}`) or copied (`p.copy()`) and written: `grad`, `value_and_grad`
    and `jvp` lower it for the dict each call passes, as `vjp` does (before:
    refused by them, `dict` is supported of a dict built in the function or a
    dict parameter, while `vjp` differentiated it; `|` and `.copy()` refused
    everywhere); against central differences."""
    src = import_source(tmp_path, DICT_FORMS_SRC, f"found_adversary17_dicts_{name}")
    f = getattr(src, name)
    rng = np.random.default_rng(7)
    if name == "numbers_merged_by_or":
        p, x, keys = {"a": 1.5, "b": 0.3}, 0.7, ["a", "b"]
    else:
        p, x, keys = {"W": rng.normal(size=(2, 3)), "b": rng.normal(size=2)}, \
            rng.normal(size=3), ["W", "b"]

    def at(i, leaf):  # f with one leaf of p (or x, i = len(keys)) replaced
        if i == len(keys):
            return f(dict(p), leaf)
        return f({**p, keys[i]: leaf}, x)
    leaves = [p[k] for k in keys] + [x]
    want = [_fd(lambda v, i=i: at(i, v), [leaf], 0) for i, leaf in enumerate(leaves)]
    if api == "jvp":
        for i, leaf in enumerate(leaves):
            for k in np.ndindex(np.shape(leaf)):
                e = np.zeros(np.shape(leaf))
                e[k] = 1.0
                dp = {key: np.zeros(np.shape(p[key])) for key in keys}
                dx = np.zeros(np.shape(x))
                if i < len(keys):
                    dp[keys[i]] = e if np.shape(leaf) else 1.0
                else:
                    dx = e if np.shape(leaf) else 1.0
                tangent = s2s_ad.jvp(f)(dict(p), x, dp=dp, dx=dx)[1]
                assert np.isclose(tangent, want[i][k]), (i, k, tangent, want[i][k])
        return
    if api == "grad":
        dp, dx = s2s_ad.grad(f, wrt=(0, 1))(dict(p), x)
    elif api == "value_and_grad":
        value, (dp, dx) = s2s_ad.value_and_grad(f, wrt=(0, 1))(dict(p), x)
        assert np.isclose(value, f(dict(p), x))
    else:
        dp, dx = s2s_ad.vjp(f, dict(p), x)[1](1.0)
    assert list(dp) == keys
    for got, expected in zip([dp[k] for k in keys] + [dx], want):
        assert np.allclose(got, expected, rtol=1e-6, atol=1e-8), (got, expected)


def test_hessian_of_a_function_returning_a_tuple_is_refused_by_its_name(tmp_path):
    """`hessian`, `hvp` and `s2s-ad hessian` of a function returning two
    numbers say so, naming it (before: a SourceError located in the
    generated forward-mode module, `<s2s-ad jvp_pair ...>:12:12: returning
    nested tuples or lists is not supported`); the rewrite it names works,
    against central differences of the gradient."""
    import subprocess
    import sys

    src = import_source(tmp_path, '''
def pair(x, y):
    return x * y, x * x * y
''', "found_adversary17_pair")
    for call in (lambda: s2s_ad.hessian(src.pair)(1.5, 0.5),
                 lambda: s2s_ad.hvp(src.pair, wrt=(0, 1))(1.5, 0.5, (1.0, 0.0))):
        with pytest.raises(s2s_ad.api.OutputError, match=r"^pair returns 2 values; a Hessian"):
            call()
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "hessian",
                           f"{tmp_path / 'found_adversary17_pair.py'}:pair"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "pair returns 2 values; a Hessian" in done.stderr, done
    assert "<s2s-ad" not in done.stderr
    second = s2s_ad.hessian(lambda x, y: src.pair(x, y)[1], wrt=(0, 1))(1.5, 0.5)
    grad = s2s_ad.grad(lambda x, y: src.pair(x, y)[1], wrt=(0, 1))
    h = 1e-5
    want = [[(a - b) / (2 * h) for a, b in zip(grad(1.5 + h, 0.5), grad(1.5 - h, 0.5))],
            [(a - b) / (2 * h) for a, b in zip(grad(1.5, 0.5 + h), grad(1.5, 0.5 - h))]]
    assert np.allclose(np.array(second, dtype=float), want, rtol=1e-6)


@pytest.mark.parametrize("body, says", [
    ("fs = [lambda t: t * k for k in range(3)]\n    return fs[0](x) + fs[1](x)",
     "a `lambda` is supported bound to a name"),
    ("f = (lambda t: t * t) if x > 0 else (lambda t: -t)\n    return f(x)",
     "a `lambda` is supported bound to a name"),
])
def test_a_lambda_where_it_is_not_supported_is_refused_saying_where_it_is(tmp_path, body, says):
    """A lambda in a list or a conditional expression is refused, located,
    saying where a lambda is supported (before: "`lambda` is not supported;
    define a helper with `def`", false of the lambdas bound to a name, called
    or passed to map, sorted and helpers, which are differentiated)."""
    src = import_source(tmp_path, f"def f(x):\n    {body}\n", "found_adversary17_lambda")
    with pytest.raises(s2s_ad.SourceError) as err:
        s2s_ad.grad(src.f)(0.7)
    assert says in str(err.value) and ":2:" in str(err.value).splitlines()[0], str(err.value)
    src = import_source(tmp_path, '''
def f(x):
    sq = lambda t: t * t
    return sq(x) + sum(map(lambda t: t * x, [x, 2.0]))
''', "found_adversary17_lambda_ok")
    assert np.isclose(s2s_ad.grad(src.f)(0.7), _fd(src.f, [0.7], 0))


def test_a_method_of_a_dataclass_parameter_is_refused_naming_it(tmp_path):
    """`m.loss(x)` on a dataclass parameter is refused, located, saying it is
    a method of the parameter and the rewrite (before: `m is a local value,
    not something s2s-ad can call or look into`, and in NumPy code `the
    method .loss() is not supported; s2s-ad knows .all(), .any(), ...`, the
    methods of arrays); the rewrite is differentiated, against central
    differences."""
    src = import_source(tmp_path, '''
from dataclasses import dataclass

import numpy as np


@dataclass
class Model:
    W: np.ndarray
    scale: float

    def loss(self, x):
        return np.sum(np.tanh(self.W @ x)) * self.scale


def by_method(m, x):
    return m.loss(x) * 2.0


def loss(m, x):
    return np.sum(np.tanh(m.W @ x)) * m.scale


def by_function(m, x):
    return loss(m, x) * 2.0
''', "found_adversary17_method")
    model, x = src.Model(np.eye(2) * 0.5, 1.5), np.array([0.3, -0.4])
    for api in (lambda: s2s_ad.grad(src.by_method, wrt=0)(model, x),
                lambda: s2s_ad.vjp(src.by_method, model, x)):
        with pytest.raises(s2s_ad.SourceError) as err:
            api()
        first = str(err.value).splitlines()[0]
        assert "found_adversary17_method.py:17:" in first and "a Model parameter" in first \
            and "call a function of yours taking it" in first, first
    g = s2s_ad.grad(src.by_function, wrt=0)(model, x)
    full = lambda W, s: src.by_function(src.Model(W, s), x)  # noqa: E731
    assert np.allclose(g.W, _fd(full, [model.W, 1.5], 0)) and np.isclose(g.scale, _fd(full, [model.W, 1.5], 1))
