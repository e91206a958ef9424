"""Argument kinds flow from the call site (tests/kinds_src.py, issue 17 item 3).

A helper that never names NumPy is lowered as NumPy code when it is passed an
array, as scalar code when it is passed numbers, and as both (two pairs) when
it is called both ways; a top-level function that never names NumPy gets the
code for the arrays it is called with. Every gradient is compared with
central finite differences of the original function in float64
(tests/array_oracle.py)."""

import ast
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import kinds_src as src
import s2s_ad
from array_oracle import assert_gradients, fd_gradient, rand
from modules import run_generated

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RNG = np.random.default_rng(17)
X = np.array([1.0, 2.0, 3.0])

CASES = [
    # (function, arguments, wrt)
    (src.f_scale, [X, 2.0], [0, 1]),                       # the reproducer: ds = 6, not [1, 2, 3]
    (src.f_scale, [rand(RNG, (3,)), rand(RNG, (3,))], [0, 1]),
    (src.f_scale, [rand(RNG, (2, 3)), rand(RNG, (3,))], [0, 1]),
    (src.f_scale, [rand(RNG, (2, 3)), rand(RNG, (2, 1))], [0, 1]),
    (src.f_nested, [X, 2.0], [0, 1]),
    (src.f_nested, [rand(RNG, (4,)), rand(RNG, (4,))], [0, 1]),
    (src.f_both, [rand(RNG, (3,)), 0.7], [0, 1]),
    (src.f_default, [rand(RNG, (3,)), rand(RNG, (3,))], [0, 1]),
    (src.f_rosen_terms, [rand(RNG, (5,))], [0]),
    (src.rosenbrock_no_numpy, [np.array([0.3, 1.2, 0.5, -0.7])], [0]),
    (src.calls_rosenbrock, [rand(RNG, (4,)), 1.3], [0, 1]),
]


def _id(v):
    return getattr(v, "__name__", "")


@pytest.mark.parametrize("fn, args, wrt", CASES, ids=_id)
def test_grad_agrees_with_finite_differences(fn, args, wrt):
    assert_gradients(fn, args, wrt)


def test_the_reproducer_gives_the_sum_not_the_array():
    dx, ds = s2s_ad.grad(src.f_scale, wrt=None)(X, 2.0)
    assert np.shape(ds) == ()
    assert ds == pytest.approx(fd_gradient(src.f_scale, [X, 2.0], 1)) and ds == pytest.approx(6.0)
    np.testing.assert_allclose(dx, fd_gradient(src.f_scale, [X, 2.0], 0), rtol=1e-6)


