"""Lists of a run-time length made by `[c] * n` and written by index
(tests/list_writes_src.py): `ys[k] = v` and `ys[k] += v` in loops, branches,
`while` loops, helpers and helpers of helpers, read after the writes, summed,
iterated over, passed to helpers and returned by them.

Every gradient is compared with central differences of the original function
in float64, at several lengths, through `grad`, `vjp`, `jvp` and the command
line's `grad -o` file run in a fresh interpreter; second derivatives (`hessian`,
`grad(grad(f))`, the gradient module read back from its file) against central
differences of the first gradient; the constructs left out are refused,
located."""

import os
import subprocess
import sys

import numpy as np
import pytest

import list_writes_src as src
import s2s_ad
from examples import horner
from s2s_ad.higher import HigherOrderError
from tests.array_oracle import fd_gradient
from tests.modules import import_source, run_generated
from tests.soak import beyond

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = "tests/list_writes_src.py"

LISTS = ["prefix", "shifted", "overwritten", "branch_writes", "while_writes",
         "iterated_while_written", "summed_between_writes", "written_until_break",
         "passed_then_written", "in_helper", "helper_of_helper", "in_loop", "in_branch"]
"""f(xs, a): xs a list of floats of any length."""
COUNTS = ["repeated_number", "zeros_written", "grown_then_written", "static_written_in_loop"]
"""f(x, n): n an int, the lists' length."""
XS = [0.3, -0.5, 0.8, 1.1, -0.2]


def _points():
    for n in (1, 2, 5):
        for a in (0.7, -0.6):
            yield XS[:n], a


def _fd(f, xs, a, h=1e-6):
    """(∂f/∂xs as a list, ∂f/∂a) by central differences."""
    dxs = []
    for i in range(len(xs)):
        up, down = list(xs), list(xs)
        up[i] += h
        down[i] -= h
        dxs.append((f(up, a) - f(down, a)) / (2 * h))
    return dxs, (f(xs, a + h) - f(xs, a - h)) / (2 * h)


