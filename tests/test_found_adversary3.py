"""Wrong gradients and internal errors found by adversarial programs on the
newer features, each against central differences (float64)."""

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient, make_function


def _close(got, f, args, wrt):
    for g, i in zip(got, wrt):
        np.testing.assert_allclose(np.asarray(g, dtype=float), fd_gradient(f, args, i),
                                   rtol=1e-5, atol=1e-7)


EINSUM_BROADCAST = '''
def f(A, x):
    return np.sum(np.einsum("ij,ij->i", A, x) ** 2) + np.sum(np.einsum("ij,ij->j", A, x) ** 2)
'''


@pytest.mark.parametrize("xshape", [(3, 1), (1, 2), (1, 1), (3, 2)])
def test_einsum_operand_broadcast_by_the_other(xshape):
    # A (3, 2) with x (3, 1): the letter j has length 1 in x only, so the
    # adjoint of A (x's j broadcast) is constant along j. The contraction of g
    # with x had x's length 1 there and unbroadcast raised ValueError (could
    # not reshape (3, 1) into (3, 2)).
    f = make_function(EINSUM_BROADCAST)
    rng = np.random.default_rng(1)
    args = [rng.normal(size=(3, 2)), rng.normal(size=xshape)]
    _close(s2s_ad.grad(f, wrt=[0, 1])(*args), f, args, [0, 1])
    value, back = s2s_ad.vjp(f, *args)
    _close(back(1.0), f, args, [0, 1])


LATE_CONSTANTS = '''
import numpy as np

SCALE = 0.5
MODE = "tanh"


def f(w):
    r = w * SCALE
    if MODE == "tanh":
        r = np.tanh(r)
    return np.sum(r * r)
'''


