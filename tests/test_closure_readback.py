"""Closure under differentiation, the forms of generated module read back
here: a helper's tape holding the lists of a loop that s2s-ad unrolls, under
a branch and in a loop (with a recorded decision beside the lists); a
helper's tape inside another's under a branch; a ``value_and_grad`` module
(``return value, (dx, dr)``); checkpointed modules (both schedules); and
generated modules called by your own functions (helpers, loops, branches;
a NumPy module of which only some items are read). Each gradient module is
written to a file and imported under a new name, then differentiated
again; every second derivative is compared with central differences
(float64) of the file's gradient, itself checked against central
differences of the original function; what is not read back yet is
refused, located."""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
from s2s_ad.errors import SourceError
from examples import logistic_map, newton, piecewise
from tests.fuzz import import_program
from tests.modules import import_source, run_generated
from tests.programs import RandomDraw
from tests.programs_helpers import helper_program
from tests.soak import soak
from tests.test_closure import (NESTED_TAPES, RNG, ROOT, _cli, _second_from_file, central_jacobian,
                                checked_file_gradient, loaded, tangent_keywords)

TAPES_SRC = '''
import math


def h(b, u):
    for i in range(4, 0, -2):
        u = u - u * 0.5
        u = u * math.fabs(u) + b
    if u > 0.1:
        u = u * b
    return b - u


def under_branch(b, u):
    if b > 0.0:
        r = h(b, u)
    else:
        r = h(b * 0.5, u * 0.5) * 2.0
    return r


def in_loop(b, u):
    s = 0.0
    for i in range(3):
        s = s + h(b * (i + 1.0), u) * (i + 1.0)
    return s
'''


NESTED_SRC = '''
import math


def h(b, u):
    if u > 0.1:
        u = u * b
    else:
        u = math.sin(u) * b + u * u
    return b - u * u


def under_branch(b, u):
    if b > 0.0:
        r = h(b, u)
    else:
        r = h(b * 0.5, u * 0.5) * 2.0
    return r


def nested(b, u):
    if u > 0.0:
        return under_branch(b, u) + b
    return under_branch(u, b) * u


def looped(b, u):
    s = 0.0
    for i in range(3):
        s = s + h(b * (i + 1.0), u) * (i + 1.0)
    return s


def looped_in_helper(b, u):
    return looped(b, u) * b
'''


def second_against_differences(g, args, wrt):
    """``grad``, ``jvp`` and ``vjp`` of the file's gradient ``g``, each
    against central differences of ``g``."""
    H = central_jacobian(g, args, wrt)
    tol = dict(rtol=1e-5, atol=1e-6 * max(1.0, float(np.max(np.abs(H)))))
    for k in range(len(wrt)):
        row = s2s_ad.grad(g, wrt=tuple(wrt), output=k)(*args)
        np.testing.assert_allclose(np.array(row, dtype=float), H[k], **tol)
    v = RNG.normal(size=len(wrt))
    forward = s2s_ad.jvp(g, wrt=tuple(wrt))
    _, tangent = forward(*args, **dict(zip(tangent_keywords(forward, len(wrt)), v)))
    np.testing.assert_allclose(np.array(tangent, dtype=float), H @ v, **tol)
    c = RNG.normal(size=len(wrt))
    _, back = s2s_ad.vjp(g, *args)
    np.testing.assert_allclose(np.array(back(tuple(c))[:len(wrt)], dtype=float), H.T @ c, **tol)


READ_BACK: dict = {}
"""(source's label, function) -> (the function, its gradient file read back):
written and read back once for all the points of a test below, so that the
grad, jvp and vjp of the file's gradient (s2s-ad caches them per function)
are generated once, not at every point; each point still checks the file's
gradient against central differences of the function, and its second
derivatives against central differences of it."""


def _file_gradient_at(source, label, name, args, wrt, tmp_path_factory, grad_label):
    if (label, name) not in READ_BACK:
        folder = tmp_path_factory.mktemp(label)
        fn = getattr(import_source(str(folder), source, label), name)
        READ_BACK[label, name] = fn, checked_file_gradient(fn, args, wrt, folder, grad_label)
    fn, g = READ_BACK[label, name]
    first = np.array(g(*args), dtype=float)  # (as checked_file_gradient checks it)
    np.testing.assert_allclose(first, central_jacobian(fn, args, wrt, 1e-6), rtol=1e-5,
                               atol=1e-7)
    return g