@pytest.mark.parametrize("fn, args, wrt", CASES, ids=_id)
def test_vjp_agrees_with_finite_differences(fn, args, wrt):
    value, pull = s2s_ad.vjp(fn, *args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    got = pull(-0.6)
    for i in wrt:
        assert np.shape(got[i]) == np.shape(args[i])
        np.testing.assert_allclose(got[i], -0.6 * fd_gradient(fn, args, i), rtol=1e-5,
                                   atol=1e-7)


def test_vjp_of_an_array_result_of_a_function_without_numpy():
    # x * s + s with x an array: the cotangent is an array, and s's cotangent
    # is its sum against x + 1 (it was the array itself before)
    x, ct = rand(RNG, (3,)), rand(RNG, (3,))
    value, pull = s2s_ad.vjp(src.elementwise, x, 0.4)
    np.testing.assert_allclose(value, src.elementwise(x, 0.4))
    dx, ds = pull(ct)

    def along(i):
        # d/dargs of <ct, f(args)>: finite differences of a scalar function
        return fd_gradient(lambda a, b: float(np.sum(ct * src.elementwise(a, b))), [x, 0.4], i)

    np.testing.assert_allclose(dx, along(0), rtol=1e-6)
    assert np.shape(ds) == () and ds == pytest.approx(along(1), rel=1e-6)


def test_one_helper_called_both_ways_gets_two_pairs(pairs):
    text = s2s_ad.gradient_source(src.f_both, wrt=None)
    tree = ast.parse(text)
    defs = {n.name: ast.unparse(n) for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {"scale_fwd", "scale_bwd", "scale_fwd_1", "scale_bwd_1"} <= set(defs)
    grad = defs["grad_f_both"]
    assert "scale_fwd(x, a)" in grad and "scale_fwd_1(a, 3.0)" in grad
    # the array specialisation undoes broadcasting of the number a: a sum
    assert "total(dout * u)" in defs["scale_bwd"]
    assert "np." not in defs["scale_bwd_1"] and "np." not in defs["scale_fwd_1"]
    # the header of the array pair says which parameters are arrays; the other's says nothing
    assert re.search(r"# scale from \S*kinds_src\.py:\d+ for array u, forward pass", text)
    assert re.search(r"# scale from \S*kinds_src\.py:\d+, backward pass", text)


def test_a_helper_called_with_numbers_only_stays_scalar_code():
    def f(x, y):
        return src.scale(x, y) * y

    text = s2s_ad.gradient_source(f, wrt=None)
    assert "import numpy" not in text and "unbroadcast" not in text


def test_a_top_level_function_is_generated_per_kind_signature():
    s2s_ad.clear_cache()
    g = s2s_ad.grad(src.elementwise, wrt=1)
    assert g(3.0, 0.5) == pytest.approx(4.0)
    assert s2s_ad.cache_info().misses == 1
    x = rand(RNG, (4,))
    # grad of a non-scalar result seeds every item with dout=1: sum(x + 1)
    assert g(x, 0.5) == pytest.approx(float(np.sum(x + 1.0)))
    assert s2s_ad.cache_info().misses == 2
    g(x * 2.0, 0.1)
    g(1.0, 2.0)
    assert s2s_ad.cache_info().misses == 2   # one compile per kind signature


def test_the_rosenbrock_without_numpy_takes_lists_and_arrays():
    point = [0.3, 1.2, 0.5, -0.7]
    g = s2s_ad.grad(src.rosenbrock_no_numpy)
    from_list, from_array = g(point), g(np.array(point))
    assert isinstance(from_list, list) and isinstance(from_array, np.ndarray)
    np.testing.assert_allclose(from_array, fd_gradient(src.rosenbrock_no_numpy,
                                                       [np.array(point)], 0), rtol=1e-6)
    np.testing.assert_allclose(from_list, from_array, rtol=1e-12)


def test_a_parameter_annotated_float_takes_its_argument_as_a_number():
    # f_annotated's s may be an array (f names NumPy); annotated's says number
    assert_gradients(src.f_annotated, [X, 2.0], [0, 1])
    assert_gradients(src.annotated, [X, np.array(1.5)], [0, 1])


def test_an_array_given_to_a_parameter_annotated_float_is_refused_with_location():
    # its adjoint would be summed to a number: a located refusal, not a wrong gradient
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(src.annotated, wrt=1)(X, X)
    head, shown, caret = str(info.value).split("\n")
    assert re.match(r".*kinds_src\.py:\d+:\d+: error: parameter 's' is annotated `float` "
                    r"but receives an array$", head), head
    assert shown.strip() == "def annotated(u, s: float):"
    assert shown[caret.index("^"):].startswith("float")


def test_a_list_holding_an_array_gets_array_code():
    # A list holding an array is a structure parameter (docs/structures.md): the
    # code is generated for its length with array items. The references are
    # worked by hand: for xs[0] * xs[1] seeded with ones, d/dxs[0] = sum(xs[1])
    # where xs[0] is a number, and the cotangent times the other item.
    got = s2s_ad.grad(src.product_of_items)([2.0, X])
    assert got[0] == pytest.approx(float(np.sum(X)))
    np.testing.assert_allclose(got[1], 2.0 * np.ones_like(X))
    ct = np.array([1.0, 2.0, 3.0])
    _, back = s2s_ad.vjp(src.product_of_items, [X, 2.0])
    (dxs,) = back(ct)
    np.testing.assert_allclose(dxs[0], 2.0 * ct)
    assert dxs[1] == pytest.approx(float(np.sum(ct * X)))


def test_a_list_holding_a_string_is_refused_with_location():
    # a string in a list is a static value (it may select code); computed
    # with, it is refused where it is used
    for call in (lambda: s2s_ad.vjp(src.product_of_items, ["a", 2.0]),
                 lambda: s2s_ad.grad(src.product_of_items)([2.0, "a"])):
        with pytest.raises(s2s_ad.SourceError) as info:
            call()
        head, shown, caret = str(info.value).split("\n")
        assert re.match(r".*kinds_src\.py:\d+:\d+: error: 'a' is used where a number is "
                        r"expected", head), head
        assert shown.strip() == "return xs[0] * xs[1]"
        assert shown[caret.index("^"):].startswith("xs[0] * xs[1]")
    # numbers are fine
    assert s2s_ad.grad(src.product_of_items)([2.0, 3.0]) == pytest.approx([3.0, 2.0])


# -- the command line: example arguments give the kinds ---------------------------------


def _cli(*argv, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.path.join(ROOT, "tests"))
    return subprocess.run([sys.executable, "-m", "s2s_ad", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


ROSENBROCK = os.path.join(ROOT, "tests", "kinds_src.py")


def test_cli_check_with_shapes_lowers_the_array_parameter():
    done = _cli("check", f"{ROSENBROCK}:rosenbrock_no_numpy", "--shape", "x=5", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("AGREES NUMERICALLY") and "is given arrays" in done.stdout


def test_cli_check_of_the_helper_reproducer_with_a_scalar_s():
    done = _cli("check", f"{ROSENBROCK}:f_scale", "--shape", "x=3,s=scalar", cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "/ds: agrees numerically" in done.stdout


def test_cli_grad_without_example_arguments_is_a_located_refusal():
    # x[i] and len(x) alone: a list of any length, no --length needed
    # (tests/test_runtime_lists.py); unpacking needs the length.
    done = _cli("grad", f"{ROSENBROCK}:unpacks_a_list", cwd=ROOT)
    assert done.returncode == 2
    head = done.stderr.splitlines()[0]
    assert re.match(r".*kinds_src\.py:\d+:\d+: error: parameter 'x' is used as a list or tuple",
                    head), done.stderr
    assert "--array x" in head and "--length x=N" in head and "of any length" in head
    assert "^" in done.stderr.splitlines()[2]


@pytest.mark.parametrize("name, args", [
    ("rosenbrock_no_numpy", [np.array([0.3, 1.2, 0.5, -0.7])]),
    ("elementwise", [np.array([0.3, 1.2, 0.5]), 0.8]),
])
def test_cli_grad_with_array_parameters_runs_in_a_fresh_interpreter(name, args, tmp_path):
    out = tmp_path / "kinds_grad.py"
    done = _cli("grad", f"{ROSENBROCK}:{name}", "--array", "x", "-o", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    got = run_generated(tmp_path, "kinds_grad", f"grad_{name}", args)
    fn = getattr(src, name)
    scalar = (lambda *a: float(np.sum(fn(*a)))) if name == "elementwise" else fn
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, fd_gradient(scalar, list(args), i), rtol=1e-5, atol=1e-7)


def test_cli_array_names_a_parameter():
    done = _cli("grad", f"{ROSENBROCK}:rosenbrock_no_numpy", "--array", "y", cwd=ROOT)
    assert done.returncode == 2 and "arrays names no parameter of rosenbrock_no_numpy: 'y'" \
        in done.stderr
