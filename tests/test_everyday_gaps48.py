"""Forms everyday code writes that s2s-ad refused or misreported
(tests/everyday_gaps48_src.py): each gradient against central finite
differences in float64 through `s2s_ad.grad`, `s2s_ad.vjp` and `s2s_ad.jvp`,
in helpers and loops, and the `s2s-ad grad -o` file in a fresh interpreter;
what cannot be differentiated raises, located or where the code runs, as
Python does."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import s2s_ad
from s2s_ad.errors import SourceError
from tests import everyday_gaps48_src as S
from tests.test_everyday_gaps import _differences, check

ROOT = Path(__file__).resolve().parent.parent
XS = [0.7, -1.3, 0.4, 1.1]
A4 = np.array(XS)

TESTED = {"is_complex"}
"""Rules with their cases here (tests/test_numpy_rules_table.py)."""


# -- 1. a list the loop's header makes -----------------------------------------------

@pytest.mark.parametrize("f, args, wrt", [
    (S.range_tail, [0.7, 4], [0]),
    (S.range_tail, [0.7, 1], [0]),  # (no iteration)
    (S.range_between, [0.7, 1, 5], [0]),
    (S.range_between, [-0.4, -2, 2], [0]),
    (S.squares_iterated, [XS], [0]),
    (S.enumerate_tail, [0.7, 5], [0]),
    (S.pairs_backwards, [XS, 4], [0]),
    (S.tail_in_helper, [0.7, 4], [0]),
    (S.scaled_items_until, [0.7], [0]),
    (S.scaled_items_until, [0.3], [0]),
    (S.display_backwards, [0.7, -1.3], [0, 1]),
    (S.display_tail_in_loop, [0.7, -1.3, 3], [0, 1]),
    (S.display_tail_in_helper, [0.7, -1.3], [0, 1]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_loop_over_a_list_its_header_makes(f, args, wrt):
    """`for i in list(range(n))[1:]`, `for v in [t * t for t in xs]`: the
    list is made once, before the loop, as Python makes it (was refused: "a
    `for` loop must iterate over `range(...)` or over a list/tuple
    parameter")."""
    check(f, args, wrt)


# -- 2. a table of a run-time size ---------------------------------------------------

W3 = [0.5, -0.2, 0.3]


@pytest.mark.parametrize("f, args", [
    (S.table_of_products, [XS, W3[:2], 3, 2]),
    (S.table_in_helper, [XS, W3, 2]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_list_of_lists_of_a_run_time_size_refused(f, args):
    """A list of lists whose size is known only when the code runs is
    refused at the comprehension, saying the rewrite."""
    with pytest.raises(SourceError) as e:
        s2s_ad.grad(f, wrt=[0])(*args)
    text = str(e.value)
    assert "everyday_gaps48_src.py:" in text and "^" in text
    assert "rows = [[x[i] * w[j]" in text
    assert "a table of a run-time size" in text
    assert "for i in range(n) for j in range(m)]" in text  # the rewrite, spelled out


@pytest.mark.parametrize("n, m", [(3, 2), (4, 3), (2, 1)])
def test_flat_table_the_rewrite(n, m):
    """The rewrite: one comprehension of two `for` clauses (was refused:
    "comprehensions with more than one `for` are not supported"), read at
    row * m + column."""
    check(S.table_flat, [XS, W3[:m], n, m], [0, 1])


@pytest.mark.parametrize("f, args, wrt", [
    (S.pairs_below, [XS, 4], [0]),
    (S.pairs_filtered, [XS, 4], [0]),
    (S.all_products, [XS[:3]], [0]),
    (S.known_grid, [0.7], [0]),
    (S.differences_squared, [A4], [0]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_comprehensions_of_two_for_clauses(f, args, wrt):
    """Two `for` clauses are loops nested in their order, the second's range
    may read the first's variable, each `if` inside its clause's loop; over
    ranges known while lowering, unrolled."""
    check(f, args, wrt)


# -- 3. x.real, x.imag, x.conjugate() --------------------------------------------------

@pytest.mark.parametrize("f, args, wrt", [
    (S.parts_of_number, [0.7, -1.3], [0, 1]),
    (S.parts_of_array, [A4], [0]),
    (S.parts_in_loop, [XS], [0]),
    (S.parts_in_helper, [0.7, -0.3], [0, 1]),
    (S.conjugate_written, [A4], [0]),
    (S.conjugate_is_itself, [A4], [0]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_parts_of_real_values(f, args, wrt):
    """`.real` is the value, `.imag` 0 (zeros of an array), `.conjugate()`
    the value itself (NumPy returns a real array itself), `np.conj(x)` a new
    array (was: "parameter 'x' is used as a list or tuple", "the attribute
    `.real` is not supported")."""
    check(f, args, wrt)


@pytest.mark.parametrize("f, arg", [
    (S.parts_of_number, 0.7 + 0.2j),
    (S.parts_of_array, np.array([0.3 + 1j, 0.5])),
    (S.parts_of_array, np.array([0.3, 0.5], dtype=np.complex64)),
], ids=["complex", "complex128-array", "complex64-array"])
def test_parts_of_a_complex_value_raise(f, arg):
    """A complex value's real part has no complex derivative: the generated
    code raises TypeError naming the expression, never a gradient."""
    args = [arg, -1.3] if f is S.parts_of_number else [arg]
    with pytest.raises(TypeError, match=r"`x.real` \(line \d+\): `x` is complex"):
        s2s_ad.grad(f, wrt=[0])(*args)


@pytest.mark.parametrize("f, args", [
    (S.parts_of_number, [0.7, -1.3]),
    (S.parts_of_array, [np.array([0.3, -0.5, 0.8])]),
    (S.parts_in_helper, [0.7, -0.3]),
    (S.range_tail, [0.7, 4]),
    (S.leave_one_out, [A4, 1]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_second_derivatives(f, args):
    """The Hessian (the gradient of the JVP module, which reads back its own
    check that `x` is not complex) against central differences of the
    gradient."""
    h = 1e-6
    x = args[0]
    g = s2s_ad.grad(f, wrt=[0])
    hess = np.asarray(s2s_ad.hessian(f, wrt=[0])(*args), dtype=float)
    size = np.size(x)
    want = np.zeros((size, size))
    for k in range(size):
        up, down = np.array(x, dtype=float), np.array(x, dtype=float)
        up.flat[k] += h
        down.flat[k] -= h
        up = up if isinstance(x, np.ndarray) else float(up)
        down = down if isinstance(x, np.ndarray) else float(down)
        want[:, k] = (np.ravel(g(up, *args[1:])) - np.ravel(g(down, *args[1:]))) / (2 * h)
    np.testing.assert_allclose(np.reshape(hess, (size, size)), want, rtol=1e-5, atol=1e-6)


def test_parts_checked_once_per_value():
    text = s2s_ad.gradient_source(S.parts_of_number)
    assert text.count("raise TypeError") == 2  # x and y, each once


# -- 4. np.array of a comprehension of ints: an index array ---------------------------

@pytest.mark.parametrize("f, args, wrt", [
    (S.leave_one_out, [A4, 1], [0]),
    (S.leave_one_out, [A4, 3], [0]),
    (S.leave_one_out_named, [A4, 0], [0]),
    (S.neighbours, [A4, 4], [0]),
    (S.neighbours, [A4, 2], [0]),
    (S.leave_each_out, [A4], [0]),
    (S.rest_in_helper, [A4], [0]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_array_of_a_comprehension_of_ints_indexes(f, args, wrt):
    """`np.array([j for j in range(n) if j != k])` is the integer array
    NumPy makes (was: TypeError "writes a value with a derivative into an
    array of integers")."""
    check(f, args, wrt)


def test_array_of_a_comprehension_of_floats_is_stacked():
    """Items with a derivative are still stacked into a float array."""
    check(S.stacked_floats, [A4, 3], [0])


# -- 5. an index that is a float -------------------------------------------------------

@pytest.mark.parametrize("f, args", [
    (S.list_at, [XS, 1.0]),
    (S.list_at, [A4, 1.0]),
    (S.array_at, [A4, 1.0]),
    (S.array_at, [A4, np.float64(2.0)]),
    (S.built_list_at, [0.7, 1.0]),
    (S.tuple_at_in_loop, [0.7, 1.0]),
    (S.grown_list_at, [0.7, 2.0]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_float_index_raises_as_python_does(f, args):
    """Python (NumPy) raises for a float index; so does every generated
    function, in the same class, never an item picked by a truncated
    float."""
    with pytest.raises(Exception) as original:
        f(*args)
    for run in (lambda: s2s_ad.grad(f, wrt=[0])(*args),
                lambda: s2s_ad.vjp(f, *args)[1](1.0),
                lambda: s2s_ad.jvp(f, wrt=[0])(*args, **{f"d{f.__code__.co_varnames[0]}":
                                                         _ones_like(args[0])})):
        with pytest.raises(type(original.value)):
            run()


def _ones_like(v):
    return [1.0] * len(v) if isinstance(v, list) else np.ones_like(v) if \
        isinstance(v, np.ndarray) else 1.0


@pytest.mark.parametrize("f, args", [(S.built_list_at, [0.7, 1]), (S.array_at, [A4, 2]),
                                     (S.tuple_at_in_loop, [0.7, 1])],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_int_index_differentiated(f, args):
    check(f, args, [0])


# -- 6. explain shows a read folded into added_into -----------------------------------

def test_explain_shows_the_read_added_into():
    """`dx = added_into(c, x, 0, dt1)` adds the read `x[0]`'s adjoint in:
    explain's sweep and adjoints list it (they listed `y = x * y_prev`
    only)."""
    y = np.array([0.3, 0.2, -0.5, 0.8])
    text = s2s_ad.explain(S.shifted_product, wrt=[0, 1])
    assert "added_into(" in text
    assert "and dx[0] += dt1 (in added_into)" in text
    adjoints = text.split("\nadjoints (")[1]
    row = next(r for r in adjoints.split("\n") if r.strip().startswith("dx "))
    assert "sums 2 uses: y = x * y_prev (line " in row and "t1 = x[0] (line " in row
    check(S.shifted_product, [A4, y], [0, 1])


# -- 7. np.where whose discarded side is nan or infinite -----------------------------------

NEG = np.array([-1.0, -0.3, 0.3, 0.7, 1.7, 2.5])


@pytest.mark.parametrize("f, args", [
    (S.where_compared, [NEG]),
    (S.where_two_arrays, [NEG, np.array([0.5, -0.5, 0.1, 0.9, 0.2, 3.0])]),
    (S.where_inverted, [NEG]),
    (S.where_logical_not, [NEG]),
    (S.where_or, [NEG]),
    (S.where_xor, [NEG]),
    (S.where_isnan, [NEG]),
    (S.where_nested, [NEG]),
    (S.where_safe_mean, [np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), np.array([0.0, 2.0, 0.5])]),
    (S.where_guarded_operand, [NEG]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_where_keeps_the_discarded_nan_out(f, args):
    """The forms docs/numerics.md lists: where the discarded side is nan (a
    root, a log of a negative, a division by 0), the gradient is the
    function's, 0 there, in grad, vjp and jvp, and hvp holds no nan."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (NumPy's, for the discarded side)
        # (n at 0 is a jump of S / n: central differences there only for S)
        check(f, args, [0] if f is S.where_safe_mean else list(range(len(args))))
        g = s2s_ad.grad(f, wrt=list(range(len(args))))(*args)
        assert not any(np.isnan(np.asarray(x)).any() for x in (g if len(args) > 1 else [g]))
        if len(args) == 1:
            assert not np.isnan(s2s_ad.hvp(f)(args[0], np.ones_like(args[0]))).any()


# -- more of the same ---------------------------------------------------------------------

X5 = [0.7, -1.3, 0.4, 1.1, 0.9]
Y5 = [0.2, 0.5, -0.8, 1.3, 0.6]


@pytest.mark.parametrize("f, args, wrt", [
    (S.mean_square, [X5], [0]), (S.mirrored_products, [X5], [0]), (S.dot_zip, [X5, Y5], [0, 1]),
    (S.weighted_enumerate, [X5], [0]), (S.sorted_ends, [X5], [0]),
    (S.keyed_extremes, [X5], [0]), (S.any_negative, [X5], [0]), (S.any_negative, [Y5[:2]], [0]),
    (S.all_above, [X5], [0]), (S.activation, [0.7], [0]), (S.activation, [-0.7, "tanh"], [0]),
    (S.activation, [0.7, "softplus"], [0]), (S.checked_log, [0.7], [0]),
    (S.asserted_ratio, [0.7, -1.2], [0, 1]), (S.running_best, [X5], [0]),
    (S.first_above, [X5, 0.8], [0]), (S.first_above, [X5, 2.0], [0, 1]),
    (S.path_length, [X5], [0]), (S.window_mean, [X5, 1], [0]), (S.harmonic_weights, [X5], [0]),
    (S.exp_series, [0.7, 6], [0]), (S.sample_std, [X5], [0]), (S.consecutive_pairs, [X5], [0]),
    (S.argmax_by_key, [X5], [0]), (S.split_signs, [X5], [0]), (S.halves, [X5], [0]),
    (S.reduced, [0.7], [0]), (S.reduced, [0.7, "max"], [0]), (S.horner_reversed, [X5], [0]),
    (S.rounded_offset, [0.7321], [0]), (S.by_rank, [X5], [0]), (S.prefix_sums, [X5], [0]),
    (S.strided_products, [X5 + [0.3], 6], [0]), (S.partial_sums_until, [0.7], [0]),
    (S.partial_sums_until, [2.7], [0]), (S.empty_or_last, [X5], [0]), (S.typed_sum, [X5], [0]),
    (S.neighbours_both_ways, [X5], [0]), (S.log_sum_exp, [X5], [0]), (S.repeated_sum, [0.7], [0]),
    (S.binomial_poly, [0.7, 4], [0]), (S.distance_to_origin, [X5], [0]), (S.sinc, [0.7], [0]),
    (S.sinc, [0.0], [0]), (S.close_or_apart, [0.3, 0.3], [0, 1]),
    (S.close_or_apart, [0.3, 0.4], [0, 1]), (S.cyclic_products, [np.array(X5)], [0]),
    (S.std_of_list, [X5], [0]), (S.regression_loss, [[0.3, -0.2], X5, Y5], [0]),
    (S.min_max_scaled, [X5], [0]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_everyday_functions(f, args, wrt):
    """Numerical Python as people write it: comprehensions, range arithmetic,
    enumerate/zip, sorted, min/max with keys, any/all, string switches, math
    functions, f-strings in checks, assert, isinstance, early returns. Those
    refused before: exp_series and binomial_poly (math.factorial, math.comb:
    functions of ints), rounded_offset (round(x, ndigits)), sinc and
    close_or_apart (math.isclose), repeated_sum (sum([x] * 3)), std_of_list
    through vjp (np.array of a list parameter of a known length)."""
    check(f, args, wrt)


@pytest.mark.parametrize("f, args, message", [
    (S.position_of_largest, [X5], r"`xs.index`: `xs` is a list; s2s-ad reads its items"),
    (S.table_of_functions, [0.7], r"`math.tanh` is a function, used here as a value"),
    (S.exp_series, [0.7, 2.5], None),
], ids=lambda v: getattr(v, "__name__", ""))
def test_everyday_refusals_say_why(f, args, message):
    """A list method s2s-ad does not read, a function kept in a dict: refused
    at the code, saying what and the rewrite (were: "`xs` is a local value",
    "`math.tanh` is not a number"); math.factorial of a float raises
    TypeError where the code runs, as Python's."""
    if message is None:
        with pytest.raises(TypeError):
            f(*args)
        with pytest.raises(TypeError):
            s2s_ad.grad(f, wrt=[0])(*args)
        return
    with pytest.raises(SourceError, match=message) as e:
        s2s_ad.grad(f, wrt=[0])(*args)
    assert "everyday_gaps48_src.py:" in str(e.value) and "^" in str(e.value)


def test_message_inside_a_comprehension_quotes_the_code():
    """A refusal inside a comprehension over a run-time range points at the
    call and quotes it (the loop the comprehension stands for put the whole
    comprehension's text in place of each name it quoted)."""
    with pytest.raises(SourceError) as e:
        s2s_ad.grad(S.unknown_in_comprehension, wrt=[0])(0.7, 3)
    text = str(e.value)
    assert "`math.nextafter` has no derivative rule" in text
    assert text.splitlines()[0].split(":")[2] == "19" or "nextafter" in text.splitlines()[0]
    caret = text.splitlines()[-1]
    assert text.splitlines()[-2][len(caret) - 1:].startswith("math.nextafter(")


# -- the CLI's file, in a fresh interpreter ---------------------------------------------

CLI = [  # function, options, points, wrt
    ("range_tail", ["--wrt", "x"], [[0.7, 4], [-0.3, 6]], (0,)),
    ("squares_iterated", [], [[XS], [[0.2, 0.9]]], (0,)),
    ("table_flat", ["--wrt", "x,w"], [[XS, W3[:2], 3, 2]], (0, 1)),
    ("parts_of_number", [], [[0.7, -1.3]], (0, 1)),
    ("parts_of_array", ["--array", "x"], [[A4]], (0,)),
    ("leave_one_out", ["--array", "x", "--wrt", "x"], [[A4, 1], [A4, 3]], (0,)),
    ("neighbours", ["--array", "x", "--wrt", "x"], [[A4, 4]], (0,)),
]


def test_cli_files_in_a_fresh_interpreter(tmp_path):
    """`s2s-ad grad -o` of each function, imported by a Python without
    s2s-ad: its gradients against central differences; a complex argument
    and a float index raise there as they do here."""
    script = []
    for name, options, _, _ in CLI:
        out = tmp_path / f"grad_{name}.py"
        done = subprocess.run(
            [sys.executable, "-m", "s2s_ad", "grad", f"{ROOT / 'tests' / 'everyday_gaps48_src.py'}"
             f":{name}", *options, "-o", str(out)],
            capture_output=True, text=True, cwd=ROOT, timeout=600,
            env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 0, (name, done.stderr)
        k = len(script)
        script.append(f"import grad_{name}\nout.append([grad_{name}.grad_{name}(*p) "
                      f"for p in given[{k}]])")
    script.append("import grad_parts_of_number\ntry:\n"
                  "    grad_parts_of_number.grad_parts_of_number(0.7 + 1j, 0.2)\n"
                  "except TypeError as e:\n    out.append(str(e))\n")
    (tmp_path / "given.pkl").write_bytes(pickle.dumps([c[2] for c in CLI]))
    code = ("import pickle, sys\ngiven = pickle.load(open('given.pkl', 'rb'))\nout = []\n"
            + "\n".join(script) + "\nassert 's2s_ad' not in sys.modules\n"
            "sys.stdout.write(pickle.dumps(out).hex())")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, env={"PATH": os.environ.get("PATH", "")}, timeout=300)
    assert run.returncode == 0, run.stderr
    results = pickle.loads(bytes.fromhex(run.stdout.strip()))
    for (name, _, points, wrt), got in zip(CLI, results):
        f = getattr(S, name)
        for p, g in zip(points, got):
            g = g if len(wrt) > 1 else (g,)
            for k, i in enumerate(wrt):
                np.testing.assert_allclose(np.ravel(np.asarray(g[k], dtype=float)),
                                           _differences(f, p, i), rtol=1e-6, atol=1e-8,
                                           err_msg=name)
    assert "`x.real` (line" in results[-1] and "is complex" in results[-1]
