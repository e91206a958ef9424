"""Structures passed whole to helpers and returned by them
(tests/passing_src.py, s2s_ad/frontend/passing.py): a list, tuple, dict,
NamedTuple or dataclass built in the function or received as a parameter,
given to a helper (inlined or a forward/backward pair), `*args` and
`**kwargs` helpers, helpers returning dicts, NamedTuples and nested tuples.
Every gradient is compared with central differences of the original
function (float64): through `grad`, `vjp` and `jvp`, and through the module
`s2s-ad grad -o` writes, imported in a fresh interpreter. The positions
helper, helper of helper, loop and branch come from
tests/test_metamorphic_corpora.py, which runs the scalar cases below."""

import inspect
import json
import os
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pytest

import passing_src as src
import s2s_ad
from oracle import close, fd_gradient
from s2s_ad import cli
from test_pytrees import _check, _fd_tree, _flatten

SCALAR = {
    "list_to_helper": [0.3, 0.7],
    "list_to_looping_helper": [0.3, 0.7],
    "list_indexed_in_helper": [0.3, 0.7],
    "dict_to_helper": [0.3, 0.7, 0.4],
    "namedtuple_built": [0.3, 0.7, 0.4],
    "dataclass_built": [0.3, 0.7, 0.4],
    "nested_structure": [0.3, 0.7],
    "structure_through_helpers": [0.3, 0.7, 0.4],
    "structure_in_loop": [0.3, 0.7, 4],
    "structure_in_branch": [0.3, 0.7],
    "static_in_structure": [0.3, 0.7],
    "star_args": [0.3, 0.7],
    "kwargs_helper": [0.3, 0.7],
    "star_forward": [0.3, 0.7],
    "returns_dict": [0.3, 0.7],
    "returns_namedtuple": [0.3, 0.7],
    "returns_nested": [0.3, 0.7],
    "forward_structure_parameter": [0.3, 0.7, 0.4],
    "sorted_weights": [0.35, 0.7, 0.4],
    "sorted_plain": [0.3, 0.7, 0.4],
    "closest_point": [0.33, 0.7, 0.4],
    "star_kwargs_forwarding": [0.3, 0.7],
    "sorted_in_loop": [0.37, 0.7, 0.5],
}
POINTS = {"grown_to_helper": [[0.3, 0.8, 3], [0.3, 0.8, 0], [-0.6, 1.1, 7]],
          "grown_in_loop": [[0.4, 4], [0.4, 1], [0.4, 0]],
          "sorted_in_loop": [[0.37, 0.7, 0.5], [0.6, -0.4, 0.9], [0.2, 0.9, 0.45]],
          "sorted_weights": [[0.35, 0.7, 0.4], [1.1, -0.3, 0.9], [0.2, 0.5, -1.0]],
          "sorted_plain": [[0.3, 0.7, 0.4], [1.1, -0.3, 0.9], [0.5, 0.5001, -2.0]],
          "closest_point": [[0.33, 0.7, 0.4], [1.1, -0.3, 0.9], [0.2, 0.9, -2.0]],"structure_in_branch": [[0.3, 0.7], [0.9, -0.4]],
          "dict_to_helper": [[0.3, 0.7, 0.4], [0.3, 0.7, -0.4]]}


def _wrt(args):
    return [i for i, a in enumerate(args) if isinstance(a, float)]


def _points(name):
    return POINTS[name] if name in POINTS else [SCALAR[name]]


@pytest.mark.parametrize("name", SCALAR)
def test_grad_matches_finite_differences(name):
    f = getattr(src, name)
    for args in _points(name):
        wrt = _wrt(args)
        got = s2s_ad.grad(f, wrt=tuple(wrt))(*args)
        for g, want in zip(got, fd_gradient(f, args, wrt)):
            assert close(g, want), (name, args, got)


