"""Values the function's own code makes 0-d (s2s_ad/reverse/ranks.py): their
adjoints are taken without shape bookkeeping. Gradients against central
differences in every position (top level, helpers, branches, loops, vjp, the
CLI's file in a fresh interpreter), and what the generated module contains."""

import ast
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import numpy_inplace_src
import numpy_ranks_src as src
import s2s_ad
from array_oracle import assert_gradients, fd_gradient, on_arrays, rand
from s2s_ad import pipeline
from s2s_ad.reverse.ranks import zero_d

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RNG = np.random.default_rng(41)

CASES = [
    (src.fill, lambda: [rand(RNG, (6,)), 0.8], [0, 1]),
    (src.fill_in_helper, lambda: [rand(RNG, (5,)), 0.7], [0, 1]),
    (src.fill_in_helper_of_helper, lambda: [rand(RNG, (5,)), 0.6], [0, 1]),
    (src.fill_in_branch, lambda: [rand(RNG, (5,)), 0.7], [0, 1]),
    (src.fill_in_branch, lambda: [rand(RNG, (5,)), -0.7], [0, 1]),
    (src.fill_in_loop, lambda: [rand(RNG, (4,)), 0.9, 3], [0, 1]),
    (src.helper_in_loop, lambda: [rand(RNG, (4,)), 0.9, 3], [0, 1]),
    (src.while_fill, lambda: [rand(RNG, (6,)), 3.0], [0]),
    (src.while_fill, lambda: [rand(RNG, (6,)), 100.0], [0]),
    (src.grid, lambda: [rand(RNG, (4,)), 0.5], [0, 1]),
    (src.rows, lambda: [rand(RNG, (3, 3)), rand(RNG, (3,)), 0.5], [0, 1, 2]),
    (src.rows, lambda: [rand(RNG, (3,)), rand(RNG, (3,)), 0.5], [0, 1, 2]),
    (src.rotation, lambda: [0.3, rand(RNG, (3,))], [0, 1]),
    (src.rotation, lambda: [np.float64(-1.1), rand(RNG, (3, 2))], [0, 1]),
    (src.rotation_after_return, lambda: [0.3, rand(RNG, (3,))], [0, 1]),
    (src.rotations_in_a_loop, lambda: [rand(RNG, (3,)), rand(RNG, (3,))], [0, 1]),
    (src.rotation_after_return, lambda: [0.3, np.zeros(3)], [0, 1]),
    (src.defined_before_loop, lambda: [np.array(0.4), rand(RNG, (4,)), 0.5], [0, 1, 2]),
    (src.defined_before_loop, lambda: [np.array(0.4), np.zeros(0), 0.5], [0, 2]),
    (src.written_in_branch, lambda: [rand(RNG, (3,)), rand(RNG, (3,)), -0.5], [0, 1, 2]),
    (src.written_in_branch, lambda: [np.array(0.7), rand(RNG, (3,)), 0.5], [0, 1, 2]),
    (src.scalar_result, lambda: [rand(RNG, (5,))], [0]),
    (src.masked_where, lambda: [rand(RNG, (2, 4)), rand(RNG, (4,)), -0.8], [0, 1, 2]),
    (src.element_result, lambda: [rand(RNG, (4,)), 0.9], [0, 1]),
]


