"""Closure under differentiation for the GradBench objectives of
examples/gradbench: each gradient module is written to a file, imported
under a new name (a plain module, no memory of where it came from) and
differentiated again. The JVP of the file's gradient (a Hessian-vector
product) is compared with central differences (float64) of the file's
gradient along the same direction, itself checked against central
differences of the objective.

ode and lstm call a helper in a loop inside a helper (``runge_kutta`` calls
``ode_rhs`` four times a step; ``predict`` calls ``lstm_model`` once per
layer): the inner helper's tapes are kept in a list on the outer helper's
tape, which the reader splits into one list per tape item, and ``predict``
returns a tuple value beside its tape's lists. Also here: the same shapes in
your own code (a helper returning ``(a, b), ys`` with ``ys`` a list grown at
run time), whose gradients are compared with central differences."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
from s2s_ad.higher import origin
from tests.examples_gradbench import (gmm_args, kmeans_args, llsq_args, lse_args, lstm_args,
                                      ode_args)
from tests.modules import import_source
from tests.soak import soak

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))

from gradbench import gmm, kmeans, llsq, lse, lstm, ode  # noqa: E402

RNG = np.random.default_rng(6060)

CASES = {
    "gmm": (gmm.gmm_objective, lambda: gmm_args(RNG, 5, 3, 2), (0, 1, 2)),
    "kmeans": (kmeans.kmeans_cost, lambda: kmeans_args(RNG, 12, 4, 3), (0, 1)),
    "llsq": (llsq.llsq_objective, lambda: llsq_args(RNG, 5, 9), (0,)),
    "lse": (lse.logsumexp, lambda: lse_args(RNG, 9), (0,)),
    "ode": (ode.ode_last, lambda: ode_args(RNG, 4, 3), (0,)),
    "lstm": (lstm.lstm_objective, lambda: lstm_args(RNG, 2, 3, 4), (0, 1)),
}


def _tuple(v):
    return v if isinstance(v, tuple) else (v,)


def _along(f, args, wrt, direction, h=1e-5):
    """Central differences of ``f``'s outputs along ``direction``."""
    def shifted(s):
        out = list(args)
        for w, d in zip(wrt, direction):
            out[w] = np.asarray(args[w], dtype=float) + s * d
        return out
    up, down = _tuple(f(*shifted(h))), _tuple(f(*shifted(-h)))
    return [(np.asarray(a) - np.asarray(b)) / (2 * h) for a, b in zip(up, down)]


def _scalar_fd(f, args, w, h=1e-6):
    x = np.asarray(args[w], dtype=float)
    out = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = h
        up, down = list(args), list(args)
        up[w], down[w] = x + e.reshape(x.shape), x - e.reshape(x.shape)
        out.flat[k] = (f(*up) - f(*down)) / (2 * h)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_file_of_an_objective_differentiated_again(name, tmp_path):
    fn, make, wrt = CASES[name]
    args = make()
    g = getattr(import_source(str(tmp_path), s2s_ad.gradient_source(fn, wrt=wrt),
                              f"gb_file_{name}"), "grad_" + fn.__name__)
    assert origin(g) is None
    for w, d in zip(wrt, _tuple(g(*args))):
        np.testing.assert_allclose(d, _scalar_fd(fn, args, w), rtol=1e-5, atol=1e-7)
    direction = [RNG.normal(size=np.shape(args[w])) for w in wrt]
    forward = s2s_ad.jvp(g, wrt=wrt)
    keys = list(inspect.signature(forward).parameters)[-len(wrt):]
    _, tangent = forward(*args, **dict(zip(keys, direction)))
    for got, want in zip(_tuple(tangent), _along(g, args, wrt, direction)):
        np.testing.assert_allclose(got, want, rtol=1e-5,
                                   atol=1e-6 * max(1.0, float(np.max(np.abs(want)))))