@pytest.mark.parametrize("name", SCALAR)
def test_vjp_and_jvp_match_finite_differences(name):
    f = getattr(src, name)
    args = SCALAR[name]
    value, back = s2s_ad.vjp(f, *args)
    assert value == pytest.approx(f(*args), rel=1e-12)
    pulled = back(0.7)
    names = list(inspect.signature(f).parameters)
    for i in _wrt(args):
        want = fd_gradient(f, args, [i])[0]
        assert close(pulled[i], 0.7 * want)
        _, tangent = s2s_ad.jvp(f, wrt=names[i])(*args, **{f"d{names[i]}": 1.0})
        assert close(tangent, want)


@pytest.mark.parametrize("name", SCALAR)
def test_check_proves_the_gradient_against_sympy(name):
    # check runs the original (sorted, min/max with key= on comparisons decided
    # at each point, one path per order) and the generated module on symbols
    f = getattr(src, name)
    ints = {p: v for p, v in zip(inspect.signature(f).parameters, SCALAR[name])
            if isinstance(v, int)}
    verdict = s2s_ad.check(f, args=ints or None, timeout=60)
    assert verdict.status == "proved", str(verdict)


def test_a_pair_takes_the_leaves_and_each_structure_of_another_shape_gets_its_own():
    text = s2s_ad.gradient_source(src.dict_to_helper)
    # {"w": .., "b": ..} and {"b": .., "w": ..}: the same leaves, keys in another order
    assert "def _dict_branch_fwd(d_w, d_b, x):" in text
    assert "def _dict_branch_fwd_1(d_b, d_w, x):" in text
    assert "= _dict_branch_fwd(w, b, x)" in text


def _cli_module(tmp_path, name):
    out = tmp_path / f"grad_{name}.py"
    code = cli.main(["grad", f"{src.__file__}:{name}", "-o", str(out)])
    assert code == 0
    return out


