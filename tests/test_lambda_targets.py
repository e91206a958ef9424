"""``s2s_ad.grad(lambda ...)``, lambdas assigned to names, and lambdas called
from other functions: each gradient against central differences, through
grad, vjp, jvp, hvp and the CLI's file in a fresh interpreter."""

import os
import subprocess
import sys

import numpy as np
import pytest

import lambda_targets_src as c
import s2s_ad
from array_oracle import fd_gradient as array_fd
from oracle import close, fd_gradient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))

CASES = [
    ("square", c.square, [0.7]), ("cube", c.cube, [0.7]), ("scaled", c.scaled, [0.7]),
    ("both", c.both, [0.7]), ("mixed", c.mixed, [0.7, -0.4]),
    ("calls_lambdas", c.calls_lambdas, [0.7]), ("lambdas_in_a_loop", c.lambdas_in_a_loop, [0.3, 4]),
    ("in_a_branch", c.in_a_branch, [0.7]), ("in_a_branch", c.in_a_branch, [-0.7]),
]


@pytest.mark.parametrize("name, fn, point", CASES, ids=[f"{n}{p}" for n, _, p in CASES])
def test_against_central_differences(name, fn, point):
    wrt = [i for i, p in enumerate(point) if isinstance(p, float)]
    got = s2s_ad.grad(fn, wrt=tuple(wrt))(*point)
    want = fd_gradient(fn, point, wrt)
    assert all(close(g, w) for g, w in zip(got, want)), (got, want)
    value, pull = s2s_ad.vjp(fn, *point)
    assert close(value, fn(*point))
    assert all(close(pull(2.0)[i], 2.0 * w) for i, w in zip(wrt, want))
    first = fn.__code__.co_varnames[0]
    _, tangent = s2s_ad.jvp(fn, wrt=0)(*point, **{f"d{first}": 1.0})
    assert close(tangent, want[0])
    grad0 = s2s_ad.grad(fn, wrt=0)
    second = fd_gradient(grad0, point, [0])[0]
    assert close(s2s_ad.hvp(fn, wrt=0)(*point, 1.0), second)


def test_two_lambdas_on_one_line_are_told_apart():
    # one line, two lambdas: each gradient is its own (a shared cache entry
    # would give one the other's)
    assert close(s2s_ad.grad(c.square)(0.7), 1.4)
    assert close(s2s_ad.grad(c.cube)(0.7), 3 * 0.49)
    assert close(s2s_ad.grad(c.square)(0.7), 1.4)


def test_a_lambda_closing_over_arrays_inside_a_function():
    rng = np.random.default_rng(4)
    points, centers = rng.normal(size=(6, 2)), rng.normal(size=(3, 2))
    got = c.cost_gradient(points, centers)
    np.testing.assert_allclose(got, array_fd(c.cost, [points, centers], 1), rtol=1e-5, atol=1e-8)


def test_a_lambda_closing_over_a_list_inside_a_function():
    coeffs = [1.0, -2.0, 0.5, 3.0]
    got = c.series_gradient(0.7, coeffs)
    want = sum(k * ck * 0.7 ** (k - 1) for k, ck in enumerate(coeffs) if k)
    assert close(got, want)


@pytest.mark.parametrize("name, point", [("cube", (0.7,)), ("both", (0.7,)), ("mixed", (0.7, -0.4))])
def test_cli_file_in_a_fresh_interpreter(tmp_path, name, point):
    out = tmp_path / "g_mod.py"
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", f"lambda_targets_src.{name}",
                           "-o", str(out)], cwd=HERE, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"def grad_{name}(" in out.read_text()
    probe = f"import g_mod\nprint(repr(g_mod.grad_{name}(*{point!r})))"
    run = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                         text=True, env={"PATH": os.environ.get("PATH", "")}, timeout=120)
    assert run.returncode == 0, run.stderr
    got = eval(run.stdout)
    got = got if isinstance(got, tuple) else (got,)
    fn = getattr(c, name)
    want = fd_gradient(fn, list(point), list(range(len(point))))
    assert all(close(g, w) for g, w in zip(got, want)), (got, want)


def test_a_lambda_whose_source_changed_is_refused(tmp_path):
    path = tmp_path / "lam_mod.py"
    path.write_text("f = lambda x: x * x\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import lam_mod
        path.write_text("f = lambda x: x * x * x\n")
        with pytest.raises(s2s_ad.SourceError, match="not the code that runs"):
            s2s_ad.grad(lam_mod.f)(0.5)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("lam_mod", None)