@pytest.mark.parametrize("name,args", [
    ("under_branch", [0.7, 0.4]), ("under_branch", [-0.6, 0.3]),
    ("in_loop", [0.7, 0.4]), ("in_loop", [0.3, -0.2]),
])
def test_helper_tape_of_unrolled_loop_lists_under_a_branch_and_in_a_loop(name, args,
                                                                         tmp_path_factory):
    """``h``'s loop over a constant range is unrolled: its tape holds lists of
    a known length (and, in ``h_fwd``'s tuple, the recorded decision of its
    ``if``, a bool). Called under a branch, those lists are read again under
    the same recorded decision in the reverse sweep; called in a loop, the
    tuple holding lists and a bool goes on a tape of tapes."""
    g = _file_gradient_at(TAPES_SRC, f"tapes_{name}", name, args, ("b", "u"), tmp_path_factory,
                          f"tapes_grad_{name}")
    second_against_differences(g, args, ("b", "u"))


@pytest.mark.parametrize("args", [[0.7, 0.4], [-0.6, 0.3], [0.6, -0.3], [0.7, 0.05]])
def test_helper_tape_inside_a_helpers_tape_under_a_branch(args, tmp_path_factory):
    """``under_branch_fwd`` calls ``h_fwd`` on one side of a branch each: its
    tape holds ``h``'s two tapes, each set to ``None`` before the branch.
    Split into their items, each item starts at a number (``h_bwd`` reads
    them only under the recorded decision); before, the forward function kept
    the tapes whole while its callers bound their items (an ``IndexError`` in
    the second derivative)."""
    g = _file_gradient_at(NESTED_SRC, "nested_tapes", "nested", args, ("b", "u"),
                          tmp_path_factory, "nested_tapes_grad")
    second_against_differences(g, args, ("b", "u"))


def test_a_tape_of_tapes_inside_a_helpers_tape(tmp_path):
    """A helper calling a helper in a loop keeps the inner tapes on a tape of
    tapes, inside its own tape; its backward function reads each from it
    into a name and calls the inner backward function with it (the form the
    split follows: the read was fused into the call before, and the forward
    function was refused, located, where it returns its tape). Its second
    derivatives against differences of the file's gradient."""
    fn = import_source(str(tmp_path), NESTED_SRC, "looped_tapes").looped_in_helper
    g = checked_file_gradient(fn, [0.7, 0.4], ("b", "u"), tmp_path, "looped_tapes_grad")
    second_against_differences(g, [0.7, 0.4], ("b", "u"))


@pytest.mark.parametrize("seed,compares", [(780027, True), (780251, True), (780056, True)])
def test_closure_soak_programs_once_refused_for_unlisted_reasons(seed, compares, tmp_path):
    """Three helper programs of the closure soak: 780027 (a looping helper's
    tape read again under a branch), 780251 (a tape holding a recorded
    decision beside lists, in a loop) and 780056 (a list grown at run time
    beside lists of a known length in a helper's tape, refused until the
    helper's returned structure could hold a list of any length) compare."""
    prog = helper_program(RandomDraw(seed))
    fn = import_program(prog, str(tmp_path), f"soak_{seed}")
    got = _second_from_file(prog, fn, tmp_path, f"soak_grad_{seed}", NESTED_TAPES)
    assert (got > 0) if compares else (got == -1), got


def flat(vg):
    """``vg``'s ``(value, (dx, dr))`` as the flat ``(value, dx, dr)``: the
    items ``output=K`` chooses from."""
    @functools.wraps(vg)
    def run(*args, **kw):
        value, gradient = vg(*args, **kw)
        return (value, *gradient)
    return run


VALUE_CASES = [
    (logistic_map.logistic, [0.3, 3.2, 5], ("x", "r"), ""),
    (piecewise.piecewise, [1.5, 2.0], ("x", "a"), ""),
    (piecewise.piecewise, [0.5, 2.0], ("x", "a"), ""),
    (newton.cube_root, [2.0], ("c",), ""),
    (None, [0.7, 0.4], ("b", "u"), "in_loop"),
    (None, [-0.6, 0.3], ("b", "u"), "under_branch"),
]


@pytest.mark.parametrize("fn,args,wrt,name", VALUE_CASES,
                         ids=[f"{f.__name__ if f else n}-{i}"
                              for i, (f, _, _, n) in enumerate(VALUE_CASES)])