@pytest.mark.soak
def test_cli_gradient_of_the_lstm_gradient_file(tmp_path):
    """`s2s-ad grad` of the file `s2s-ad grad -o` wrote for lstm (a probe
    summing the gradient against a weight, so the result is a number), run
    in a fresh interpreter. (With ``--soak``: in the default run lstm's
    gradient file is read back and differentiated again through the API above,
    its `grad -o` file runs in a fresh interpreter in tests/test_gradbench.py,
    and tests/test_closure_numpy.py runs the CLI's gradient of a probe over a
    NumPy gradient file, mlp's, in a fresh interpreter.)"""
    first = tmp_path / "lstm_first.py"
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           "examples/gradbench/lstm.py:lstm_objective",
                           "--wrt", "main_params,extra_params", "-o", str(first)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    probe = tmp_path / "lstm_probe.py"
    probe.write_text("import numpy as np\nfrom lstm_first import grad_lstm_objective\n\n\n"
                     "def probe(main_params, extra_params, state, sequence, c):\n"
                     "    dm, de = grad_lstm_objective(main_params, extra_params, state, "
                     "sequence)\n    return np.sum(dm * c)\n", encoding="utf-8")
    second = tmp_path / "lstm_second.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", f"{probe}:probe",
                           "--wrt", "extra_params", "-o", str(second)],
                          cwd=str(tmp_path), capture_output=True, text=True, timeout=300,
                          env=dict(env, PYTHONPATH=f"{ROOT}{os.pathsep}{tmp_path}"))
    assert done.returncode == 0, done.stderr
    args = lstm_args(np.random.default_rng(7), 2, 3, 4)
    c = np.random.default_rng(8).normal(size=args[0].shape)
    script = ("import sys, numpy as np\nsys.path.insert(0, sys.argv[1])\n"
              "from lstm_second import grad_probe\n"
              "a = np.load(sys.argv[2], allow_pickle=True)\n"
              "np.save(sys.argv[3], grad_probe(*a['args'], a['c']))\n")
    np.savez(tmp_path / "in.npz", args=np.array(args + [], dtype=object), c=c)
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path), str(tmp_path / "in.npz"),
                           str(tmp_path / "out.npy")], capture_output=True, text=True,
                          timeout=300, env={k: v for k, v in os.environ.items()
                                            if k != "PYTHONPATH"})
    assert done.returncode == 0, done.stderr
    got = np.load(tmp_path / "out.npy")
    sys.path.insert(0, str(tmp_path))
    try:
        import lstm_first
        want = _scalar_fd(lambda m, e, s, q: float(np.sum(
            lstm_first.grad_lstm_objective(m, e, s, q)[0] * c)), args, 1)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("lstm_first", None)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


HELPER_IN_LOOP_SRC = '''
import numpy as np


def cell(a, b):
    u = a * b + np.sin(a)
    v = np.tanh(u) * b
    return v, u


def layer(x, w):
    for k in range(0, w.shape[0], 2):
        x, u = cell(x, w[k])
        x = x + u * w[k + 1]
    return x


def f(x, w):
    s = 0.0
    for t in range(2):
        s = s + np.sum(layer(x + t, w))
    return s


def step(x, w):
    x, u = cell(x, w)
    return (x * u, u), x


def g(x, w):
    s = 0.0
    for t in range(3):
        (p, u), x = step(x, w[t])
        s = s + np.sum(p) + np.sum(u * u)
    return s
'''


