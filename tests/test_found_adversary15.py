"""Wrong derivatives, crashes and refusals found by probing what changes
after a derivative was made, and constructs in positions not tried before.
Each derivative is compared with central differences in float64 of the
original function (second derivatives with central differences of the
gradient); none is marked xfail: each fails until its bug is fixed."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import s2s_ad
from tests.modules import import_source


def _fd(f, args, i, h=1e-6):
    up, down = list(args), list(args)
    up[i] += h
    down[i] -= h
    return (f(*up) - f(*down)) / (2 * h)


UNROLLED_SRC = '''
COEF = [1.0, 2.0]
TERMS = (1.0, 2.0)


def over_list(x):
    s = 0.0
    for c in COEF:
        s = s + c * x * x
    return s


def over_tuple(x):
    s = 0.0
    for c in TERMS:
        s = s * x + c
    return s
'''


def _grown(src, name):
    if name == "over_list":
        src.COEF.append(5.0)
    else:
        src.TERMS = (1.0, 2.0, 3.0)


@pytest.mark.parametrize("name", ["over_list", "over_tuple"])
@pytest.mark.parametrize("api", ["grad", "value_and_grad", "checkpoint"])
def test_seed_renamed_when_a_module_constant_changes_the_unrolled_code(tmp_path, name, api):
    """A loop over a module-level list (or tuple) of numbers is unrolled, and
    the seed of the gradient is named after the returned value's SSA name:
    `ds_1` for two items, `ds_2` for three. A held derivative asked again
    after `COEF.append(5.0)` passed its call on with the old name: TypeError
    "grad_over_list() got an unexpected keyword argument 'ds_1'" (right:
    over_list's gradient 2.6 * 8.0 = 20.8 at 1.3). A seed given by its old
    name is given to the new one."""
    src = import_source(tmp_path, UNROLLED_SRC, f"found_adversary15_unrolled_{name}")
    f = getattr(src, name)
    make = {"grad": lambda: s2s_ad.grad(f),
            "value_and_grad": lambda: s2s_ad.value_and_grad(f),
            "checkpoint": lambda: s2s_ad.grad(f, checkpoint=True)}[api]
    pick = (lambda r: r[1]) if api == "value_and_grad" else (lambda r: r)
    held = make()
    assert np.isclose(pick(held(1.3)), _fd(f, (1.3,), 0), rtol=1e-6)
    seed = list(inspect.signature(held).parameters)[-1]
    _grown(src, name)
    want = _fd(f, (1.3,), 0)
    assert np.isclose(pick(held(1.3)), want, rtol=1e-6)
    assert np.isclose(pick(held(1.3, **{seed: 2.0})), 2.0 * want, rtol=1e-6)
    assert np.isclose(pick(make()(1.3)), want, rtol=1e-6)


WHERE_SRC = '''
import numpy as np


def root_where_positive(a):
    return np.sum(np.where(a > 0, np.sqrt(a), 0.0) * a)


def root_in_the_else(a):
    return np.sum(np.where(a <= 0.0, a * 0.5, np.sqrt(a)))


def power_where_positive(a):
    return np.sum(np.where(a > 0, a ** 0.5, a))


def root_times_a_column(a):
    b = np.array([1.0, 2.0, 3.0])
    return np.sum(np.where(a > 0, np.sqrt(a) * (a + b), 0.0))


def exp_of_the_root(a):
    return np.sum(np.where(a > 0, np.exp(np.sqrt(a)), 0.0))


def root_within_bounds(a):
    return np.sum(np.where((a > 0) & (a < 5.0), np.sqrt(a), 0.0))


def safe_mean(a):
    n = np.maximum(a - 1.0, 0.0)
    return np.sum(np.where(n > 0, a / n, 0.0))


def safe_mean_of_rows(a):
    rows = np.outer(np.ones(2), a) * np.array([[1.0], [2.0]])
    n = np.maximum(a - 1.0, 0.0)
    return np.sum(np.where(n > 0, rows / n, 0.0))


def safe_mean_of_itself(a):
    n = a - 0.5
    q = np.outer(np.ones(2), a) / n
    return np.sum(np.where(q > 0, np.sqrt(q), 0.0))


def named_steps(a):
    ok = a > 0
    r = np.sqrt(a)
    y = np.where(ok, r, 0.0)
    return np.sum(y * y * a)


def in_a_loop(a):
    s = 0.0
    for k in range(3):
        b = a - 0.5 * k
        s = s + np.sum(np.where(b > 0, np.sqrt(b), 0.0))
    return s


def safe_root(b):
    return np.where(b > 0, np.sqrt(b), 0.0)


def in_a_helper(a):
    return np.sum(safe_root(a) * 2.0 + safe_root(a - 1.0))
'''


def _fd_array(f, a, h=1e-6):
    out = np.zeros_like(a)
    for k in range(a.size):
        up, down = a.copy(), a.copy()
        up[k] += h
        down[k] -= h
        out[k] = (f(up) - f(down)) / (2 * h)
    return out


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", ["root_where_positive", "root_in_the_else",
                                  "power_where_positive", "safe_mean", "safe_mean_of_rows",
                                  "safe_mean_of_itself", "root_within_bounds",
                                  "root_times_a_column", "exp_of_the_root",
                                  "named_steps", "in_a_loop", "in_a_helper"])
@pytest.mark.parametrize("api", ["grad", "vjp", "checkpoint", "jvp", "hvp"])
def test_where_discarding_an_infinite_derivative(tmp_path, name, api):
    """`np.where(a > 0, np.sqrt(a), 0.0)` discards the nan `np.sqrt` gives
    where `a < 0`, and the function is 0 near such an `a`; the reverse sweep
    gave the where's zero adjoint there times sqrt's infinite local
    derivative: root_where_positive's gradient at (0.7, -1.3, 2.1) was
    (0.0, nan, 0.0) + ... = [1.2549, nan, 2.1737] (right: [1.2549, 0.0,
    2.1737], which forward mode gave). The producer's backward is taken
    under the where's condition, and so is every backward before it whose
    adjoint is zero there by structure (`np.sqrt(a) * b`: b's adjoint reads
    the nan root; exp_of_the_root: [1.380, nan, 1.470], right [1.380, 0,
    1.470]), which also covers the gradient of the JVP module (hvp: its
    tangent `da / (2 * t2)` is discarded by the tangent's where: [0.269,
    nan, -0.104], right [0.269, 0, -0.104])."""
    src = import_source(tmp_path, WHERE_SRC, f"found_adversary15_where_{name}")
    f = getattr(src, name)
    a = np.array([0.7, -1.3, 2.1])
    want = _fd_array(f, a)
    if api == "grad":
        got = s2s_ad.grad(f)(a.copy())
    elif api == "checkpoint":
        got = s2s_ad.grad(f, checkpoint=True)(a.copy())
    elif api == "vjp":
        got = s2s_ad.vjp(f, a.copy())[1](1.0)[0]
    elif api == "hvp":
        v = np.array([0.3, 0.5, -0.2])
        got = s2s_ad.hvp(f)(a.copy(), v)
        grad = s2s_ad.grad(f)  # checked against central differences by api="grad"
        want = (grad(a + 1e-5 * v) - grad(a - 1e-5 * v)) / 2e-5
        assert np.all(np.isfinite(got)), got
        assert np.allclose(got, want, rtol=1e-4, atol=1e-6), (got, want)
        return
    else:
        got = np.array([s2s_ad.jvp(f)(a.copy(), da=e)[1] for e in np.eye(3)])
    assert np.all(np.isfinite(got)), got
    assert np.allclose(got, want, rtol=1e-6, atol=1e-8), (got, want)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_where_mask_is_not_carried_through_a_cross_product(tmp_path):
    """np.cross broadcasts, but each component of its result reads the two
    others: the zero the where leaves in `w`'s adjoint where `w <= 0` is not
    one of `a`'s there (a mask carried through it gave [0, -0.458, 0.644] at
    a = (0.3, -1.2, 0.8), b = (1.1, 0.4, 0.5); right [-0.126, -0.458,
    0.644])."""
    src = import_source(tmp_path, '''
import numpy as np


def cross_then_root(a, b):
    w = np.cross(a, b)
    return np.sum(np.where(w > 0, np.sqrt(w), 0.0))
''', "found_adversary15_where_cross")
    a, b = np.array([0.3, -1.2, 0.8]), np.array([1.1, 0.4, 0.5])
    got = s2s_ad.grad(src.cross_then_root, wrt=(0, 1))(a.copy(), b.copy())
    want = (_fd_array(lambda t: src.cross_then_root(t, b), a),
            _fd_array(lambda t: src.cross_then_root(a, t), b))
    assert np.allclose(got[0], want[0], rtol=1e-6) and np.allclose(got[1], want[1], rtol=1e-6)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_where_mask_is_not_taken_for_another_use(tmp_path):
    """The root read besides the where (`r * 0.0`, nan at `a < 0` in the
    function itself) keeps its backward unmasked: its adjoint is not zero
    by structure there."""
    src = import_source(tmp_path, '''
import numpy as np


def read_twice(a, c):
    r = np.sqrt(a)
    return np.sum(np.where(a > 0, r, 0.0)) + np.sum(r * c)
''', "found_adversary15_where_twice")
    a = np.array([0.7, 1.3, 2.1])
    got = s2s_ad.grad(src.read_twice)(a.copy(), 0.5)
    want = _fd_array(lambda t: src.read_twice(t, 0.5), a)
    assert np.allclose(got, want, rtol=1e-6)
    assert "da = np.where" not in s2s_ad.gradient_source(src.read_twice, wrt=0, arrays=["a"])


WRITTEN_WHILE_ITERATED_SRC = '''
def written_ahead(x):
    xs = [x, 2.0, 3.0]
    s = 0.0
    for v in xs:
        xs[2] = x * x
        s = s + v
    return s


def through_an_alias(x):
    xs = [x, 2.0, 3.0]
    ys = xs
    s = 0.0
    for i, v in enumerate(xs):
        if i == 0:
            ys[2] = x * x
        s = s + v
    return s


def added_to_ahead(x):
    xs = [x, 2.0, 3.0]
    s = 0.0
    for v in xs:
        xs[2] += x
        s = s + v
    return s


def zipped_both(x):
    xs = [x, 2.0, 3.0]
    ys = [1.0, x, 1.0]
    s = 0.0
    for a, b in zip(xs, ys):
        ys[2] = a * x
        xs[2] = b * 2.0
        s = s + a * b
    return s


def reversed_written(x):
    xs = [x, 2.0, 3.0]
    s = 0.0
    for v in reversed(xs):
        xs[0] = v * x
        s = s + v
    return s


def dict_values_written(x):
    d = {"a": x, "b": 2.0, "c": 3.0}
    s = 0.0
    for v in d.values():
        d["c"] = x * x
        s = s + v
    return s


def dict_items_written(x):
    d = {"a": x, "b": 2.0}
    s = 0.0
    for k, v in d.items():
        d["b"] = v * x
        s = s + v
    return s


def rebound_in_the_body(x):
    xs = [x, 2.0, 3.0]
    s = 0.0
    for v in xs:
        xs = [x * x, x * x, x * x]
        s = s + v
    return s + xs[0]


def popped_in_the_body(x):
    xs = [x, 2.0, 3.0]
    s = 0.0
    for v in xs:
        s = s + v * xs.pop()
    return s
'''


@pytest.mark.parametrize("name", ["written_ahead", "through_an_alias", "added_to_ahead",
                                  "zipped_both", "reversed_written", "dict_values_written",
                                  "dict_items_written", "rebound_in_the_body"])
@pytest.mark.parametrize("api", ["grad", "vjp", "jvp", "hessian"])
def test_a_list_written_while_a_loop_iterates_over_it(tmp_path, name, api):
    """`for v in xs:` reads `xs[k]` at the k-th iteration, after the body's
    writes of the iterations before (a dict's `values()`/`items()` too). The
    loop, unrolled while lowering, read the items as they were when it
    started: written_ahead's gradient at 1.3 was 1.0 (right: 1 + 2x = 3.6),
    by grad, vjp and jvp alike; dict_values_written's too. A list rebound in
    the body (`xs = [...]`) is not the list iterated, as in Python."""
    src = import_source(tmp_path, WRITTEN_WHILE_ITERATED_SRC,
                        f"found_adversary15_iterated_{name}")
    f = getattr(src, name)
    if api == "hessian":
        got = s2s_ad.hessian(f)(1.3)
        h = 1e-4
        want = (f(1.3 + h) - 2.0 * f(1.3) + f(1.3 - h)) / (h * h)  # of f, not of grad(f)
        assert np.isclose(got, want, rtol=1e-5, atol=1e-6), (got, want)
        return
    want = _fd(f, (1.3,), 0)
    if api == "grad":
        got = s2s_ad.grad(f)(1.3)
    elif api == "vjp":
        got = s2s_ad.vjp(f, 1.3)[1](1.0)[0]
    else:
        got = s2s_ad.jvp(f)(1.3, dx=1.0)[1]
    assert np.isclose(got, want, rtol=1e-6), (got, want)


def test_a_list_whose_length_changes_while_iterated_is_refused(tmp_path):
    """`xs.pop()` in the body of `for v in xs:` makes Python stop early (its
    iterator reads `xs[k]` while k < len(xs)): refused, located."""
    src = import_source(tmp_path, WRITTEN_WHILE_ITERATED_SRC, "found_adversary15_iterated_pop")
    with pytest.raises(s2s_ad.S2SError, match="changes the length of the list") as e:
        s2s_ad.grad(src.popped_in_the_body)(1.3)
    assert ":" in str(e.value).splitlines()[0]


RUN_TIME_WRITTEN_SRC = '''
def grown_then_written(x, n):
    xs = []
    for i in range(n):
        xs.append(x * (i + 1))
    s = 0.0
    for v in xs:
        xs[2] = x * x
        s = s + v
    return s


def filled_then_written(x):
    xs = [x] * 3
    s = 0.0
    for v in xs:
        xs[2] = v * x
        s = s + v
    return s


def reversed_grown(x, n):
    xs = []
    for i in range(n):
        xs.append(x * (i + 1))
    s = 0.0
    for v in reversed(xs):
        xs[0] = x * x
        s = s + v
    return s


def zipped_grown(x, n):
    xs = []
    for i in range(n):
        xs.append(x * (i + 1))
    s = 0.0
    for v, w in zip(xs, xs):
        xs[2] = x * x
        s = s + v * w
    return s


def copied_parameter(xs, x):
    ys = list(xs)
    s = 0.0
    for v in ys:
        ys[2] = v * x
        s = s + v
    return s
'''


@pytest.mark.parametrize("name, args", [("grown_then_written", (1.3, 5)),
                                        ("filled_then_written", (1.3,)),
                                        ("reversed_grown", (1.3, 5)),
                                        ("zipped_grown", (1.3, 5))])
@pytest.mark.parametrize("api", ["grad", "vjp", "jvp", "hessian"])
def test_a_run_time_list_written_while_iterated(tmp_path, name, args, api):
    """A list of a run-time length iterated by `for v in xs:` (enumerate,
    zip, reversed of it) whose body writes into it: the iteration read the
    list's version from before the loop, while the generated code read the
    list as it is (Python's meaning), so the write's adjoint was dropped and
    the item's went to the old version: grown_then_written's gradient at
    (1.3, 5) was 12.0 (right: 14.6), filled_then_written's 2.0 (right: 4.6),
    reversed_grown's 14.0 (right: 16.6). The loop reads its item from the
    version of the list it carries."""
    src = import_source(tmp_path, RUN_TIME_WRITTEN_SRC, f"found_adversary15_run_time_{name}")
    f = getattr(src, name)
    rest = args[1:]
    if api == "hessian":
        got = s2s_ad.hessian(f, wrt=0)(*args)
        h = 1e-4
        want = (f(args[0] + h, *rest) - 2.0 * f(*args) + f(args[0] - h, *rest)) / (h * h)
        assert np.isclose(got, want, rtol=1e-5, atol=1e-6), (got, want)
        return
    want = _fd(f, args, 0)
    if api == "grad":
        got = s2s_ad.grad(f, wrt=0)(*args)
    elif api == "vjp":
        got = s2s_ad.vjp(f, *args)[1](1.0)[0]
    else:
        got = s2s_ad.jvp(f, wrt=0)(*args, dx=1.0)[1]
    assert np.isclose(got, want, rtol=1e-6), (got, want)


def test_iterated_while_written_by_one_parameter(tmp_path):
    """tests/list_writes_src.py's iterated_while_written, differentiated with
    respect to `a` alone: the item read at each iteration was taken for one
    of the list before the loop (a function of `xs` only), so the writes'
    dependence on `a` was cut: 7.11 at ([0.5, 1.2, -0.3, 0.8], 0.7), right
    14.94 (with respect to both parameters the shared adjoint list hid it)."""
    from tests import list_writes_src as src
    f = src.iterated_while_written
    xs = [0.5, 1.2, -0.3, 0.8]
    want = _fd(lambda a: f(xs, a), (0.7,), 0)
    assert np.isclose(s2s_ad.grad(f, wrt=1)(xs, 0.7), want, rtol=1e-6)
    assert np.isclose(s2s_ad.jvp(f, wrt=1)(xs, 0.7, da=1.0)[1], want, rtol=1e-6)


def test_a_copy_of_a_list_parameter_written_while_iterated(tmp_path):
    """`ys = list(xs)` of a list parameter, then `for v in ys: ys[2] = v * x`:
    the copy has the parameter's length while lowering, so the loop is
    unrolled and reads each item anew: the gradient in `x` at ([1, 2, 3],
    1.3) was 0.0 (right: 2.0), in `xs` [1, 1, 0] (right: [1, 2.3, 0])."""
    src = import_source(tmp_path, RUN_TIME_WRITTEN_SRC, "found_adversary15_run_time_copy")
    f = src.copied_parameter
    g_xs, g_x = s2s_ad.grad(f, wrt=(0, 1))([1.0, 2.0, 3.0], 1.3)
    assert np.isclose(g_x, _fd(lambda x: f([1.0, 2.0, 3.0], x), (1.3,), 0), rtol=1e-6)
    want = [_fd(lambda t: f([1.0, 2.0, 3.0][:k] + [t] + [1.0, 2.0, 3.0][k + 1:], 1.3),
                ([1.0, 2.0, 3.0][k],), 0) for k in range(3)]
    assert np.allclose(g_xs, want, rtol=1e-6), (g_xs, want)