def test_value_and_grad_module_read_from_its_file_is_differentiated(fn, args, wrt, name,
                                                                     tmp_path):
    """``value_and_grad_FN`` loaded from its file: ``output=0`` is the value
    (its gradient is the first derivative), ``output=1 + k`` the k-th
    gradient item (its gradient a row of the Hessian); ``jvp`` and ``vjp``
    of it see the flat tuple ``(value, dx, dr)``."""
    if fn is None:
        fn = getattr(import_source(str(tmp_path), TAPES_SRC, f"vg_{name}"), name)
    g = checked_file_gradient(fn, args, wrt, tmp_path, f"vg_first_{fn.__name__}")
    text = s2s_ad.gradient_source(fn, wrt=tuple(wrt), with_value=True)
    assert re.search(r"return \w+, \(", text) or len(wrt) == 1
    vg = loaded(tmp_path, text, f"vg_file_{fn.__name__}", "value_and_grad_" + fn.__name__)
    value, gradient = vg(*args)
    assert value == pytest.approx(fn(*args), rel=1e-12, abs=1e-14)
    np.testing.assert_allclose(np.array(gradient, dtype=float), np.array(g(*args), dtype=float),
                               rtol=1e-12, atol=1e-14)
    F = flat(vg)
    J = central_jacobian(F, args, wrt)  # row 0: the first derivative; rows 1..: the Hessian
    tol = dict(rtol=1e-5, atol=1e-6 * max(1.0, float(np.max(np.abs(J)))))
    for k in range(1 + len(wrt)):
        row = s2s_ad.grad(vg, wrt=tuple(wrt), output=k)(*args)
        np.testing.assert_allclose(np.array(row, dtype=float), J[k], **tol)
    v = RNG.normal(size=len(wrt))
    forward = s2s_ad.jvp(vg, wrt=tuple(wrt))
    values, tangent = forward(*args, **dict(zip(tangent_keywords(forward, len(wrt)), v)))
    np.testing.assert_allclose(np.array(values, dtype=float), np.array(F(*args), dtype=float),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.array(tangent, dtype=float), J @ v, **tol)
    c = RNG.normal(size=1 + len(wrt))
    _, back = s2s_ad.vjp(vg, *args)
    out = back(tuple(c))
    names = list(inspect.signature(fn).parameters)
    np.testing.assert_allclose(np.array([out[names.index(w)] for w in wrt], dtype=float),
                               J.T @ c, **tol)


def test_cli_gradient_of_a_value_and_grad_file(tmp_path):
    """`s2s-ad grad --value -o`, then `s2s-ad grad FILE:value_and_grad_FN
    --output K -o` of that file, run in a fresh interpreter without s2s-ad."""
    args, wrt = [0.3, 3.2, 5], ("x", "r")
    first = tmp_path / "vg_first.py"
    _cli("grad", "examples/logistic_map.py:logistic", "--wrt", "x,r", "--value", "-o", str(first))
    vg = loaded(tmp_path, first.read_text(encoding="utf-8"), "vg_again", "value_and_grad_logistic")
    J = central_jacobian(flat(vg), args, wrt)
    for k in range(3):
        second = tmp_path / f"vg_second_{k}.py"
        _cli("grad", f"{first}:value_and_grad_logistic", "--wrt", "x,r", "--output", str(k),
             "-o", str(second))
        row = run_generated(tmp_path, f"vg_second_{k}", "grad_value_and_grad_logistic", args)
        np.testing.assert_allclose(np.concatenate([np.ravel(r) for r in row]), J[k],
                                   rtol=1e-5, atol=1e-6)


CALLER_SRC = '''
from g_log import grad_logistic
from g_loop import grad_in_loop
from g_branch import grad_under_branch
from vg_log import value_and_grad_logistic
from j_log import jvp_logistic


def uses(x, r):
    dx, dr = grad_logistic(x, r, 4)
    db, du = grad_in_loop(x, r * 0.1)
    v, t = jvp_logistic(x, r, 3, dx=1.0, dr=0.5)
    return dx * r + dr * db + du + v * t


def helper_of_helper(x, r):
    return uses(x, r) * x


def vg_user(x, r):
    v, (dx, dr) = value_and_grad_logistic(x, r, 4)
    return v + dx * dr


def in_loop(x, r):
    s = 0.0
    for k in range(2):
        s = s + helper_of_helper(x, r + 0.1 * k) + vg_user(x, r)
    return s


def in_branch(x, r):
    if x > 0.25:
        db, du = grad_under_branch(x, r)
        return uses(x, r) + db * du
    return vg_user(x, r) * r
'''


