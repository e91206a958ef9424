"""Forward mode of lists of any length passed to helpers
(tests/forward_lists_src.py, tests/lists_across_calls_src.py): the helper's
JVP takes the tangent list beside the list. List parameters passed on, lists
grown by `append` and made by `[c] * n`, a list with no tangent, NumPy lists
of arrays; at top level, in a helper, a helper of a helper, a loop and a
branch, and through the module `s2s-ad jvp -o` writes, run in a fresh
interpreter. Every tangent is compared with central differences of the
original function (float64) along the same direction."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import forward_lists_src as src
import lists_across_calls_src as across
import s2s_ad
from array_oracle import make_function
from s2s_ad import cli
from soak import beyond

H = 1e-6
CS = [0.4, -0.7, 1.1, 0.25, -0.3]
W = np.random.default_rng(0).normal(size=(3, 3)) * 0.5
X = np.random.default_rng(1).normal(size=3)


def _along(f, args, tangents):
    """The derivative of f at args along tangents (None: held fixed), by
    central differences; a list argument moves item by item."""
    def moved(sign):
        out = []
        for a, t in zip(args, tangents):
            if t is None:
                out.append(a)
            elif isinstance(a, list):
                out.append([x + sign * H * dt for x, dt in zip(a, t)])
            else:
                out.append(a + sign * H * t)
        return out
    return (f(*moved(1)) - f(*moved(-1))) / (2 * H)


def _close(got, want, what):
    np.testing.assert_allclose(float(got), float(want), rtol=1e-6, atol=1e-7, err_msg=what)


def _direction(args, wrt, seed):
    rng = np.random.default_rng(seed)
    out = []
    for k, a in enumerate(args):
        if k not in wrt:
            out.append(None)
        elif isinstance(a, list):
            out.append([rng.normal(size=np.shape(x)) if np.ndim(x) else float(rng.normal())
                        for x in a])
        else:
            out.append(rng.normal(size=np.shape(a)) if np.ndim(a) else float(rng.normal()))
    return out


PARAMS = ["param_passed", "param_passed_on", "param_read_and_passed",
          "param_in_loop_and_branch"]
"""f(cs, x): cs a list of floats of any length."""
COUNTS = ["grown_passed", "filled_passed", "inactive_passed", "grown_in_loop_passed"]
"""f(x, w, n): lists of n + 1 items made in the function."""


def _cases():
    for name in PARAMS:
        for n in (1, 2, 5):
            yield name, (CS[:n], 0.6), (0, 1)
    for name in COUNTS:
        for n in (0, 1, 4):
            yield name, (0.3, 0.8, n), (0, 1)


def _check(f, args, wrt, what, seed=3):
    names = f.__code__.co_varnames[:f.__code__.co_argcount]
    d = _direction(args, wrt, seed)
    kw = {"d" + names[k]: d[k] for k in wrt}
    value, tangent = s2s_ad.jvp(f, wrt=wrt)(*args, **kw)
    assert value == pytest.approx(f(*args), rel=1e-12), what
    _close(tangent, _along(f, args, d), what)


@pytest.mark.parametrize("name, args, wrt", list(_cases()))
def test_jvp_of_a_list_passed_to_helpers(name, args, wrt):
    _check(getattr(src, name), args, wrt, f"{name} {args}")


def test_one_module_serves_every_length_of_a_list_parameter():
    # a list parameter the function reads itself is a list of any length: one
    # module (no length check) for every length, its helpers' too
    f = src.param_read_and_passed
    s2s_ad.clear_cache()
    j = s2s_ad.jvp(f)
    for n in (1, 3, 5):
        _close(j(CS[:n], 0.6, dcs=[1.0] * n, dx=0.5)[1],
               _along(f, (CS[:n], 0.6), ([1.0] * n, 0.5)), f"n={n}")
    assert s2s_ad.cache_info().misses == 1
    text = j.__s2s_ad_source__
    assert "len(cs) !=" not in text and "def jvp__horner(cs, x, dcs, dx):" in text


NUMPY = {
    "np_param_passed": (lambda n: ([X * (k + 1.0) for k in range(n)], W), (0, 1)),
    "np_grown_passed": (lambda n: (W, X, n), (0, 1)),
}


@pytest.mark.parametrize("name", NUMPY)
def test_jvp_of_a_numpy_list_passed_to_helpers(name):
    make, wrt = NUMPY[name]
    for n in ((1, 2, 4) if name == "np_param_passed" else (0, 1, 4)):
        _check(getattr(src, name), make(n), wrt, f"{name} n={n}")


ACROSS = {"lstm_total": (lambda n: (W, X, n), (0, 1)),
          "grown_through_helpers": (lambda n: (W, X, X * 0.5, n), (0, 1, 2)),
          "grown_and_called_in_loop": (lambda n: (W, X, n), (0, 1)),
          "np_rollout_passed_on": (lambda n: (W, X, np.ones((6, 3)) * 0.3, n), (0, 1))}


@pytest.mark.parametrize("name", ACROSS)
def test_jvp_of_the_lstm_pattern(name):
    make, wrt = ACROSS[name]
    for n in (0, 1, 4):
        _check(getattr(across, name), make(n), wrt, f"{name} n={n}")


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


@pytest.mark.parametrize("form", ["helper", "helper_of_helper", "loop", "branch"])
@pytest.mark.parametrize("name", ["param_passed_on", "grown_passed", "inactive_passed",
                                  "np_grown_passed"])
def test_inside_a_helper_a_loop_and_a_branch(name, form):
    g = getattr(src, name)
    if name.startswith("param"):
        points, params = [(CS[:1], 0.6), (CS[:4], -0.4)], "p0, p1"
    elif name.startswith("np"):
        points, params = [(W, X, 0), (W, X, 3)], "p0, p1, p2"
    else:
        points, params = [(0.3, 0.8, 0), (-0.5, 1.1, 3)], "p0, p1, p2"
    f = make_function(_wrapped(form, params), env={"g": g})
    for point in points:
        for extra in ([(0.9,), (0.1,)] if form == "branch" else [()]):
            _check(f, point + extra, (0, 1), f"{name} as {form} at {point + extra}")


def _fresh(tmp_path, module: str, call: str, args, kwargs) -> float:
    """``call`` run in a fresh interpreter without s2s-ad on the module's path."""
    np.save(tmp_path / "args.npy", np.array([args, kwargs], dtype=object), allow_pickle=True)
    script = (f"import json, sys\nimport numpy as np\nsys.path.insert(0, {str(tmp_path)!r})\n"
              f"from {module} import *\n"
              f"args, kwargs = np.load({str(tmp_path / 'args.npy')!r}, allow_pickle=True)\n"
              f"out = {call}\n"
              "assert 's2s_ad' not in sys.modules\n"
              "print(json.dumps([float(o) for o in out]))\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True,
                         cwd=str(tmp_path), env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("name", beyond(["param_passed_on", "param_in_loop_and_branch",
                                         "grown_passed", "inactive_passed", "np_grown_passed"],
                                        1))  # (all five with --soak)
def test_the_cli_jvp_module_runs_in_a_fresh_interpreter(tmp_path, name):
    out = tmp_path / f"jvp_{name}.py"
    extra = ["--array", "W,x"] if name.startswith("np") else []
    assert cli.main(["jvp", f"{src.__file__}:{name}", "--wrt", "0,1", "-o", str(out)]
                    + extra) == 0
    text = out.read_text()
    assert not re.search(r"len\(\w+\) != \d", text)  # no length in the code
    f = getattr(src, name)
    if name.startswith("param"):
        points = [(CS[:1], 0.6), (CS[:3], 0.6), (CS, -0.4)]
    elif name.startswith("np"):
        points = [(W, X, 0), (W, X, 3)]
    else:
        points = [(0.3, 0.8, 0), (-0.5, 1.1, 4)]
    names = f.__code__.co_varnames[:f.__code__.co_argcount]
    for args in points:
        d = _direction(args, (0, 1), 5)
        kw = {"d" + names[k]: d[k] for k in (0, 1)}
        value, tangent = _fresh(tmp_path, f"jvp_{name}", f"jvp_{name}(*args, **kwargs)",
                                list(args), kw)
        assert value == pytest.approx(f(*args), rel=1e-12)
        _close(tangent, _along(f, args, d), f"{name} {args}")


def test_a_tangent_list_of_another_length_is_refused():
    j = s2s_ad.jvp(src.param_read_and_passed)
    with pytest.raises(ValueError, match="the tangent dcs has 3 items, cs has 2"):
        j(CS[:2], 0.6, dcs=[1.0, 0.0, 0.0], dx=0.0)
