"""Lists grown at run time (tests/runtime_append_src.py): `append` inside loops
whose trip count is known only when the code runs.

Every gradient is compared with central differences of the original function
in float64, at several trip counts (0 and 1 included), through `grad`,
`vjp`, `jvp` and the command line's `grad -o` file imported in a fresh
interpreter; one generated module serves every length."""

import os
import subprocess
import sys

import numpy as np
import pytest

import runtime_append_src as src
import s2s_ad

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "tests", "runtime_append_src.py")

SCALAR = ["trajectory", "history_while", "all_states", "branch_append", "two_lists",
          "appended_later", "early_stop", "inner", "in_helper", "branch_break", "nested",
          "extend_const", "while_len", "inactive", "static_then_grown", "after_loop_append"]
ARRAY = ["array_states", "array_states_helper", "array_while"]
TRIPS = (0, 1, 2, 7)


def _fd(f, args, k, h=1e-6):
    a = args[k]
    if isinstance(a, np.ndarray):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
            minus = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
            plus[k][idx] += h
            minus[k][idx] -= h
            g[idx] = (f(*plus) - f(*minus)) / (2 * h)
        return g
    plus, minus = list(args), list(args)
    plus[k] += h
    minus[k] -= h
    return (f(*plus) - f(*minus)) / (2 * h)


def _scalar_args(n):
    return (0.3, 0.9, n)


def _array_args(n):
    rng = np.random.default_rng(n)
    return (rng.normal(size=(3, 3)) * 0.5, rng.normal(size=3), n)


def _check(got, f, args):
    for k, g in enumerate(got):
        want = _fd(f, args, k)
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", SCALAR + ARRAY)
def test_grad_every_length_one_module(name):
    f = getattr(src, name)
    s2s_ad.clear_cache()
    g = s2s_ad.grad(f, wrt=(0, 1))
    make = _array_args if name in ARRAY else _scalar_args
    misses = None
    for n in TRIPS:
        args = make(n)
        _check(g(*args), f, args)
        misses = misses or s2s_ad.cache_info().misses  # NumPy code: generated for arrays
    assert s2s_ad.cache_info().misses == misses  # no new transform for another length
    text = s2s_ad.source_of(g)
    assert "ValueError" not in text and "items" not in text.split("def ")[0].split("\n")[0]


@pytest.mark.parametrize("name", SCALAR + ARRAY)
def test_vjp(name):
    f = getattr(src, name)
    make = _array_args if name in ARRAY else _scalar_args
    for n in (0, 3):
        args = make(n)
        value, back = s2s_ad.vjp(f, *args)
        assert value == pytest.approx(f(*args))
        got = back(2.0)
        for k in (0, 1):
            np.testing.assert_allclose(got[k], 2.0 * _fd(f, args, k), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["trajectory", "history_while", "branch_append", "in_helper",
                                  "array_states"])
def test_jvp(name):
    f = getattr(src, name)
    make = _array_args if name in ARRAY else _scalar_args
    args = make(4)
    jvp = s2s_ad.jvp(f, wrt=(0, 1))
    names = f.__code__.co_varnames[:2]
    for k in (0, 1):
        tangents = {f"d{p}": (np.ones_like(a) if isinstance(a, np.ndarray) else 1.0) if j == k
                    else (np.zeros_like(a) if isinstance(a, np.ndarray) else 0.0)
                    for j, (p, a) in enumerate(zip(names, args))}
        value, tangent = jvp(*args, **tangents)
        assert value == pytest.approx(f(*args))
        assert tangent == pytest.approx(float(np.sum(_fd(f, args, k))), rel=1e-5, abs=1e-6)


def test_cli_file_in_a_fresh_interpreter(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.path.join(ROOT, "tests"))
    names = ["trajectory", "history_while", "in_helper", "array_states_helper"]
    for name in names:
        out = tmp_path / f"grad_{name}.py"
        done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", f"{SRC}:{name}",
                               "--wrt", "0,1", "-o", str(out)], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "len(" in out.read_text()
    script = (
        "import json, sys, numpy as np\n"
        "sys.path.insert(0, '.')\n"
        "res = {}\n"
        + "".join(f"import grad_{n}\n" for n in names) +
        "for n in (0, 1, 5):\n"
        "    res[f'trajectory{n}'] = list(grad_trajectory.grad_trajectory(0.3, 0.9, n))\n"
        "    res[f'history_while{n}'] = list(grad_history_while.grad_history_while(0.3, 0.9, n))\n"
        "    res[f'in_helper{n}'] = list(grad_in_helper.grad_in_helper(0.3, 0.9, n))\n"
        "    rng = np.random.default_rng(n)\n"
        "    A, x = rng.normal(size=(3, 3)) * 0.5, rng.normal(size=3)\n"
        "    g = grad_array_states_helper.grad_array_states_helper(A, x, n)\n"
        "    res[f'array_states_helper{n}'] = [g[0].tolist(), g[1].tolist()]\n"
        "print(json.dumps(res))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={k: v for k, v in os.environ.items()
                                                       if k != "PYTHONPATH"})
    assert done.returncode == 0, done.stderr
    import json
    res = json.loads(done.stdout)
    for n in (0, 1, 5):
        for name in names[:3]:
            f = getattr(src, name)
            _check(res[f"{name}{n}"], f, _scalar_args(n))
        _check([np.array(r) for r in res[f"array_states_helper{n}"]], src.array_states_helper,
               _array_args(n))


