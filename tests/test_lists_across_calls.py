"""Lists of any length across calls (tests/lists_across_calls_src.py): a NumPy
list grown in a loop passed to helpers (the LSTM pattern: `states.append(h)`,
then `loss(states, targets)`), with in-place writes to its items refused,
located. Every gradient is compared with central differences of the
original function (float64), through `grad`, `vjp` and the module
`s2s-ad grad -o` writes, imported in a fresh interpreter; each function is
also reached from a helper, a helper of a helper, a loop and a branch."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import lists_across_calls_src as src
import s2s_ad
from array_oracle import make_function
from s2s_ad import cli
from soak import beyond, in_turn


def _rng(seed):
    return np.random.default_rng(seed)


def _fd(f, args, k, h=1e-6):
    """∂f/∂args[k] by central differences, element by element (an array or a number)."""
    x = np.array(args[k], dtype=float)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        a, b = list(args), list(args)
        a[k] = up if x.ndim else float(up)
        b[k] = down if x.ndim else float(down)
        out[i] = (f(*a) - f(*b)) / (2 * h)
    return out if x.ndim else float(out)


def _assert_close(got, want, what):
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float),
                               rtol=1e-6, atol=1e-7, err_msg=what)


W, U = _rng(0).normal(size=(3, 3)) * 0.5, _rng(1).normal(size=(3, 3)) * 0.5
X, V, TARGETS = _rng(2).normal(size=3), _rng(3).normal(size=3), _rng(4).normal(size=(6, 3))

# name -> (arguments for a trip count n, indices of the arguments differentiated)
NUMPY = {
    "lstm_total": (lambda n: (W, X, n), (0, 1)),
    "lstm_loss": (lambda n: (W, U, X, TARGETS, n), (0, 1, 2)),
    "grown_through_helpers": (lambda n: (W, X, V, n), (0, 1, 2)),
    "grown_and_called_in_loop": (lambda n: (W, X, n), (0, 1)),
    "called_in_branch": (lambda n: (W, X, TARGETS, n, 0.7 if n % 2 else 0.2), (0, 1)),
}
TRIPS = (0, 1, 4)
FORMS = ["helper", "helper_of_helper", "loop", "branch"]
"""Where each function is reached from: in the default run the first function
of each family in every form and each other in one, in turn (tests/soak.py's
in_turn); every pair with ``--soak``. The CLI's module in a fresh
interpreter: the first function of each family in the default run (each
function's gradient, vjp and jvp are checked in-process there), all with
``--soak``."""


@pytest.mark.parametrize("name", NUMPY)
def test_a_numpy_list_grown_in_a_loop_passed_to_helpers(name):
    # one generated module for every trip count, against central differences
    f = getattr(src, name)
    make, wrt = NUMPY[name]
    g = s2s_ad.grad(f, wrt=wrt)
    for n in TRIPS:
        args = make(n)
        for k, got in zip(wrt, g(*args)):
            _assert_close(got, _fd(f, args, k), f"{name} n={n} arg {k}")


@pytest.mark.parametrize("name", NUMPY)
def test_vjp_of_a_numpy_list_passed_to_helpers(name):
    f = getattr(src, name)
    make, wrt = NUMPY[name]
    args = make(4)
    value, back = s2s_ad.vjp(f, *args)
    assert value == pytest.approx(f(*args), rel=1e-12)
    pulled = back(0.7)
    for k in wrt:
        _assert_close(pulled[k], 0.7 * _fd(f, args, k), f"{name} arg {k}")


def _wrapped(form: str, params: str) -> str:
    if form == "helper":
        return f"def f({params}):\n    return g({params})\n"
    if form == "helper_of_helper":
        return f"def h({params}):\n    return g({params})\n\n\ndef f({params}):\n    return h({params})\n"
    if form == "loop":
        return (f"def f({params}):\n    s = 0.0\n    for k in range(2):\n"
                f"        s = s + g({params}) * (k + 1.0)\n    return s\n")
    return (f"def f({params}, sel):\n    if sel > 0.5:\n        r = g({params}) * 2.0\n"
            f"    else:\n        r = g({params}) - 1.0\n    return r\n")


@pytest.mark.parametrize("name, form", in_turn(NUMPY, FORMS))
def test_the_pattern_inside_a_helper_a_loop_and_a_branch(name, form):
    g = getattr(src, name)
    make, wrt = NUMPY[name]
    params = ", ".join(f"p{i}" for i in range(len(make(0))))
    f = make_function(_wrapped(form, params), env={"g": g})
    for n in (0, 3):
        for extra in ([(0.9,), (0.1,)] if form == "branch" else [()]):
            args = make(n) + extra
            got = s2s_ad.grad(f, wrt=wrt)(*args)
            for k, gk in zip(wrt, got):
                _assert_close(gk, _fd(f, args, k), f"{name} as {form}, n={n}, arg {k}")


def _fresh(tmp_path, module: str, call: str, args) -> object:
    np.save(tmp_path / "args.npy", np.array(args, dtype=object), allow_pickle=True)
    script = (f"import json, sys\nimport numpy as np\nsys.path.insert(0, {str(tmp_path)!r})\n"
              f"from {module} import *\n"
              f"args = list(np.load({str(tmp_path / 'args.npy')!r}, allow_pickle=True))\n"
              f"out = {call}\n"
              "print(json.dumps([np.asarray(o, dtype=float).tolist() for o in out]))\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True,
                         cwd=str(tmp_path), env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("name", beyond(NUMPY, 1))
def test_the_cli_module_runs_in_a_fresh_interpreter(tmp_path, name):
    out = tmp_path / f"grad_{name}.py"
    assert cli.main(["grad", f"{src.__file__}:{name}", "-o", str(out)]) == 0
    f = getattr(src, name)
    make, wrt = NUMPY[name]
    for n in (0, 4):
        args = make(n)
        got = _fresh(tmp_path, f"grad_{name}", f"grad_{name}(*args)", args)
        for k in wrt:
            _assert_close(got[k], _fd(f, args, k), f"{name} n={n} arg {k}")


_GROWS_AND_CALLS = ("def f(W, x, n):\n    h = x\n    states = []\n    for t in range(n):\n"
                    "        h = np.tanh(W @ h)\n        states.append(h)\n    return g(states)\n")


@pytest.mark.parametrize("name", src.WRITERS)
def test_a_helper_writing_into_an_item_of_the_list_is_refused_there(name):
    # the helper would change the caller's arrays (and what its own tape read)
    f = make_function(_GROWS_AND_CALLS, env={"g": getattr(src, name)})
    with pytest.raises(s2s_ad.SourceError) as err:
        s2s_ad.grad(f, wrt=(0, 1))(W, X, 3)
    assert err.value.source_line.strip() == src.WRITERS[name]
    assert "lists_across_calls_src.py:" in str(err.value) and "^" in str(err.value)


@pytest.mark.parametrize("name", src.CALLER_WRITES)
def test_the_caller_writing_into_an_item_after_the_call_is_refused_there(name):
    # the helper's tape holds the list's arrays as they were at the call
    with pytest.raises(s2s_ad.SourceError) as err:
        s2s_ad.grad(getattr(src, name), wrt=(0, 1))(W, X, 3)
    assert err.value.source_line.strip() == src.CALLER_WRITES[name]
    assert "lists_across_calls_src.py:" in str(err.value) and "^" in str(err.value)


def test_the_refusals_say_what_is_written_and_why():
    f = make_function(_GROWS_AND_CALLS, env={"g": src._writes_item})
    with pytest.raises(s2s_ad.SourceError, match=r"writes in place into the array `states\[0\]`, "
                       "an item of the list `states`"):
        s2s_ad.grad(f)(W, X, 3)
    f = make_function(_GROWS_AND_CALLS, env={"g": src._writes_alias})
    with pytest.raises(s2s_ad.SourceError, match="`h` is an item of the list `states`"):
        s2s_ad.grad(f)(W, X, 3)
    f = make_function(_GROWS_AND_CALLS, env={"g": src._adds_in_place})
    with pytest.raises(s2s_ad.SourceError, match="`h` is an item of the list `states`"):
        s2s_ad.grad(f)(W, X, 3)


# -- helpers returning lists of any length -------------------------------------

SCALAR_RETURNS = ["rollout_indexed", "rollout_summed", "rollout_iterated", "rollout_passed_on",
                  "rollout_copied_and_grown", "rollout_called_in_loops",
                  "rollout_under_the_same_condition"]
SCALAR_POINTS = [(0.3, 0.8, 0), (0.3, 0.8, 1), (-0.6, 1.1, 5)]


@pytest.mark.parametrize("name", SCALAR_RETURNS)
def test_a_helper_returning_a_list_grown_at_run_time(name):
    # one module for every trip count; grad, vjp and jvp against central differences
    f = getattr(src, name)
    g = s2s_ad.grad(f, wrt=(0, 1))
    for args in SCALAR_POINTS:
        for k, got in zip((0, 1), g(*args)):
            _assert_close(got, _fd(f, args, k), f"{name} {args} arg {k}")
        value, back = s2s_ad.vjp(f, *args)
        assert value == pytest.approx(f(*args), rel=1e-12)
        pulled = back(0.7)
        for k in (0, 1):
            _assert_close(pulled[k], 0.7 * _fd(f, args, k), f"vjp {name} {args} arg {k}")
        value, tangent = s2s_ad.jvp(f, wrt=(0, 1))(*args, dx=1.0, dw=0.5)
        _assert_close(tangent, _fd(f, args, 0) + 0.5 * _fd(f, args, 1), f"jvp {name} {args}")


@pytest.mark.parametrize("name, form", in_turn(SCALAR_RETURNS, FORMS))
def test_a_returned_list_inside_a_helper_a_loop_and_a_branch(name, form):
    f = make_function(_wrapped(form, "p0, p1, p2"), env={"g": getattr(src, name)})
    for args in SCALAR_POINTS[1:]:
        for extra in ([(0.9,), (0.1,)] if form == "branch" else [()]):
            point = args + extra
            got = s2s_ad.grad(f, wrt=(0, 1))(*point)
            for k, gk in zip((0, 1), got):
                _assert_close(gk, _fd(f, point, k), f"{name} as {form} {point} arg {k}")


NUMPY_RETURNS = {
    "np_rollout_used": (lambda n: (W, X, n), (0, 1)),
    "np_rollout_passed_on": (lambda n: (W, X, TARGETS, n), (0, 1)),
    "np_rollout_in_loop": (lambda n: (W, X, n), (0, 1)),
}


@pytest.mark.parametrize("name", NUMPY_RETURNS)
def test_a_numpy_helper_returning_a_list_grown_at_run_time(name):
    f = getattr(src, name)
    make, wrt = NUMPY_RETURNS[name]
    g = s2s_ad.grad(f, wrt=wrt)
    for n in TRIPS:
        args = make(n)
        for k, got in zip(wrt, g(*args)):
            _assert_close(got, _fd(f, args, k), f"{name} n={n} arg {k}")
    value, back = s2s_ad.vjp(f, *make(3))
    pulled = back(0.7)
    for k in wrt:
        _assert_close(pulled[k], 0.7 * _fd(f, make(3), k), f"vjp {name} arg {k}")
    h = make(3)
    p = make_function(_wrapped("loop", ", ".join(f"p{i}" for i in range(len(h)))),
                      env={"g": f})
    for k, got in zip(wrt, s2s_ad.grad(p, wrt=wrt)(*h)):
        _assert_close(got, _fd(p, h, k), f"{name} in a loop, arg {k}")


@pytest.mark.parametrize("name", beyond(SCALAR_RETURNS, 1) + beyond(NUMPY_RETURNS, 1))
def test_a_returned_list_through_the_cli_module_in_a_fresh_interpreter(tmp_path, name):
    out = tmp_path / f"grad_{name}.py"
    assert cli.main(["grad", f"{src.__file__}:{name}", "-o", str(out)]) == 0
    f = getattr(src, name)
    if name in NUMPY_RETURNS:
        make, wrt = NUMPY_RETURNS[name]
        points = [make(0), make(4)]
    else:
        points, wrt = SCALAR_POINTS, (0, 1)
    for args in points:
        got = _fresh(tmp_path, f"grad_{name}", f"grad_{name}(*args)", args)
        for k in wrt:
            _assert_close(got[k], _fd(f, args, k), f"{name} {args} arg {k}")


@pytest.mark.parametrize("name", src.RETURN_REFUSED)
def test_what_a_returned_list_does_not_support_is_refused_there(name):
    line, words = src.RETURN_REFUSED[name]
    with pytest.raises(s2s_ad.SourceError, match=words) as err:
        s2s_ad.grad(getattr(src, name), wrt=(0, 1))(0.3, 0.8, 3)
    assert err.value.source_line.strip() == line
    assert "lists_across_calls_src.py:" in str(err.value) and "^" in str(err.value)


# -- sorted, min and max over lists of any length -------------------------------

SORTS = ["sorted_grown", "sorted_key_reverse", "min_max_keyed", "sorted_in_helper_in_loop",
         "sorted_in_loops_and_branches"]
SORT_POINTS = [(0.3, 0.8, 0), (0.3, 0.8, 1), (0.45, 0.6, 6), (-0.7, 1.2, 9)]


@pytest.mark.parametrize("name", SORTS)
def test_sorted_min_max_of_a_list_grown_at_run_time(name):
    # one module for every trip count: the permutation is found when the code runs
    f = getattr(src, name)
    g = s2s_ad.grad(f, wrt=(0, 1))
    for args in SORT_POINTS:
        for k, got in zip((0, 1), g(*args)):
            _assert_close(got, _fd(f, args, k), f"{name} {args} arg {k}")
        value, back = s2s_ad.vjp(f, *args)
        assert value == pytest.approx(f(*args), rel=1e-12)
        for k, got in zip((0, 1), back(0.7)):
            _assert_close(got, 0.7 * _fd(f, args, k), f"vjp {name} {args} arg {k}")
        value, tangent = s2s_ad.jvp(f, wrt=(0, 1))(*args, dx=1.0, dw=0.5)
        _assert_close(tangent, _fd(f, args, 0) + 0.5 * _fd(f, args, 1), f"jvp {name} {args}")


@pytest.mark.parametrize("name, form", in_turn(SORTS, FORMS))
def test_sorted_min_max_inside_a_helper_a_loop_and_a_branch(name, form):
    f = make_function(_wrapped(form, "p0, p1, p2"), env={"g": getattr(src, name)})
    for args in SORT_POINTS[1:3]:
        for extra in ([(0.9,), (0.1,)] if form == "branch" else [()]):
            point = args + extra
            got = s2s_ad.grad(f, wrt=(0, 1))(*point)
            for k, gk in zip((0, 1), got):
                _assert_close(gk, _fd(f, point, k), f"{name} as {form} {point} arg {k}")


@pytest.mark.parametrize("name", beyond(SORTS, 1))
def test_sorted_min_max_through_the_cli_module_in_a_fresh_interpreter(tmp_path, name):
    out = tmp_path / f"grad_{name}.py"
    assert cli.main(["grad", f"{src.__file__}:{name}", "-o", str(out)]) == 0
    f = getattr(src, name)
    for args in SORT_POINTS:
        got = _fresh(tmp_path, f"grad_{name}", f"grad_{name}(*args)", args)
        for k in (0, 1):
            _assert_close(got[k], _fd(f, args, k), f"{name} {args} arg {k}")


def _list_fd(f, xs, *rest, h=1e-6):
    out = []
    for k in range(len(xs)):
        up, down = list(xs), list(xs)
        up[k] += h
        down[k] -= h
        out.append((f(up, *rest) - f(down, *rest)) / (2 * h))
    return out


def test_sorted_min_max_of_a_list_parameter_of_any_length():
    g = s2s_ad.grad(src.sorted_param, wrt=("xs", "w"))
    for xs in ([0.5, -1.0, 2.0], [0.3], [0.5, -1.0, 2.0, 0.25, -0.7, 1.3]):
        dxs, dw = g(xs, 0.7)
        assert isinstance(dxs, list) and len(dxs) == len(xs)
        _assert_close(dxs, _list_fd(src.sorted_param, xs, 0.7), f"{xs}")
        _assert_close(dw, _fd(src.sorted_param, [xs, 0.7], 1), f"{xs} w")
    # one generated function for every length: no length check in it
    text = s2s_ad.gradient_source(src.sorted_param, lengths={"xs": ("list", None)})
    assert "len(xs) !=" not in text and "key=keys" in text


def test_ties_follow_the_order_python_sorts_them_in():
    # equal keys: the adjoint of each result item goes to the item Python's
    # stable sort (and max/min, the first best) put there
    f = src.sorted_ties
    for xs in ([0.5, -0.5, 0.5, 0.3, -0.3], [0.2, 0.2, 0.2], [1.0, -1.0, 0.5, -1.0]):
        got = s2s_ad.grad(f, wrt="xs")(xs)
        by_square = sorted(range(len(xs)), key=lambda i: xs[i] * xs[i])
        by_value_reversed = sorted(range(len(xs)), key=lambda i: xs[i], reverse=True)
        want = [0.0] * len(xs)
        for pos, i in enumerate(by_square):
            want[i] += pos + 1.0
        for pos, i in enumerate(by_value_reversed):
            want[i] += (pos + 1.0) ** 2
        want[max(range(len(xs)), key=lambda i: xs[i] * xs[i])] += 100.0
        want[min(range(len(xs)), key=lambda i: xs[i])] += 1000.0
        assert got == pytest.approx(want, rel=1e-12), xs
        assert f(xs) == s2s_ad.vjp(f, xs)[0]


@pytest.mark.parametrize("name", src.SORT_REFUSED)
def test_what_sorting_a_list_of_any_length_does_not_support_is_refused_there(name):
    line, words, args = src.SORT_REFUSED[name]
    with pytest.raises(s2s_ad.SourceError, match=words) as err:
        s2s_ad.grad(getattr(src, name), wrt=0)(*args)
    assert err.value.source_line.strip() == line
    assert "lists_across_calls_src.py:" in str(err.value) and "^" in str(err.value)