@pytest.mark.parametrize("name", list(SCALAR) + ["grown_to_helper", "grown_in_loop"])
def test_the_cli_module_runs_in_a_fresh_interpreter(tmp_path, name):
    out = _cli_module(tmp_path, name)
    points = _points(name)
    script = (f"import json, sys\nsys.path.insert(0, {str(tmp_path)!r})\n"
              f"from grad_{name} import grad_{name} as g\n"
              f"print(json.dumps([list(g(*p)) if isinstance(g(*p), tuple) else [g(*p)] "
              f"for p in {points!r}]))\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True,
                         cwd=str(tmp_path), env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    f = getattr(src, name)
    for got, args in zip(json.loads(run.stdout), points):
        wrt = list(range(len(args)))
        want = fd_gradient(f, args, _wrt(args))
        got = [got[i] for i in _wrt(args)] if len(got) == len(wrt) else got
        for g, w in zip(got, want):
            assert close(g, w), (name, args, got, want)


def _run_fresh(tmp_path, module: str, call: str) -> object:
    """``call`` evaluated in a fresh interpreter that imports ``module`` from
    ``tmp_path`` (not the repository); arguments travel by pickle."""
    script = (f"import pickle, sys\nsys.path.insert(0, {str(tmp_path)!r})\n"
              f"from {module} import *\n"
              f"args = pickle.load(open({str(tmp_path / 'args.pkl')!r}, 'rb'))\n"
              f"pickle.dump({call}, open({str(tmp_path / 'out.pkl')!r}, 'wb'))\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True,
                         cwd=str(tmp_path), env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    with open(tmp_path / "out.pkl", "rb") as f:
        return pickle.load(f)


@pytest.mark.parametrize("name, param, like", [("dict_loss", "params", "EXAMPLE_PARAMS"),
                                               ("model_loss", "model", "EXAMPLE_MODEL")])
def test_the_cli_generates_for_a_structure_parameter_like_an_example(tmp_path, name, param,
                                                                     like):
    out = tmp_path / f"grad_{name}.py"
    assert cli.main(["grad", f"{src.__file__}:{name}", "--like", f"{param}={like}",
                     "-o", str(out)]) == 0
    args = dict(ARRAYS)[name]()
    with open(tmp_path / "args.pkl", "wb") as f:
        pickle.dump(args, f)
    # the dataclass's class travels by pickle: its module must be importable there
    shutil.copy(src.__file__, tmp_path / "passing_src.py")
    got = _run_fresh(tmp_path, f"grad_{name}", f"grad_{name}(*args)")
    for k in range(len(args)):
        _check(got[k], getattr(src, name), args, k)


def test_the_cli_refuses_a_like_that_is_not_a_structure(capsys):
    assert cli.main(["grad", f"{src.__file__}:dict_loss", "--like", "params=Pt"]) == 2
    assert "--like params: Pt is not a dict" in capsys.readouterr().err


def _rng(seed):
    return np.random.default_rng(seed)


ARRAYS = [
    ("dict_loss", lambda: ({"W1": _rng(0).normal(size=(4, 3)), "b1": _rng(1).normal(size=4),
                            "W2": _rng(2).normal(size=(2, 4))}, _rng(3).normal(size=3))),
    ("layers_loss", lambda: ([src.Layer(_rng(i).normal(size=(3, 3)) * 0.7,
                                        _rng(i + 9).normal(size=3)) for i in range(2)],
                             _rng(4).normal(size=3))),
    ("model_loss", lambda: (src.Model(_rng(5).normal(size=(3, 3)), _rng(6).normal(size=3),
                                      _rng(7).normal(size=3)), _rng(8).normal(size=3))),
    ("returns_dict_of_arrays", lambda: (_rng(1).normal(size=(4, 3)),
                                        _rng(2).normal(size=(2, 4)), _rng(3).normal(size=3))),
    ("builds_layers", lambda: (_rng(4).normal(size=(3, 3)) * 0.5, _rng(5).normal(size=3),
                               _rng(6).normal(size=3))),
    ("reshape_starred", lambda: (_rng(7).normal(size=(2, 3)),)),
    ("starred_shape_name", lambda: (_rng(8).normal(size=(2, 3)),)),
]


@pytest.mark.parametrize("name, make", ARRAYS, ids=[a[0] for a in ARRAYS])
def test_structures_of_arrays_through_grad_vjp_and_jvp(name, make):
    f = getattr(src, name)
    args = make()
    got = s2s_ad.grad(f, wrt=tuple(range(len(args))))(*args)
    for k in range(len(args)):
        _check(got[k], f, args, k)
    value, back = s2s_ad.vjp(f, *args)
    assert np.allclose(value, f(*args))
    pulled = back(1.0)
    for k in range(len(args)):
        _check(pulled[k], f, args, k)
    # forward mode: a tangent of the first argument's structure, against the
    # dot product of central differences with it
    first = list(inspect.signature(f).parameters)[0]
    leaves, rebuild = _flatten(args[0])
    rng = _rng(21)
    directions = [rng.normal(size=np.shape(leaf)) if isinstance(leaf, np.ndarray)
                  else float(rng.normal()) for leaf in leaves]
    _, tangent = s2s_ad.jvp(f, wrt=first)(*args, **{f"d{first}": rebuild(directions)})
    want = sum(float(np.sum(np.asarray(g) * np.asarray(d)))
               for g, d in zip(_fd_tree(f, args, 0), directions))
    assert tangent == pytest.approx(want, rel=1e-5, abs=1e-6)


def test_sorted_is_stable_and_min_max_keep_the_first_at_ties():
    # equal keys: the order Python's sorted and min/max give, not another
    def ties(a, b):
        ys = sorted([a, b, -a, 2.0 * a], key=lambda t: t * t)
        m = max([b, a, -a], key=lambda t: t * t)
        return ys[0] * 1.0 + ys[1] * 2.0 + ys[2] * 3.0 + ys[3] * 5.0 + m * 7.0

    for a, b in [(0.5, 0.5), (0.5, -0.5), (0.3, 0.9)]:
        value, back = s2s_ad.vjp(ties, a, b)
        assert value == ties(a, b)
        # the gradient of the order Python chose: each item's weight flows to it
        order = sorted([(0, a), (1, b), (2, -a), (3, 2.0 * a)], key=lambda p: p[1] * p[1])
        weights = dict(zip([p[0] for p in order], [1.0, 2.0, 3.0, 5.0]))
        best = max([(0, b), (1, a), (2, -a)], key=lambda p: p[1] * p[1])[0]
        da = weights[0] - weights[2] + 2.0 * weights[3] + 7.0 * {0: 0.0, 1: 1.0, 2: -1.0}[best]
        db = weights[1] + 7.0 * (best == 0)
        assert back(1.0) == pytest.approx((da, db), rel=1e-12)


def test_sorted_of_a_list_of_any_length_is_sorted_when_the_code_runs():
    # (tests/test_lists_across_calls.py has the rest: keys, reverse, min/max, positions)
    def grow(x, n):
        xs = [x]
        for i in range(n):
            xs.append(xs[-1] * x - 0.3)
        return sorted(xs)[0] + sorted(xs)[-1] * 2.0

    g = s2s_ad.grad(grow, wrt=0)
    for n in (0, 1, 4):
        assert close(g(0.5, n), fd_gradient(grow, [0.5, n], [0])[0])


@pytest.mark.parametrize("name, points", [
    ("grown_to_helper", [[0.3, 0.8, 3], [0.3, 0.8, 0], [-0.6, 1.1, 7]]),
    ("grown_in_loop", [[0.4, 4], [0.4, 1], [0.4, 0]]),
])
def test_a_list_grown_at_run_time_passed_to_a_helper(name, points):
    # one generated module for every trip count; the call's adjoint list is
    # added item by item, with the length the list had at the call
    f = getattr(src, name)
    g = s2s_ad.grad(f, wrt=tuple(_wrt(points[0])))
    for args in points:
        for got, want in zip(g(*args), fd_gradient(f, args, _wrt(args))):
            assert close(got, want), (name, args)
    value, back = s2s_ad.vjp(f, *points[0])
    assert value == pytest.approx(f(*points[0]), rel=1e-12)
    text = s2s_ad.gradient_source(f)
    assert "_tail_energy_fwd(xs[:]" in text or "_tail_energy_fwd(hs[:]" in text


def test_a_list_parameter_of_any_length_passed_to_a_helper():
    g = s2s_ad.grad(src.list_param_to_helper, wrt=("c", "x"))
    for c in ([0.5, 1.0, -2.0], [0.3], [0.5, 1.0, -2.0, 0.25, 0.7]):
        dc, dx = g(c, 0.7)
        assert isinstance(dc, list) and len(dc) == len(c)
        h = 1e-6
        for k in range(len(c)):
            up, down = list(c), list(c)
            up[k] += h
            down[k] -= h
            want = (src.list_param_to_helper(up, 0.7) - src.list_param_to_helper(down, 0.7)) / (2 * h)
            assert close(dc[k], want)
        assert close(dx, fd_gradient(lambda x: src.list_param_to_helper(c, x), [0.7], [0])[0])
    # one generated function for every length: no length check in it
    text = s2s_ad.gradient_source(
        src.list_param_to_helper, lengths={"c": ("list", None)})
    assert "len(c) !=" not in text and "_indexed_fwd(c, x)" in text


def test_a_list_of_any_length_a_helper_needs_the_length_of_is_refused_there():
    def grow(x, n):
        xs = [x]
        for i in range(n):
            xs.append(xs[-1] * x)
        return src._head_pair(xs)

    with pytest.raises(s2s_ad.SourceError, match="list of any length") as err:
        s2s_ad.grad(grow)(0.5, 3)
    assert "passing_src.py:" in str(err.value) and "^" in str(err.value)


def test_a_generator_over_a_list_of_any_length_in_a_helper():
    def grow(x, n):
        xs = [x]
        for i in range(n):
            xs.append(xs[-1] * x)
        return src._sumsq(xs)  # sum(x * x for x in xs): the loop it stands for

    h = 1e-6
    for n in (0, 1, 3):
        want = (grow(0.5 + h, n) - grow(0.5 - h, n)) / (2 * h)
        assert s2s_ad.grad(grow, wrt="x")(0.5, n) == pytest.approx(want, rel=1e-6)


def test_forward_mode_passes_a_list_of_any_length_to_a_helper_with_its_tangent_list():
    # the helper's JVP takes the tangent list beside the list; the list grows after the call
    f = src.grown_to_helper
    j = s2s_ad.jvp(f, wrt=("x", "w"))
    h = 1e-6
    for n in (0, 1, 3):
        value, tangent = j(0.3, 0.8, n, dx=1.0, dw=-0.4)
        want = (f(0.3 + h, 0.8 - 0.4 * h, n) - f(0.3 - h, 0.8 + 0.4 * h, n)) / (2 * h)
        assert value == pytest.approx(f(0.3, 0.8, n), rel=1e-12)
        assert tangent == pytest.approx(want, rel=1e-6, abs=1e-8)


def _grown_list(x, n):
    xs = [x]
    for i in range(n):
        xs.append(xs[-1] * x)
    return xs


def test_a_helper_returning_a_list_of_any_length_is_read_by_the_caller():
    # (tests/test_lists_across_calls.py has the rest: every position, NumPy, refusals)
    def caller(x, n):
        return sum(_grown_list(x, n))

    g = s2s_ad.grad(caller, wrt=0)
    for n in (0, 1, 3):
        assert close(g(0.5, n), fd_gradient(caller, [0.5, n], [0])[0])


def _aliased_write(xs):
    ys = xs
    ys[0] = 5.0
    return ys[1]


def _appends_in_loop(xs, n):
    ys = xs
    for i in range(n):
        ys.append(1.0)
    return ys[-1]


def _returns_argument(xs):
    return {"a": xs, "b": 2.0}


def test_a_helper_changing_or_returning_the_callers_list_is_refused():
    # the helper gets the list's items: a change the caller would see in Python
    # (through another name, or through the returned structure) is refused
    def writes(x):
        xs = [x, x]
        a = _aliased_write(xs)
        return xs[0] * x + a

    def returns(x):
        xs = [x, x]
        d = _returns_argument(xs)
        a = d["a"]
        a.append(3.0)
        return sum(xs) * x

    with pytest.raises(s2s_ad.SourceError, match="changes a list or dict the caller") as err:
        s2s_ad.grad(writes)(0.5)
    assert err.value.source_line.strip() == "ys[0] = 5.0"
    def appends(x, n):
        xs = [x, x]
        a = _appends_in_loop(xs, n)
        return sum(xs) * x + a

    with pytest.raises(s2s_ad.SourceError, match="appending to `ys` changes a list") as err:
        s2s_ad.grad(appends)(0.5, 2)
    assert err.value.source_line.strip() == "for i in range(n):"
    with pytest.raises(s2s_ad.SourceError, match="returning a list or dict the caller") as err:
        s2s_ad.grad(returns)(0.5)
    assert err.value.source_line.strip() == 'return {"a": xs, "b": 2.0}'


def test_star_args_on_the_differentiated_function_is_refused_with_a_location():
    with pytest.raises(s2s_ad.SourceError, match=r"`\*args` parameters are supported in "
                       "helpers") as err:
        s2s_ad.grad(src._star)(0.5, 0.25)
    assert "passing_src.py:" in str(err.value)