@pytest.fixture
def caller(tmp_path):
    """``CALLER_SRC`` importing five generated modules written to files: a
    gradient with a tape (``logistic``), gradients with helper pairs in a
    loop and under a branch, a ``value_and_grad`` module, a JVP module."""
    tapes = import_source(str(tmp_path), TAPES_SRC, "caller_tapes_src")
    texts = {"g_log": s2s_ad.gradient_source(logistic_map.logistic, wrt=("x", "r")),
             "g_loop": s2s_ad.gradient_source(tapes.in_loop, wrt=("b", "u")),
             "g_branch": s2s_ad.gradient_source(tapes.under_branch, wrt=("b", "u")),
             "vg_log": s2s_ad.gradient_source(logistic_map.logistic, wrt=("x", "r"),
                                              with_value=True),
             "j_log": s2s_ad.jvp_source(logistic_map.logistic, wrt=["x", "r"])}
    for name, text in texts.items():
        (tmp_path / f"{name}.py").write_text(text, encoding="utf-8")
    (tmp_path / "caller_src.py").write_text(CALLER_SRC, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    try:
        yield import_source(str(tmp_path), CALLER_SRC, "caller_src")
    finally:
        sys.path.remove(str(tmp_path))
        for name in texts:
            sys.modules.pop(name, None)


@pytest.mark.parametrize("name,args", [("uses", [0.3, 3.2]), ("helper_of_helper", [0.3, 3.2]),
                                       ("vg_user", [0.3, 3.2]), ("in_loop", [0.3, 3.2]),
                                       ("in_branch", [0.3, 3.2]), ("in_branch", [0.2, 3.1])])
def test_gradient_modules_called_by_helpers_of_the_function_differentiated(caller, name, args):
    """A generated gradient (and value_and_grad) module, imported from its
    file, called by a helper, a helper of a helper, in a loop and under a
    branch: ``grad`` and ``vjp`` of the caller against central differences."""
    fn = getattr(caller, name)
    want = central_jacobian(lambda x, r: fn(x, r), args, ("x", "r"))
    tol = dict(rtol=1e-5, atol=1e-6 * max(1.0, float(np.max(np.abs(want)))))
    np.testing.assert_allclose(np.array(s2s_ad.grad(fn, wrt=("x", "r"))(*args)), want, **tol)
    _, back = s2s_ad.vjp(fn, *args)
    np.testing.assert_allclose(np.array(back(1.0)), want, **tol)


def test_cli_gradient_of_a_caller_of_gradient_modules(caller, tmp_path):
    """`s2s-ad grad caller_src.py:in_branch -o`, run in a fresh interpreter
    without s2s-ad, on both sides of the branch."""
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "caller_src.py:in_branch",
                           "--wrt", "x,r", "-o", "caller_grad.py"], cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}"))
    assert done.returncode == 0, done.stderr
    for args in ([0.3, 3.2], [0.2, 3.1]):
        want = central_jacobian(lambda x, r: caller.in_branch(x, r), args, ("x", "r"))
        got = run_generated(tmp_path, "caller_grad", "grad_in_branch", args)
        np.testing.assert_allclose(np.concatenate([np.ravel(g) for g in got]), want, rtol=1e-5,
                                   atol=1e-6 * max(1.0, float(np.max(np.abs(want)))))


CHECKPOINTED = [  # (function of tests/checkpoint_src.py, arguments, wrt)
    ("recurrence", [0.3, 0.9, 40], ("x", "a")), ("recurrence", [0.3, 0.9, 300], ("x", "a")),
    ("recurrence", [0.3, 0.9, 0], ("x", "a")), ("two_carried", [0.4, -0.2, 0.05, 200], ("x", "v")),
    ("strided", [0.7, 301], ("x",)), ("branchy", [0.4, 150], ("x",)),
    ("branchy", [-1.3, 30], ("x",)), ("nested", [0.6, 70, 3], ("x",)),
    ("calls_in_loop", [0.2, 0.8, 100], ("x", "a")), ("breaks", [1.7, 50], ("x",)),
    ("breaks", [0.3, 2], ("x",)), ("returns_early", [2.5, 40], ("x",)),
    ("returns_early", [0.2, 40], ("x",)), ("newton", [27.5], ("c",)),
    ("grows", [0.5, 9.0], ("x", "limit")),
]