def test_a_held_derivative_sees_a_changed_module_constant(tmp_path, monkeypatch):
    # g = grad(f) made while SCALE was 0.5 and MODE "tanh" kept running that
    # code after `mod.SCALE = 2.0; mod.MODE = "lin"` (vjp saw the change, grad,
    # value_and_grad, jvp, hvp and hessian did not): f reads its globals on
    # every call, so the derivative must too.
    import importlib
    (tmp_path / "late_constants_mod.py").write_text(LATE_CONSTANTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("late_constants_mod")
    w = np.array([0.3, -0.4])
    g, vg, jv = s2s_ad.grad(mod.f), s2s_ad.value_and_grad(mod.f), s2s_ad.jvp(mod.f)
    hv, gg = s2s_ad.hvp(mod.f), s2s_ad.grad(s2s_ad.grad(mod.f))
    e = np.array([1.0, 0.0])
    for scale, mode in ((0.5, "tanh"), (2.0, "lin"), (2.0, "tanh"), (0.5, "tanh")):
        mod.SCALE, mod.MODE = scale, mode
        want = fd_gradient(mod.f, [w], 0)
        np.testing.assert_allclose(g(w), want, rtol=1e-6)
        np.testing.assert_allclose(vg(w)[1], want, rtol=1e-6)
        np.testing.assert_allclose(jv(w, dw=e)[1], want[0], rtol=1e-6)
        np.testing.assert_allclose(s2s_ad.vjp(mod.f, w)[1](1.0)[0], want, rtol=1e-6)
        # second derivatives against differences of the gradient
        h = 1e-5
        column = (fd_gradient(mod.f, [w + h * e], 0) - fd_gradient(mod.f, [w - h * e], 0)) / (2 * h)
        np.testing.assert_allclose(hv(w, e), column, rtol=1e-4, atol=1e-6)
    assert g.__name__ == "grad_f" and "np.tanh" in s2s_ad.source_of(g)  # the code run now


def test_a_derivative_of_a_held_jvp_sees_a_changed_module_constant(tmp_path, monkeypatch):
    import importlib
    (tmp_path / "late_constants_jvp.py").write_text(LATE_CONSTANTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("late_constants_jvp")
    w, e = np.array([0.3, -0.4]), np.array([1.0, 0.0])
    forward = s2s_ad.jvp(mod.f)
    mod.SCALE, mod.MODE = 2.0, "lin"
    # grad of the held forward module's tangent: H e, for the constants now
    got = s2s_ad.grad(forward, wrt=0, output=1)(w, dw=e)
    h = 1e-5
    want = (fd_gradient(mod.f, [w + h * e], 0) - fd_gradient(mod.f, [w - h * e], 0)) / (2 * h)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


LENGTH_BASE_CASE = '''
def head_or(xs, w):
    if len(xs) == 0:
        return w
    return xs[0] * w


def rsum(xs, w):
    if len(xs) == 0:
        return 0.0
    return xs[0] * w + rsum(xs[1:], w * 0.5)


def both(xs, w):
    return head_or(xs[1:], w) + head_or((), w) * rsum(xs, w)


def mlp(params, x):
    if len(params) == 0:
        return np.sum(x * x)
    p = params[0]
    return mlp(params[1:], np.tanh(p["W"] @ x + p["b"]))
'''


def _fd_items(f, xs, w, h=1e-6):
    out = []
    for i in range(len(xs)):
        up, down = list(xs), list(xs)
        up[i] += h
        down[i] -= h
        out.append((f(type(xs)(up), w) - f(type(xs)(down), w)) / (2 * h))
    return out, (f(xs, w + h) - f(xs, w - h)) / (2 * h)


@pytest.mark.parametrize("name", ["rsum", "both"])
@pytest.mark.parametrize("xs", [(0.5, 1.0, 2.0), (0.5,), [0.5, -1.5]])
def test_a_length_compared_while_lowering_ends_the_recursion(name, xs):
    # `if len(xs) == 0: return ...` compared two numbers known while lowering
    # (0 == 0) by code that ran later, so the rest of the function was lowered
    # for the empty structure too and refused (index 0 out of range)
    f = make_function(LENGTH_BASE_CASE, name)
    want_xs, want_w = _fd_items(f, xs, 0.7)
    got_xs, got_w = s2s_ad.grad(f, wrt=[0, 1])(xs, 0.7)
    np.testing.assert_allclose(got_xs, want_xs, rtol=1e-6, atol=1e-9)
    assert got_w == pytest.approx(want_w, rel=1e-6)
    value, back = s2s_ad.vjp(f, xs, 0.7)
    assert value == pytest.approx(f(xs, 0.7))
    np.testing.assert_allclose(back(1.0)[0], want_xs, rtol=1e-6, atol=1e-9)


def test_a_recursion_over_a_list_of_layers_by_slices():
    f = make_function(LENGTH_BASE_CASE, "mlp")
    rng = np.random.default_rng(0)
    params = [{"W": rng.normal(size=(3, 3)), "b": rng.normal(size=3)} for _ in range(3)]
    x = rng.normal(size=3)
    value, back = s2s_ad.vjp(f, params, x)
    assert value == pytest.approx(f(params, x))
    got_params, got_x = back(1.0)
    np.testing.assert_allclose(got_x, fd_gradient(f, [params, x], 1), rtol=1e-5, atol=1e-8)
    for i, layer in enumerate(params):
        for key in ("W", "b"):
            def moved(a, i=i, key=key):
                changed = [dict(p) for p in params]
                changed[i][key] = a
                return f(changed, x)
            np.testing.assert_allclose(got_params[i][key], fd_gradient(moved, [layer[key]], 0),
                                       rtol=1e-5, atol=1e-8)


MODEL = '''
import numpy as np

K = 1.0


class Model:
    def __init__(self):
        self.X = np.array([[1.5, 0.2], [-0.3, 1.1]])
        self.mode = "l2"
        self.training = True

    def loss(self, w):
        r = self.X @ w * K
        if self.training:
            r = r * 0.5
        if self.mode == "l2":
            return np.sum(r ** 2)
        return np.sum(np.abs(r))
'''


def test_a_held_gradient_of_a_method_sees_its_objects_flags(tmp_path, monkeypatch):
    # g = grad(model.loss) was generated for model.training = True and
    # model.mode = "l2" (static values: the branches decided while lowering);
    # after model.training = False (a model switched to evaluation) g kept
    # the training branch: a wrong gradient, where vjp saw the change
    import importlib
    (tmp_path / "late_model.py").write_text(MODEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("late_model")
    model, w = mod.Model(), np.array([0.3, -0.7])
    g = s2s_ad.grad(model.loss)
    for training, mode, k in ((True, "l2", 1.0), (False, "l2", 1.0), (False, "l1", 1.0),
                              (False, "l1", 3.0), (True, "l2", 1.0)):
        model.training, model.mode, mod.K = training, mode, k
        want = fd_gradient(model.loss, [w], 0)
        np.testing.assert_allclose(g(w), want, rtol=1e-6)
        np.testing.assert_allclose(s2s_ad.vjp(model.loss, w)[1](1.0)[0], want, rtol=1e-6)


HELPERS = '''
import numpy as np


def act(x):
    return np.tanh(x)


def other(x):
    return np.sin(x) * 2.0


def loss(w):
    return np.sum(act(w) ** 2)
'''


def test_a_held_gradient_sees_a_helper_rebound(tmp_path, monkeypatch):
    # loss looks `act` up when it runs; `mod.act = mod.other` (a helper
    # redefined in a notebook) left g = grad(loss) differentiating tanh
    import importlib
    (tmp_path / "late_helpers.py").write_text(HELPERS)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("late_helpers")
    w, e = np.array([0.3, -0.7]), np.array([1.0, 0.0])
    g, jv = s2s_ad.grad(mod.loss), s2s_ad.jvp(mod.loss)
    for helper in (mod.act, mod.other, mod.act):
        monkeypatch.setattr(mod, "act", helper)
        want = fd_gradient(mod.loss, [w], 0)
        np.testing.assert_allclose(g(w), want, rtol=1e-6)
        np.testing.assert_allclose(jv(w, dw=e)[1], want[0], rtol=1e-6)


EMPTY_JOINS = '''
def joined(x, n):
    ps = []
    for i in range(n):
        ps.append(x * (i + 1.0))
    return np.sum(np.concatenate(ps) ** 2)


def vstacked(x, n):
    ps = []
    for i in range(n):
        ps.append(x * (i + 1.0))
    return np.sum(np.vstack(ps) ** 2)


def stacked(x, n):
    ps = []
    for i in range(n):
        ps.append(x * (i + 1.0))
    return np.sum(np.stack(ps, axis=1) ** 2)
'''


@pytest.mark.parametrize("name", ["joined", "vstacked", "stacked"])
def test_joining_an_empty_run_time_list_raises_numpys_error(name):
    # NumPy raises ValueError (need at least one array); the generated code
    # read item 0 for the first piece's shape and raised IndexError
    f = make_function(EMPTY_JOINS, name)
    x = np.array([0.3, -0.5, 1.1])
    with pytest.raises(ValueError):
        f(x, 0)
    with pytest.raises(ValueError, match="need at least one array"):
        s2s_ad.grad(f)(x, 0)
    with pytest.raises(ValueError, match="need at least one array"):
        s2s_ad.vjp(f, x, 0)
    with pytest.raises(ValueError, match="need at least one array"):
        s2s_ad.jvp(f, wrt=0)(x, 0, dx=x)
    _close([s2s_ad.grad(f)(x, 2)], lambda x: f(x, 2), [x], [0])


NONE_CONSTANT = '''
import math

SHIFT = None


def f(x):
    y = math.sin(x) * len([1, 2])
    if SHIFT is None:
        return y * y
    return (y - SHIFT) ** 2
'''


def test_builtins_and_attribute_names_are_not_constants(tmp_path, monkeypatch):
    # The names a function reads that are no global of its module (len, range,
    # the `sin` of math.sin) were recorded like a global holding None, so every
    # derivative was put behind the check of changed constants (about 1 us a
    # call) although nothing it reads can change. Only a global that exists
    # (SHIFT = None here) is a constant; changing it is still seen.
    import importlib
    import math
    from examples import horner
    from s2s_ad import late_constants
    c = [0.5, -1.0, 2.0]
    g = s2s_ad.grad(horner.horner, wrt=(0, 1))
    assert not isinstance(g, late_constants.Seeing)
    _close(g(c, 0.7), horner.horner, [c, 0.7], [0, 1])
    (tmp_path / "none_constant_mod.py").write_text(NONE_CONSTANT)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("none_constant_mod")
    h = s2s_ad.grad(mod.f)
    assert isinstance(h, late_constants.Seeing)
    want = lambda x: (mod.f(x + 1e-6) - mod.f(x - 1e-6)) / 2e-6
    assert math.isclose(h(0.3), want(0.3), rel_tol=1e-6)
    monkeypatch.setattr(mod, "SHIFT", 0.25)
    assert math.isclose(h(0.3), want(0.3), rel_tol=1e-6)