@pytest.mark.parametrize("fn, args, wrt", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_gradient_agrees_with_finite_differences(fn, args, wrt):
    assert_gradients(fn, args(), wrt)


@pytest.mark.parametrize("fn, args, wrt", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_vjp_agrees_with_finite_differences(fn, args, wrt):
    values = args()
    out, vjp_fn = s2s_ad.vjp(fn, *values)
    np.testing.assert_allclose(out, fn(*values), rtol=1e-12)
    got = vjp_fn(1.0)
    for i in wrt:
        assert np.shape(got[i]) == np.shape(values[i])
        np.testing.assert_allclose(np.asarray(got[i], dtype=float), fd_gradient(fn, values, i),
                                   rtol=1e-5, atol=1e-7)


def _values(fn) -> dict[str, bool]:
    """name -> is it known 0-d, for every value of ``fn``'s IR."""
    func = pipeline.lower(fn)
    zero, _ = zero_d(func)
    from s2s_ad import ir
    out = {p.value.name: id(p.value) in zero for p in func.params}
    for node in ir.walk(func.body):
        for v in ir.defined(node):
            out[v.name] = id(v) in zero
        for c in getattr(node, "carried", []):
            out[c.name] = id(c) in zero
    return out


def test_what_the_analysis_marks_0d():
    fill = _values(src.fill)
    # y[i - 1] (t5), y[i - 1] * a (t6), x[i] (t7: read from a parameter of
    # unknown rank, but added to a 0-d value and written into one element),
    # the written sum (t8); never the arrays
    assert all(fill[n] for n in ("t5", "t6", "t7", "t8", "out"))
    assert not any(fill[n] for n in ("x", "y", "y_1", "y_2", "y_3", "t9"))
    rows = _values(src.rows)  # H[i] = W[i] * a + x[i]: a row of H, not an element
    assert not any(rows[n] for n in ("t5", "t6", "t7", "t8"))
    before = _values(src.defined_before_loop)
    assert not before["t"]  # defined before the loop: 0-d only where the loop runs
    assert not _values(src.written_in_branch)["t"]  # 0-d only where the branch runs
    rotation = _values(src.rotation)  # np.eye(3)[1, 1] and what is written into it
    assert all(rotation[n] for n in ("t1", "t2", "t3", "t4", "t5"))
    assert not rotation["t6"]  # R @ v: v's rank is the caller's
    masked = _values(src.masked_where)  # w > 0: an array of bools, so np.where(...) too
    assert masked["t5"]  # np.square(s)
    assert not any(masked[n] for n in ("t1", "t2", "t3", "t4", "t6", "t7", "t8"))
    grid = _values(src.grid)
    assert grid["n"] and not grid["t1"]  # x.shape[0], not x.shape


def _text(fn, **kw) -> str:
    """The gradient module, its loops read on the arrays: a loop run on lists
    of their elements (s2s_ad/reverse/element_lists.py, tests/test_element_lists.py)
    with each list's name replaced by its array's and the lists' statements gone."""
    return on_arrays(s2s_ad.gradient_source(fn, **kw))


def _reverse_loop(text: str) -> str:
    """The body of the first reverse loop of the gradient function."""
    lines = text.splitlines()
    start = next(k for k, line in enumerate(lines) if "in reversed(range(" in line)
    indent = len(lines[start]) - len(lines[start].lstrip())
    body = []
    for line in lines[start + 1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line)
    return "\n".join(body)


def test_fill_loop_has_no_shape_bookkeeping():
    text = _text(src.fill)
    for helper in ("unbroadcast", "total", "own", "add_over", "spread"):
        assert f"{helper}(" not in text, helper
    assert re.search(r"dy = dy \+ dout \* y\s", text)  # np.sum(y * y): dout broadcasts by itself
    loop = _reverse_loop(text)
    recomputed = [line.split("#")[0].strip() for line in loop.splitlines()
                  if "recomputed" in line or "read again" in line]
    # the index and y[i - 1] (read again from y), not y[i - 1] * a + x[i] for its shape
    assert recomputed == ["t4 = i - 1", "t5 = y[t4]"]
    assert re.search(r"^\s+d\w+ = dy\[i\]\s", loop, re.M)  # the element's adjoint, as it is
    # nothing is taped: x[i] was kept only for its shape, y[i - 1] is read again
    assert "records 0 values per iteration" in " ".join(text.split())


ELEMENT_BOOKKEEPING = re.compile(r"(unbroadcast|total|own)\((own\()?(gather\(|d\w+\[)|own\(\w+\[")
"""An element's adjoint, or an element kept, passed through a helper for its shape."""


@pytest.mark.parametrize("fn", [src.fill, src.fill_in_helper, src.fill_in_helper_of_helper,
                                src.fill_in_branch, src.fill_in_loop, src.helper_in_loop,
                                src.while_fill, src.grid, src.rotation, src.element_result,
                                src.rotation_after_return])
def test_element_adjoints_are_taken_as_they_are(fn):
    text = _text(fn)
    assert not ELEMENT_BOOKKEEPING.search(text), ELEMENT_BOOKKEEPING.search(text).group(0)
    assert "gather(" in text or re.search(r"= d\w+\[[^\]]+\]\s", text)


def test_rotation_is_written_in_place():
    """np.eye(3) makes a new array: its writes and their adjoints are in place."""
    text = _text(src.rotation)
    assert not re.search(r"\b(assign|zeroed|scatter|gather)\(", text)
    assert re.search(r"dt1 = dR\[1, 1\]\s", text)


def test_elements_written_into_copies_are_gathered_as_they_are():
    """An array made after an early return keeps a copy per write; an
    element's adjoint is gathered, not un-broadcast."""
    text = _text(src.rotation_after_return)
    assert "assign(" in text and re.search(r"dt\d+ = gather\(", text)
    assert "unbroadcast(gather" not in text and "total(gather" not in text


def test_scalar_result_keeps_its_seed():
    assert "ones_like" not in _text(src.scalar_result)
    assert "ones_like" not in _text(src.element_result)


def test_rows_still_unbroadcast():
    """A row write's value may broadcast: it keeps its sum back to shape."""
    text = _text(src.rows)
    assert "unbroadcast(" in text or "total(" in text


def _defined_and_called(text: str) -> tuple[set[str], set[str]]:
    tree = ast.parse(text)
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    called = set()
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        for n in ast.walk(fn):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id != fn.name:
                called.add(n.func.id)
    return defined, called


CORPUS = [getattr(src, n) for n in dir(src) if not n.startswith("_")
          and callable(getattr(src, n)) and n != "np"] + \
         [getattr(numpy_inplace_src, n) for n in ("fill", "rnn_rows", "while_fill", "saved_fill",
                                                   "nested_rows", "calls_filler")]


@pytest.mark.parametrize("fn", CORPUS, ids=lambda f: f.__name__)
def test_module_defines_only_the_helpers_it_calls(fn):
    text = s2s_ad.gradient_source(fn)
    defined, called = _defined_and_called(text)
    entry = {f"grad_{fn.__name__}"}
    assert defined - entry <= called, sorted(defined - entry - called)


def test_gradbench_modules_define_only_the_helpers_they_call():
    from gradbench import ba, ht, ode
    for fn, wrt, arrays in [(ht.hand_objective, 0, ()),
                            (ba.compute_reproj_err, (0, 1, 2), ("cam", "X", "feat")),
                            (ode.ode_last, 0, ("x",))]:
        text = s2s_ad.gradient_source(fn, wrt=wrt, arrays=arrays)
        defined, called = _defined_and_called(text)
        entry = {f"grad_{fn.__name__}"}
        assert defined - entry <= called, (fn.__name__, sorted(defined - entry - called))


def test_cli_file_imports_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "grad_fill.py"
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "tests/numpy_ranks_src.py:fill",
                        "--wrt", "x,a", "--array", "x", "-o", str(out)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "unbroadcast(" not in out.read_text()
    x = [0.3, -0.2, 0.5, 0.1, -0.4]
    code = ("import grad_fill, sys, numpy as np; "
            f"dx, da = grad_fill.grad_fill(np.array({x!r}), 0.8); "
            "assert 's2s_ad' not in sys.modules; print(repr((dx.tolist(), float(da))))")
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                       text=True, env={"PATH": os.environ.get("PATH", "")})
    assert p.returncode == 0, p.stderr
    dx, da = eval(p.stdout)
    args = [np.array(x), 0.8]
    np.testing.assert_allclose(dx, fd_gradient(src.fill, args, 0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(da, fd_gradient(src.fill, args, 1), rtol=1e-6, atol=1e-9)


# -- the zero a write's reverse leaves in the adjoint (s2s_ad/reverse/fresh_writes.py) ------

ZEROED = [src.written_before_the_loop, src.overwritten_by_a_second_loop, src.copied_root,
          src.read_same_element, src.wraps_to_the_end, src.read_ahead,
          src.whole_read_in_the_loop, src.fill_in_loop, src.interleaved_overwritten,
          src.interleaved_read_ahead]
"""Functions where an op before the loop's write may read or write its
element: the write's reverse zeroes the element's adjoint. In the first three
the gradient is wrong without the zero (an earlier write, or the copy that
made the array, reads it back); the others keep it because the analysis
cannot tell."""

NOT_ZEROED = [src.fill, src.read_after_in_the_body, src.fill_in_branch, src.interleaved]


@pytest.mark.parametrize("fn", ZEROED + NOT_ZEROED, ids=lambda f: f.__name__)
def test_writes_in_loops_agree_with_finite_differences(fn):
    args = [rand(RNG, (5,)), 0.7] + ([2] if fn is src.fill_in_loop else [])
    assert_gradients(fn, args, [0, 1])
    out, vjp_fn = s2s_ad.vjp(fn, *args)
    got = vjp_fn(1.0)
    np.testing.assert_allclose(got[0], fd_gradient(fn, args, 0), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("fn", ZEROED, ids=lambda f: f.__name__)
def test_write_zeroes_what_an_earlier_op_reads(fn):
    loop = _reverse_loop(_text(fn))
    assert re.search(r"^\s+dy\[i(_\d+)?\] = 0\.0\s", loop, re.M), loop


@pytest.mark.parametrize("fn", NOT_ZEROED, ids=lambda f: f.__name__)
def test_write_of_a_fresh_element_does_not_zero(fn):
    loop = _reverse_loop(_text(fn))
    assert "dy[i]" in loop and not re.search(r"dy\[i\] = 0\.0", loop), loop


def test_two_writes_of_a_loop_stepping_by_two_do_not_zero():
    loop = _reverse_loop(_text(src.interleaved))
    assert "dy[" in loop and "= 0.0" not in loop, loop


def test_rows_written_once_leave_no_zero():
    """Rows of a matrix written once each in a loop stepping by 2: their
    adjoints' rows are not zeroed, and the gradient agrees with finite
    differences, through grad and vjp."""
    loop = _reverse_loop(_text(src.interleaved_rows))
    assert "dy[" in loop and "= 0.0" not in loop, loop
    args = [rand(RNG, (6, 3)), 0.7]
    assert_gradients(src.interleaved_rows, args, [0, 1])
    _, pull = s2s_ad.vjp(src.interleaved_rows, *args)
    np.testing.assert_allclose(pull(1.0)[0], fd_gradient(src.interleaved_rows, args, 0),
                               rtol=1e-5, atol=1e-7)


# -- reads taken again from the array (s2s_ad/reverse/fresh_writes.py: settled) -------

TAPED = [src.overwritten_after_the_loop, src.written_back_in_the_loop, src.wraps_to_the_end,
         src.read_same_element, src.fill_in_loop]
"""A later write may change the element read: the read is taped."""

REREAD = [src.fill, src.two_back, src.read_after_in_the_body]


@pytest.mark.parametrize("fn", TAPED + REREAD, ids=lambda f: f.__name__)
def test_reads_in_loops_agree_with_finite_differences(fn):
    args = [rand(RNG, (6,)), 0.7] + ([2] if fn is src.fill_in_loop else [])
    assert_gradients(fn, args, [0, 1])


@pytest.mark.parametrize("fn", TAPED, ids=lambda f: f.__name__)
def test_read_a_later_write_changes_is_taped(fn):
    text = _text(fn)
    assert "from the tape" in text and "read again" not in text


@pytest.mark.parametrize("fn", REREAD, ids=lambda f: f.__name__)
def test_read_no_later_write_changes_is_read_again(fn):
    text = _text(fn)
    assert re.search(r"= y\[t\d+\]\s+# line \d+: read again from y", text)