def _checkpoint_src():
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    try:
        return importlib.import_module("checkpoint_src")
    finally:
        sys.path.remove(os.path.join(ROOT, "tests"))


def _checkpointed_ids() -> list:
    """``name-n``, made unique as pytest makes them (``_0``, ``_1`` on repeats)."""
    ids = [f"{n}-{a[-1]}" for n, a, _ in CHECKPOINTED]
    seen: dict = {}
    out = []
    for i in ids:
        k = seen[i] = seen.get(i, -1) + 1
        out.append(f"{i}_{k}" if ids.count(i) > 1 else i)
    return out


@pytest.mark.parametrize("name,args,wrt,budget", [
    # each function with one budget in turn in the default run (the first with both), every
    # pair with --soak
    (pytest.param if k == 0 or b == (2, True)[k % 2] else soak)(n, a, w, b, id=f"{i}-{b}")
    for k, ((n, a, w), i) in enumerate(zip(CHECKPOINTED, _checkpointed_ids()))
    for b in (2, True)])
def test_checkpointed_module_read_from_its_file_is_differentiated(name, args, wrt, budget,
                                                                  tmp_path):
    """A module written with ``checkpoint=`` (binomial snapshots for a ``for``,
    segments of about √n for a ``while`` and a loop with ``break`` or
    ``return``; budgets of 2 snapshots and the default) loaded from its file:
    its gradient against central differences of ``f``, and ``grad`` of it
    against central differences of it."""
    fn = getattr(_checkpoint_src(), name)
    text = s2s_ad.gradient_source(fn, wrt=wrt, checkpoint=budget)
    assert "_snaps = []" in text
    g = loaded(tmp_path, text, f"ck_{name}_{budget is True}", "grad_" + name)
    np.testing.assert_allclose(np.array(g(*args), dtype=float),
                               central_jacobian(fn, args, wrt, 1e-6), rtol=1e-5, atol=1e-7)
    H = central_jacobian(g, args, wrt, 1e-6)
    tol = dict(rtol=1e-5, atol=1e-6 * max(1.0, float(np.max(np.abs(H)))))
    for k in range(len(wrt)):
        row = s2s_ad.grad(g, wrt=wrt, output=k)(*args)
        np.testing.assert_allclose(np.array(row, dtype=float), H[k], **tol)


def test_checkpointed_array_module_read_back_jvp(tmp_path):
    """A checkpointed loop carrying an array (one-iteration blocks): the JVP of
    the file's gradient against central differences of it along a direction."""
    fn = _checkpoint_src().array_state
    u, w = RNG.normal(size=6), RNG.normal(size=6)
    g = loaded(tmp_path, s2s_ad.gradient_source(fn, wrt="u", checkpoint=3), "ck_array",
               "grad_array_state")
    v = RNG.normal(size=6)
    forward = s2s_ad.jvp(g, wrt="u")
    _, tangent = forward(u, w, 9, **{tangent_keywords(forward, 1)[0]: v})
    h = 1e-6
    along = (g(u + h * v, w, 9) - g(u - h * v, w, 9)) / (2 * h)
    np.testing.assert_allclose(tangent, along, rtol=1e-5,
                               atol=1e-6 * max(1.0, float(np.max(np.abs(along)))))


def test_a_helpers_checkpointed_loop_read_back_is_refused_located(tmp_path):
    """A helper's checkpointed loop keeps its snapshots in its forward
    function's tape: its module is refused where the snapshot is taken."""
    fn = _checkpoint_src().calls_looping_helper
    g = loaded(tmp_path, s2s_ad.gradient_source(fn, wrt=("x", "a"), checkpoint=True),
               "ck_helper", "grad_calls_looping_helper")
    with pytest.raises(SourceError, match=r"ck_helper\.py:\d+:\d+: error: this snapshot of a "
                       r"checkpointed loop is not read back") as e:
        s2s_ad.grad(g, wrt=("x", "a"), output=0)(0.3, 0.7, 9)
    assert "^" in str(e.value)


