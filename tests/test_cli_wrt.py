"""``--wrt`` means what ``wrt=`` means: the module ``s2s-ad grad -o`` writes,
imported in a fresh interpreter, returns exactly what ``s2s_ad.grad`` returns
for the same ``wrt`` (one gradient for one name, a tuple for several names or
a trailing comma), and both agree with central differences of the function."""

import json
import os
import subprocess
import sys

import pytest

from oracle import close, fd_gradient
from soak import soak

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (target, function, --wrt text, the API's wrt, the point, indices of wrt); the last
# three spell --wrt as one of the first five does (a name, a name and a comma), on other
# functions: run with --soak (three fresh interpreters a case)
CASES = [
    ("examples/seed_ggml.py:f", "f", "x", "x", [3.0, 2.0], [1]),
    ("examples/seed_ggml.py:f", "f", "1", 1, [3.0, 2.0], [1]),
    ("examples/seed_ggml.py:f", "f", "x,", ("x",), [3.0, 2.0], [1]),
    ("examples/seed_ggml.py:f", "f", "a,x", ("a", "x"), [3.0, 2.0], [0, 1]),
    ("examples/seed_ggml.py:f", "f", None, None, [3.0, 2.0], [0, 1]),
    ("examples/gaussian_nll.py:nll", "nll", "log_sigma", "log_sigma", [1.0, 0.2, 0.1], [2]),
    ("examples/gaussian_nll.py:nll", "nll", "mu,", ("mu",), [1.0, 0.2, 0.1], [1]),
    ("examples/rosenbrock.py:rosenbrock4", "rosenbrock4", "x2", "x2", [0.3, -0.4, 1.2, 0.8],
     [2]),
]


def _fresh(code: str, cwd, path: str) -> object:
    """Run ``code`` in a new interpreter and return what it prints as JSON."""
    env = dict(os.environ, PYTHONPATH=path)
    p = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.mark.parametrize("target,name,flag,wrt,point,indices", [
    (pytest.param if k < 5 else soak)(*c, id=f"{c[1]}-wrt={c[2]}") for k, c in enumerate(CASES)])
def test_cli_module_returns_what_the_api_returns(tmp_path, target, name, flag, wrt, point,
                                                 indices):
    out = tmp_path / f"grad_{name}.py"
    cmd = [sys.executable, "-m", "s2s_ad", "grad", target, "-o", str(out)]
    if flag is not None:
        cmd += ["--wrt", flag]
    done = subprocess.run(cmd, cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr

    # The written module alone (no s2s-ad, no examples on the path).
    from_cli = _fresh(f"import json, grad_{name} as g; r = g.grad_{name}(*{point!r}); "
                      "print(json.dumps([isinstance(r, tuple), r]))", tmp_path, str(tmp_path))
    module, fn = target.split(":")
    from_api = _fresh(
        "import json, runpy, s2s_ad\n"
        f"fn = runpy.run_path({module!r}, run_name='target')[{fn!r}]\n"
        f"r = s2s_ad.grad(fn, wrt={wrt!r})(*{point!r})\n"
        "print(json.dumps([isinstance(r, tuple), r]))", ROOT, ROOT)
    assert from_cli == from_api

    as_tuple = flag is None and len(indices) > 1 or flag is not None and "," in flag
    assert from_cli[0] is as_tuple
    got = from_cli[1] if as_tuple else [from_cli[1]]
    import runpy
    f = runpy.run_path(os.path.join(ROOT, module), run_name="target")[fn]
    expected = fd_gradient(f, list(point), indices)
    assert len(got) == len(expected)
    assert all(close(g, e) for g, e in zip(got, expected)), (got, expected)


def test_one_name_is_one_value_and_a_trailing_comma_a_tuple():
    # The text itself: `return dx` for --wrt x, `return dx,` for --wrt x,.
    def last_line(*wrt):
        done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "examples/seed_ggml.py:f",
                               *wrt], cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT),
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout.rstrip().splitlines()[-1].strip()

    assert last_line("--wrt", "x") == "return dx"
    assert last_line("--wrt", "x,") == "return dx,"
    assert last_line("--wrt", "a,x") == "return da, dx"


def test_api_tuple_of_one_name_is_a_one_tuple():
    import s2s_ad
    import seed_ggml
    one = s2s_ad.grad(seed_ggml.f, wrt="x")(3.0, 2.0)
    single = s2s_ad.grad(seed_ggml.f, wrt=("x",))(3.0, 2.0)
    assert isinstance(one, float) and isinstance(single, tuple) and len(single) == 1
    assert close(one, fd_gradient(seed_ggml.f, [3.0, 2.0], [1])[0]) and single == (one,)