def _close(got, want):
    np.testing.assert_allclose(np.array(list(got[0]) + [got[1]], dtype=float),
                               np.array(list(want[0]) + [want[1]], dtype=float),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", LISTS)
def test_grad_and_vjp(name):
    f = getattr(src, name)
    g = s2s_ad.grad(f, wrt=("xs", "a"))
    for xs, a in _points():
        want = _fd(f, xs, a)
        got = g(xs, a)
        assert isinstance(got[0], list) and len(got[0]) == len(xs)
        _close(got, want)
        value, back = s2s_ad.vjp(f, xs, a)
        assert value == pytest.approx(f(xs, a), rel=1e-12)
        dxs, da = back(1.0)
        _close((dxs, da), want)


@pytest.mark.parametrize("name", LISTS)
def test_jvp(name):
    f = getattr(src, name)
    j = s2s_ad.jvp(f)
    rng = np.random.default_rng(7)
    for xs, a in _points():
        v = list(rng.normal(size=len(xs)))
        w = float(rng.normal())
        value, tangent = j(xs, a, dxs=v, da=w)
        dxs, da = _fd(f, xs, a)
        assert value == pytest.approx(f(xs, a), rel=1e-12)
        assert tangent == pytest.approx(float(np.dot(dxs, v)) + da * w, rel=1e-5, abs=1e-6)


def _cli(*argv):
    run = subprocess.run([sys.executable, "-m", "s2s_ad", *argv], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return run


@pytest.mark.parametrize("name", beyond(["prefix", "overwritten", "passed_then_written",
                                         "branch_writes", "while_writes"], 1))
def test_cli_file_in_a_fresh_interpreter(name, tmp_path):
    """One `grad -o` file serves every length: run without s2s-ad (six fresh
    interpreters a case: prefix in the default run, all five with ``--soak``;
    each is checked in-process at every length in test_grad_and_vjp)."""
    f = getattr(src, name)
    out = tmp_path / f"lw_{name}.py"
    _cli("grad", f"{SRC}:{name}", "-o", str(out))
    text = out.read_text(encoding="utf-8")
    assert "len(xs) !=" not in text  # no length in the code
    for xs, a in _points():
        dxs, da = run_generated(tmp_path, f"lw_{name}", f"grad_{name}", [xs, a])
        _close((list(dxs), float(da)), _fd(f, xs, a))


@pytest.mark.parametrize("name", COUNTS)
def test_lists_of_an_int_length(name):
    f = getattr(src, name)
    g = s2s_ad.grad(f, wrt="x")
    j = s2s_ad.jvp(f, wrt="x")
    hess = s2s_ad.hessian(f, wrt="x")
    h = 1e-6
    for n in (1, 2, 6):
        for x in (0.6, -0.45):
            want = (f(x + h, n) - f(x - h, n)) / (2 * h)
            assert g(x, n) == pytest.approx(want, rel=1e-5, abs=1e-6)
            assert j(x, n, dx=1.0)[1] == pytest.approx(want, rel=1e-5, abs=1e-6)
            # the JVP module read back (its zero tangent list `[0.0] * len(ys)`)
            second = (g(x + 1e-5, n) - g(x - 1e-5, n)) / 2e-5
            assert hess(x, n) == pytest.approx(second, rel=1e-4, abs=1e-5)


def test_the_generated_code_writes_in_place_and_tapes_reads():
    """`ys[i] = v` stays a write into one list; an item read and then
    overwritten is taped at the read, never read again from the list."""
    text = s2s_ad.gradient_source(src.overwritten, wrt=("xs", "a"))
    assert "ys = [a] * n" in text
    assert "t_tape.append(t)" in text or "t_tape[" in text
    assert "dys[i] = 0.0" in text.replace("i_1", "i")


# --- second derivatives ------------------------------------------------------

def _first_gradient_fd(g, xs, a, k, h=1e-5):
    """Central differences of item k of g(xs, a) = (dxs, da) (k = len(xs): da)."""
    def item(xs, a):
        dxs, da = g(xs, a)
        return da if k == len(xs) else dxs[k]
    return _fd(item, xs, a, h)


@pytest.mark.parametrize("name", ["prefix", "overwritten", "branch_writes", "in_helper",
                                  "written_until_break"])
def test_grad_of_grad_and_hessian(name):
    f = getattr(src, name)
    g = s2s_ad.grad(f, wrt=("xs", "a"))
    xs, a = XS[:4], 0.7
    want = _first_gradient_fd(g, xs, a, len(xs))  # ∂(∂f/∂a)/∂(xs, a)
    _close(s2s_ad.grad(g, wrt=("xs", "a"), output=1)(xs, a), want)
    assert s2s_ad.hessian(f, wrt="a")(xs, a) == pytest.approx(want[1], rel=1e-4, abs=1e-6)
    v = [0.3, -0.2, 0.5, 0.1]
    assert s2s_ad.hvp(f, wrt=("xs", "a"))(xs, a, (v, 1.0))[1] == pytest.approx(
        float(np.dot(want[0], v)) + want[1], rel=1e-4, abs=1e-6)


def test_horner_grad_of_grad_hessian_and_hvp():
    g = s2s_ad.grad(horner.horner, wrt=("c", "x"))
    c, x = [0.3, -1.2, 0.7, 2.0], 0.8
    want = _first_gradient_fd(lambda c, x: g(c, x), c, x, len(c))
    _close(s2s_ad.grad(g, wrt=("c", "x"), output=1)(c, x), want)
    assert s2s_ad.hessian(horner.horner, wrt="x")(c, x) == pytest.approx(want[1], rel=1e-5)
    assert s2s_ad.hvp(horner.horner, wrt="x")(c, x, 1.0) == pytest.approx(want[1], rel=1e-5)


def test_choosing_a_list_output_is_refused_located(tmp_path):
    """Differentiating the list a gradient module returns (`return dc, dx`,
    output 0) is refused: the gradient is of a number."""
    g = s2s_ad.grad(horner.horner, wrt=("c", "x"))
    with pytest.raises(HigherOrderError, match="is not a number"):
        s2s_ad.grad(g, wrt=("c", "x"), output=0)([0.3, -1.2], 0.8)
    text = s2s_ad.gradient_source(horner.horner, wrt=("c", "x"))
    read = import_source(str(tmp_path), text, "lw_listout").grad_horner
    with pytest.raises(s2s_ad.SourceError, match="a list of any length, which has no gradient") \
            as err:
        s2s_ad.grad(read, wrt=("c", "x"), output=0)([0.3, -1.2], 0.8)
    assert "lw_listout.py:" in str(err.value) and "^" in str(err.value)


READ_BACK = '''
import {module}


def second(c, x):
    return {module}.grad_horner(c, x)[1]


def items(c, x):
    dc = {module}.grad_horner(c, x)[0]
    t = 0.0
    for i in range(len(dc)):
        t = t + dc[i] * dc[i]
    return t * x + sum(dc) + dc[-1]


def both(c, x):
    dc, dx = {module}.grad_horner(c, x)
    again = {module}.grad_horner(c, x * 0.5)[0]
    return dc[0] * dx + again[-1] * sum(dc)
'''


HORNER_FILE: dict = {}
"""The folder holding rb_horner.py, the CLI's gradient file of horner, written
once for the three callers below (the same command line each time before),
and whether its second gradient's file has been run in a fresh interpreter
yet (once: the same command lines and numbers for every caller)."""


@pytest.mark.parametrize("caller", ["second", "items", "both"])
def test_horner_gradient_file_read_back(caller, tmp_path_factory):
    """The run-time-length gradient module of horner (`dc = [0.0] * len(c)`,
    `dc[k] = ds` in a reversed loop, `return dc, dx`), written by the CLI and
    called from another module: differentiated again, against central
    differences of the file's gradient; the second gradient's own file run
    in a fresh interpreter."""
    if "folder" not in HORNER_FILE:
        folder = tmp_path_factory.mktemp("rb_horner")
        _cli("grad", "examples/horner.py:horner", "--wrt", "c,x", "-o",
             str(folder / "rb_horner.py"))
        HORNER_FILE["folder"] = folder
    tmp_path = HORNER_FILE["folder"]
    first = tmp_path / "rb_horner.py"
    assert "[0.0] * len(c)" in first.read_text(encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        caller_mod = import_source(str(tmp_path), READ_BACK.format(module="rb_horner"),
                                   f"rb_{caller}")
        fn = getattr(caller_mod, caller)
        g = s2s_ad.grad(fn, wrt=("c", "x"))
        for n in (1, 3, 6):
            c, x = [0.3, -1.2, 0.7, 2.0, -0.4, 1.5][:n], 0.8
            _close(g(c, x), _fd(fn, c, x))
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("rb_horner", None)
    if HORNER_FILE.get("second_run"):
        return
    second = tmp_path / "rb_second.py"
    _cli("grad", f"{first}:grad_horner", "--wrt", "c,x", "--output", "1", "-o", str(second))
    mod = import_source(str(tmp_path), first.read_text(encoding="utf-8"), "rb_first")
    c, x = [0.3, -1.2, 0.7, 2.0], 0.8
    dc, dx = run_generated(tmp_path, "rb_second", "grad_grad_horner", [c, x])
    _close((list(dc), float(dx)), _first_gradient_fd(mod.grad_horner, c, x, len(c)))
    HORNER_FILE["second_run"] = True


def test_list_example_gradient_file_read_back(tmp_path):
    """The same for a function writing `ys[i] = ...` itself: its gradient
    module (the list and its adjoint written by index) differentiated again."""
    first = tmp_path / "rb_prefix.py"
    _cli("grad", f"{SRC}:prefix", "-o", str(first))
    mod = import_source(str(tmp_path), first.read_text(encoding="utf-8"), "rb_prefix_mod")
    xs, a = XS[:4], 0.7
    got = s2s_ad.grad(mod.grad_prefix, wrt=("xs", "a"), output=1)(xs, a)
    _close(got, _first_gradient_fd(mod.grad_prefix, xs, a, len(xs)))


# --- refused, located ---------------------------------------------------------

@pytest.mark.parametrize("name, message", [
    ("aliased", "`zs` and `ys` hold the same list"),
    ("into_parameter", "changes the argument `xs` in place"),
    ("into_returned", "a list of any length a helper returned"),
    ("into_callers", "changes the argument `ys` in place"),
    ("slice_written", "writing a slice of `ys`"),
    ("list_repeated", "repeats a number"),
    ("float_index", "cannot differentiate with respect to `a`: it is used as an integer"),
])
def test_refused_with_a_location(name, message):
    with pytest.raises(s2s_ad.SourceError, match=message) as err:
        s2s_ad.grad(getattr(src, name), wrt="a")([0.1, 0.2, 0.3], 0.5)
    text = str(err.value)
    assert "list_writes_src.py:" in text and "^" in text, text


def test_a_list_made_inside_a_loop():
    """`ys = [0.0] * len(xs)` in the loop body: a list per run of the body
    (tests/test_fill_in_loops.py has the rest)."""
    f = src.made_in_loop
    for xs, a in _points():
        assert s2s_ad.grad(f, wrt="a")(xs, a) == pytest.approx(_fd(f, xs, a)[1], rel=1e-6)


def test_numpy_code():
    """`[0.0] * n` in NumPy code, its items numbers written by index (arrays
    too: tests/test_list_items_numpy.py)."""
    x = np.array([0.1, 0.2])
    got = s2s_ad.grad(src.in_numpy, wrt="x")(x, 3)
    np.testing.assert_allclose(got, fd_gradient(src.in_numpy, [x, 3], 0), rtol=1e-7)


def test_checkpointed_loop_writing_a_list_refused_located():
    with pytest.raises(s2s_ad.SourceError, match="writes into a list by index") as err:
        s2s_ad.grad(src.prefix, wrt="a", checkpoint=4)([0.1, 0.2, 0.3], 0.5)
    assert "list_writes_src.py:" in str(err.value)