def test_cli_gradient_of_a_checkpointed_file(tmp_path):
    """`s2s-ad grad --checkpoint --snapshots 3 -o`, then `s2s-ad grad` of that
    file, run in a fresh interpreter without s2s-ad."""
    args, wrt = [0.3, 3.2, 70], ("x", "r")
    first = tmp_path / "ck_first.py"
    _cli("grad", "examples/logistic_map.py:logistic", "--wrt", "x,r", "--checkpoint",
         "--snapshots", "3", "-o", str(first))
    g = loaded(tmp_path, first.read_text(encoding="utf-8"), "ck_again", "grad_logistic")
    H = central_jacobian(g, args, wrt)
    for k in range(2):
        second = tmp_path / f"ck_second_{k}.py"
        _cli("grad", f"{first}:grad_logistic", "--wrt", "x,r", "--output", str(k),
             "-o", str(second))
        row = run_generated(tmp_path, f"ck_second_{k}", "grad_grad_logistic", args)
        np.testing.assert_allclose(np.concatenate([np.ravel(r) for r in row]), H[k],
                                   rtol=1e-5, atol=1e-6 * max(1.0, float(np.max(np.abs(H)))))


NUMPY_CALLER_SRC = '''
import numpy as np
from g_mlp import grad_mlp_loss


def some_items(W1, b1, W2, b2, X, Y, C):
    dW1, db1, dW2, db2 = grad_mlp_loss(W1, b1, W2, b2, X, Y)
    return np.sum(C * dW1) + np.sum(db2 * db2)


def in_a_loop(W1, b1, W2, b2, X, Y, C):
    s = 0.0
    for k in range(2):
        s = s + some_items(W1, b1, W2, b2, X, Y, C) * (k + 1.0)
    return s
'''


@pytest.mark.parametrize("name", ["some_items", "in_a_loop"])
def test_numpy_gradient_module_with_items_left_unread(name, tmp_path):
    """A NumPy gradient module called by your code that reads some of its
    items only (``db1`` and ``dW2`` unused): the cotangent of an unread item is
    a 0.0, which the adjoints of ``matmul_adjoint`` shape like its result
    before ``np.matmul``. ``grad`` of the caller (at top level and from a
    helper in a loop) against central differences."""
    from examples import mlp
    from tests.array_oracle import fd_gradient
    (tmp_path / "g_mlp.py").write_text(
        s2s_ad.gradient_source(mlp.mlp_loss, wrt=("W1", "b1", "W2", "b2")), encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    try:
        fn = getattr(import_source(str(tmp_path), NUMPY_CALLER_SRC, f"np_caller_{name}"), name)
        shapes = [(4, 5), (5,), (5, 1), (1,), (6, 4), (6, 1), (4, 5)]
        args = [RNG.normal(size=s) for s in shapes]
        got = s2s_ad.grad(fn, wrt=("W1", "b2"))(*args)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("g_mlp", None)
    for g, k in zip(got, (0, 3)):
        want = fd_gradient(fn, args, k)
        np.testing.assert_allclose(g, want, rtol=1e-5,
                                   atol=1e-6 * max(1.0, float(np.max(np.abs(want)))))


GUARDED_LIST_SRC = '''
import math


def top(x, a):
    c = x > 0.3
    if c:
        xs = [x * a, math.sin(x), 2.0]
    else:
        a = a * 2.0
    if c:
        y = xs[0] * xs[1] + a * xs[2]
    else:
        y = x * a
    return y


def in_helper(x, a):
    s = 0.0
    for i in range(2):
        s = s + top(x + 0.1 * i, a)
    return s
'''


@pytest.mark.parametrize("name", ["top", "in_helper"])
@pytest.mark.parametrize("args", [[0.5, 1.3], [0.1, 1.3]])
def test_a_list_assigned_in_one_branch_read_under_the_same_condition(name, args, tmp_path):
    """The construct the read-back of helper tapes needs, in a function of
    yours: a list assigned in one branch only, read again under a later
    ``if`` on the same condition; at top level and in a helper called in a
    loop, through ``grad`` and ``vjp``, against central differences."""
    fn = getattr(import_source(str(tmp_path), GUARDED_LIST_SRC, f"guarded_{name}"), name)
    want = central_jacobian(fn, args, ("x", "a"))
    np.testing.assert_allclose(np.array(s2s_ad.grad(fn, wrt=("x", "a"))(*args)), want,
                               rtol=1e-6, atol=1e-8)
    _, back = s2s_ad.vjp(fn, *args)
    np.testing.assert_allclose(np.array(back(1.0)), want, rtol=1e-6, atol=1e-8)