def test_a_helper_calling_a_helper_in_a_loop_read_back(tmp_path):
    mod = import_source(str(tmp_path), HELPER_IN_LOOP_SRC, "helper_in_loop")
    x, w = RNG.normal(size=3), 0.5 * RNG.normal(size=(4, 3))
    for name in ("f", "g"):
        fn = getattr(mod, name)
        g = getattr(import_source(str(tmp_path), s2s_ad.gradient_source(fn, wrt=(0, 1)),
                                  f"helper_in_loop_{name}_grad"), "grad_" + name)
        for k, d in enumerate(g(x, w)):
            np.testing.assert_allclose(d, _scalar_fd(fn, [x, w], k), rtol=1e-5, atol=1e-7)
        direction = [RNG.normal(size=3), RNG.normal(size=(4, 3))]
        forward = s2s_ad.jvp(g, wrt=(0, 1))
        keys = list(inspect.signature(forward).parameters)[-2:]
        _, tangent = forward(x, w, **dict(zip(keys, direction)))
        for got, want in zip(tangent, _along(g, [x, w], (0, 1), direction)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


NESTED_WITH_LIST_SRC = '''
import numpy as np


def h(x, n):
    ys = []
    for i in range(n):
        ys.append(x * (i + 1.0))
    return (x * 2.0, np.sin(x)), ys


def unpacked(x, n):
    (a, b), ys = h(x, n)
    s = a * b
    for y in ys:
        s = s + y * y
    return np.sum(s)


def indexed(x, n):
    pair, ys = h(x, n)
    return np.sum(pair[0] * ys[0] + pair[1] * ys[-1])


def numbers(x: float, n: int):
    ys = []
    for i in range(n):
        ys.append(x * (i + 1.0))
    (a, b), zs = (x * 2.0, x * x), ys
    return a * b + zs[0] * zs[-1] + sum(zs)
'''


@pytest.mark.parametrize("name", ["unpacked", "indexed"])
@pytest.mark.parametrize("n", [1, 3])
def test_a_helper_returning_a_tuple_beside_a_list(name, n, tmp_path):
    """A helper returning ``(a, b), ys`` (``ys`` grown at run time), unpacked
    or indexed by the caller: in a loop of the caller's, too."""
    mod = import_source(str(tmp_path), NESTED_WITH_LIST_SRC, f"nested_list_{name}_{n}")
    fn = getattr(mod, name)
    x = np.array([0.3, -0.7, 1.1])
    np.testing.assert_allclose(s2s_ad.grad(fn, wrt="x")(x, n), _scalar_fd(fn, [x, n], 0),
                               rtol=1e-6, atol=1e-8)
    tangent = s2s_ad.jvp(fn, wrt="x")(x, n, dx=np.ones(3))[1]
    np.testing.assert_allclose(tangent, np.sum(_scalar_fd(fn, [x, n], 0)), rtol=1e-6)


SPECIALISED_SRC = '''
import numpy as np


def h0(u, v, w):
    acc = 0.0
    for i in range(2):
        acc = acc + u * w
    return (2.0 + v) * acc


def h1(u, v, w):
    t = 8.0 * w
    return h0(u, t, w * -1.5) / (1.0 + u * u)


def f(a, b, s):
    acc = 0.0
    for i in range(len(a)):
        acc = acc + h1(a[i] * b[i], b[i], a[i]) * a[i]
    r = a * 0.0 + h1(a, s, b)
    return acc + s * r[2]
'''


def test_a_helpers_second_specialisation_read_back_in_reverse(tmp_path):
    """`h1` called with numbers and with arrays gets two pairs, `h1_fwd`/
    `h1_bwd` and `h1_fwd_1`/`h1_bwd_1`: both read back as pairs, so `grad` of
    a probe over the file's gradient (reverse over reverse) agrees with
    central differences (the second was refused, located: its tape was not
    split)."""
    src = import_source(str(tmp_path), SPECIALISED_SRC, "specialised_src")
    text = s2s_ad.gradient_source(src.f, wrt=(0, 1, 2), arrays=("a", "b"))
    assert "def h1_fwd_1(" in text and "def h1_bwd_1(" in text
    import_source(str(tmp_path), text, "specialised_grad")
    sys.path.insert(0, str(tmp_path))
    try:
        probe = import_source(str(tmp_path), (
            "import numpy as np\nfrom specialised_grad import grad_f\n\n\n"
            "def probe(a, b, s, ca, cb):\n    da, db, ds = grad_f(a, b, s)\n"
            "    return np.sum(da * ca) + np.sum(db * cb) + ds * 0.5\n"), "specialised_probe").probe
        a, b, s = RNG.normal(size=3), RNG.normal(size=3), 0.9
        ca, cb = RNG.normal(size=3), RNG.normal(size=3)
        got = s2s_ad.grad(probe, wrt=(0, 1, 2))(a, b, s, ca, cb)
        args = [a, b, s, ca, cb]
        for k in (0, 1):
            np.testing.assert_allclose(got[k], _scalar_fd(probe, args, k), rtol=1e-5, atol=1e-7)
        want = (probe(a, b, s + 1e-6, ca, cb) - probe(a, b, s - 1e-6, ca, cb)) / 2e-6
        np.testing.assert_allclose(got[2], want, rtol=1e-5, atol=1e-7)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("specialised_grad", None)


def _second_order_of_the_file(folder, g, fn, args, wrt, module: str, name: str,
                              route: str) -> None:
    """``g``, the gradient file ``module`` of ``fn`` read back as ``name``:
    against central differences of ``fn``; then, by ``route``, its JVP along
    ``v`` against central differences of ``g`` (``"forward"``), or the
    gradient of a probe summing ``g``'s items against ``c`` (reverse over
    reverse, ``"reverse"``), checked as ``(H c) · v = c · (H v)`` (``H`` is
    symmetric, ``H v`` the central differences of ``g`` along ``v``)."""
    for k, d in zip(wrt, g(*args)):
        np.testing.assert_allclose(d, _scalar_fd(fn, args, k), rtol=1e-5, atol=1e-7)
    v = [RNG.normal(size=np.shape(args[k])) for k in wrt]
    along = _along(g, args, wrt, v)
    if route == "forward":
        forward = s2s_ad.jvp(g, wrt=wrt)
        keys = list(inspect.signature(forward).parameters)[-len(wrt):]
        _, tangent = forward(*args, **dict(zip(keys, v)))
        for got, want in zip(tangent, along):
            np.testing.assert_allclose(got, want, rtol=1e-5,
                                       atol=1e-6 * max(1.0, float(np.max(np.abs(want)))))
        return
    assert route == "reverse", route
    cs = [RNG.normal(size=np.shape(args[k])) for k in wrt]
    names = [f"a{k}" for k in range(len(args))]
    weights = [f"k{j}" for j in range(len(wrt))]
    sys.path.insert(0, str(folder))
    try:
        probe = import_source(str(folder), f"import numpy as np\nfrom {module} import {name}\n"
                              f"\n\ndef probe({', '.join(names + weights)}):\n"
                              f"    r = {name}({', '.join(names)})\n    return "
                              + " + ".join(f"np.sum(r[{j}] * k{j})" for j in range(len(wrt)))
                              + "\n", module + "_probe")
        second = s2s_ad.grad(probe.probe, wrt=wrt)(*args, *cs)
    finally:
        sys.path.remove(str(folder))
    second = second if isinstance(second, tuple) else (second,)
    lhs = sum(float(np.sum(a * b)) for a, b in zip(second, v))
    rhs = sum(float(np.sum(a * b)) for a, b in zip(along, cs))
    assert np.isclose(lhs, rhs, rtol=1e-5, atol=1e-8), (lhs, rhs)


ROUTES = ["reverse", soak("forward")]
"""Both routes read the whole gradient file back; the forward one (its JVP,
about 20 s for ht or ba) waits for ``--soak``: the JVP of a gradient file
read back runs in the default run on the other objectives
(test_gradient_file_of_an_objective_differentiated_again)."""


HT_LOSS_SRC = '''
import numpy as np
from gradbench.ht import hand_objective


def ht_loss(theta, parents, base_relatives, inverse_base_absolutes, base_positions, weights,
            points, correspondences, c):
    return np.sum(hand_objective(theta, parents, base_relatives, inverse_base_absolutes,
                                 base_positions, weights, points, correspondences) * c)
'''


@pytest.mark.parametrize("route", ROUTES)
def test_the_hand_tracking_gradient_file_differentiated_again(tmp_path, route):
    """ht's gradient file read back: its ``scatter(g, vertex_positions,
    correspondences)`` (an integer array repeating points, whose adjoints add
    up), ``add_at(dabsolutes, parents[i], g)`` in the reverse loop over
    bones, and the tapes of int counters (``i_pose_params_tape[i] = ...``) it
    reads as indices. Its JVP (``forward``, with ``--soak``), or the
    gradient of a probe summing it against ``c`` (reverse over reverse,
    ``reverse``), against central differences of the file's gradient."""
    from tests.examples_gradbench import ht_args
    from gradbench import ht
    args = ht_args(RNG, 20, 10)
    args[-1] = np.concatenate([args[-1][:5], args[-1][:5]])  # each point twice
    args.append(RNG.normal(size=np.shape(ht.hand_objective(*args))))
    mod = import_source(str(tmp_path), HT_LOSS_SRC, "ht_loss_src")
    text = s2s_ad.gradient_source(mod.ht_loss, wrt=(0,))
    g = import_source(str(tmp_path), text, "ht_loss_grad").grad_ht_loss
    assert origin(g) is None
    _second_order_of_the_file(tmp_path, g, mod.ht_loss, args, (0,), "ht_loss_grad",
                               "grad_ht_loss", route)


BA_LOSS_SRC = '''
import numpy as np
from gradbench.ba import ba_objective


def ba_loss(cams, X, w, obs, feats, c1, c2):
    r, we = ba_objective(cams, X, w, obs, feats)
    return np.sum(r * c1) + np.sum(we * c2)
'''


@pytest.mark.parametrize("route", ROUTES)
def test_the_bundle_adjustment_gradient_file_differentiated_again(tmp_path, route):
    """ba's gradient file read back: its loop over observations computed at
    once or not (`if fits_1:`), the list of helper tapes the other arm keeps
    set to None before the branch, the loop's tape item that is a tuple, and
    `dot_adjoint` (np.dot's adjoint, a primitive with rules). Its JVP
    (``forward``, with ``--soak``), or the gradient of a probe summing it
    against ``c`` (reverse over reverse, ``reverse``), against central
    differences of the file's gradient."""
    from tests.examples_gradbench import ba_args
    args = ba_args(RNG, 3, 5, 8) + [RNG.normal(size=(8, 2)), RNG.normal(size=8)]
    wrt = (0, 1, 2)
    mod = import_source(str(tmp_path), BA_LOSS_SRC, "ba_loss_src")
    text = s2s_ad.gradient_source(mod.ba_loss, wrt=wrt)
    assert "dot_adjoint(" in text and "if fits_1" in text
    g = import_source(str(tmp_path), text, "ba_loss_grad").grad_ba_loss
    assert origin(g) is None
    _second_order_of_the_file(tmp_path, g, mod.ba_loss, args, wrt, "ba_loss_grad",
                               "grad_ba_loss", route)