def test_the_generated_code_appends_and_pops():
    text = s2s_ad.gradient_source(src.trajectory, wrt=("x", "w"))
    assert "xs.append(" in text and "dxs.pop()" in text and "len(xs)" in text


def test_explain_graph_and_check_read_the_list_ops():
    text = s2s_ad.explain(src.trajectory, wrt="x")
    assert "dxs.pop()" in text and "xs.append" in text
    dot = s2s_ad.graph_dot(src.trajectory, wrt="x", backward=True)
    assert dot.startswith("digraph") and "append" in dot
    verdict = s2s_ad.check(src.trajectory, wrt="x", args={"n": 3})
    assert verdict.status in ("proved", "agrees"), str(verdict)


def test_value_and_grad():
    vg = s2s_ad.value_and_grad(src.all_states, wrt=("x", "w"))
    value, (dx, dw) = vg(0.3, 0.9, 6)
    assert value == pytest.approx(src.all_states(0.3, 0.9, 6))
    assert dx == pytest.approx(_fd(src.all_states, (0.3, 0.9, 6), 0), rel=1e-5)
    assert dw == pytest.approx(_fd(src.all_states, (0.3, 0.9, 6), 1), rel=1e-5)


def test_long_trajectory_is_not_unrolled():
    g = s2s_ad.grad(src.trajectory, wrt=("x", "w"))
    args = (0.3, 0.9, 3000)
    dx, dw = g(*args)
    assert dx == pytest.approx(_fd(src.trajectory, args, 0), rel=1e-4)
    assert dw == pytest.approx(_fd(src.trajectory, args, 1), rel=1e-4)


@pytest.mark.parametrize("steps", [0, 1, 5])
def test_states_appended_from_a_helper_returning_a_tuple(steps):
    rng = np.random.default_rng(steps)
    args = (rng.normal(size=(3, 3)) * 0.5, rng.normal(size=3), rng.normal(size=(steps, 3)))
    got = s2s_ad.grad(src.lstm_like, wrt=(0, 1))(*args)
    _check(got, src.lstm_like, args)


@pytest.mark.parametrize("name", ["sum_after_loop", "sum_before_loop"])
def test_sum_of_a_list_parameter_beside_reads_by_index(name):
    # sum(c) adds its adjoint to every item of dc in one statement; the loop's
    # dc[i] += ... must still add (not set) on either side of it.
    f = getattr(src, name)
    g = s2s_ad.grad(f, wrt=(0, 1))
    for c in ([], [0.4], [0.3, -0.2, 0.9, 1.1]):
        dc, dx = g(c, 0.7)
        for j in range(len(c)):
            plus, minus = list(c), list(c)
            plus[j] += 1e-6
            minus[j] -= 1e-6
            assert dc[j] == pytest.approx((f(plus, 0.7) - f(minus, 0.7)) / 2e-6, rel=1e-6)
        assert dx == pytest.approx(_fd(f, (c, 0.7), 1), rel=1e-6, abs=1e-9)


def test_a_slice_of_a_list_grown_at_run_time():
    # (tests/test_list_slices.py checks slices in every position)
    g = s2s_ad.grad(src.sliced, wrt="x")
    for n in (0, 1, 2, 5):
        assert g(0.7, n) == pytest.approx(_fd(src.sliced, (0.7, n), 0), rel=1e-6, abs=1e-9)


def test_a_list_created_inside_a_loop_has_one_per_iteration():
    # (tests/test_inner_lists.py checks such lists in every position)
    g = s2s_ad.grad(src.created_inside_loop, wrt="x")
    for n in (0, 1, 4):
        assert g(0.7, n) == pytest.approx(_fd(src.created_inside_loop, (0.7, n), 0),
                                          rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("name, message", [
    ("iterated_and_appended", "iterates over `xs` and appends to it"),
    ("returned", "returning"),
    ("aliased", "`xs` and `ys` hold the same list"),
    ("in_a_dict", "is also an item of `d`"),
    ("picked_by_a_branch", "`zs` is one of two lists"),
])
def test_refused_with_a_location(name, message):
    with pytest.raises(s2s_ad.SourceError, match=message) as err:
        s2s_ad.gradient_source(getattr(src, name), wrt="x")
    assert "runtime_append_src.py:" in str(err.value)
