"""Second derivatives of generated modules holding tapes of lists, read back
from their files (tests/higher_lists_src.py), and the Hessian module of a
function of a list parameter without ``--length``.

* A loop's tape of the lists made in its body (``ys_tape[k] = ys`` of a
  ``[0.0] * n`` or of a list a helper returns), read by the reverse sweep for
  their lengths only: at the top level, in a ``while`` loop, in a helper called
  once, in a helper called in a loop under a branch.
* A helper whose ``for`` or ``while`` loop keeps a tape (a list of any length)
  called in a loop: the caller's tape of those tapes.

Each ``s2s-ad grad -o`` module is imported and differentiated again with
``grad``, ``jvp`` and ``vjp``; every second derivative is compared with
central differences (float64) of the module's gradient, itself checked first
against central differences of the function; the second module written by
the CLI runs in a fresh interpreter. ``s2s-ad hessian`` of a function of a
list parameter needs no ``--length``: one module, every length, run in a
fresh interpreter against central differences of the gradient."""

import inspect
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import higher_lists_src as src
import s2s_ad
from s2s_ad import cli
from tests.modules import import_source

H = 1e-5

CASES = {
    # name: points (x first, then ints)
    "rows_in_loop": [(0.3, 1), (0.3, 4), (-0.6, 3)],
    "helper_list_in_loop": [(0.3, 4), (-0.7, 2)],
    "while_rows": [(0.3, 3), (0.9, 2)],
    "helper_rows_once": [(0.3, 4, 3), (-0.7, 2, 5), (0.5, 3, 0)],
    "helper_rows_in_loop_and_branch": [(0.3, 4, 3), (-0.7, 2, 5)],
    "while_helper_in_loop": [(0.4, 3), (-0.2, 1), (2.5, 4)],
    "for_helper_in_loop": [(0.3, 4), (-0.8, 0), (0.6, 6)],
    # the helper's outer loop runs twice (constant): its tape holds lists of a
    # known length beside lists of any length, returned beside its tuple value
    "helper_rows_fixed_count": [(0.3, 3), (-0.6, 1), (0.5, 0)],
}


def _write(tmp_path, name: str) -> object:
    out = tmp_path / f"hl_{name}.py"
    assert cli.main(["grad", f"{src.__file__}:{name}", "--wrt", "x", "-o", str(out)]) == 0
    return getattr(import_source(str(tmp_path), out.read_text(encoding="utf-8"), f"hl_{name}"),
                   f"grad_{name}")


def _fd(f, point):
    up, down = list(point), list(point)
    up[0] += H
    down[0] -= H
    return (f(*up) - f(*down)) / (2 * H)


def _checked(g, name, point):
    """The file's gradient, after checking it against central differences of f."""
    f = getattr(src, name)
    np.testing.assert_allclose(g(*point), _fd(f, point), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_file_differentiated_again(name, tmp_path):
    g = _write(tmp_path, name)
    second = s2s_ad.grad(g, wrt="x")
    tangent = s2s_ad.jvp(g, wrt="x")
    for point in CASES[name]:
        _checked(g, name, point)
        want = _fd(g, point)
        np.testing.assert_allclose(second(*point), want, rtol=1e-5, atol=1e-7,
                                   err_msg=f"{name} at {point}")
        # (the tangent keyword is the last: `dx` may be taken in the module)
        keyword = list(inspect.signature(tangent).parameters)[-1]
        value, slope = tangent(*point, **{keyword: 1.0})
        np.testing.assert_allclose(value, g(*point), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(slope, want, rtol=1e-5, atol=1e-7)
        _, back = s2s_ad.vjp(g, *point)
        np.testing.assert_allclose(back(2.0)[0], 2.0 * want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", ["helper_rows_in_loop_and_branch", "while_helper_in_loop"])
def test_the_second_module_runs_in_a_fresh_interpreter(name, tmp_path):
    first = tmp_path / "hl_first.py"
    assert cli.main(["grad", f"{src.__file__}:{name}", "--wrt", "x", "-o", str(first)]) == 0
    second = tmp_path / "hl_second.py"
    assert cli.main(["grad", f"{first}:grad_{name}", "--wrt", "x", "-o", str(second)]) == 0
    g = getattr(import_source(str(tmp_path), first.read_text(encoding="utf-8"), "hl_first_mod"),
                f"grad_{name}")
    for point in CASES[name]:
        script = (f"import json, sys\nsys.path.insert(0, {str(tmp_path)!r})\n"
                  f"from hl_second import grad_grad_{name} as h\n"
                  "assert 's2s_ad' not in sys.modules\n"
                  f"print(json.dumps(h(*{list(point)!r})))\n")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        run = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True,
                             text=True, cwd=str(tmp_path), env=env, timeout=120)
        assert run.returncode == 0, run.stderr
        _checked(g, name, point)
        np.testing.assert_allclose(json.loads(run.stdout), _fd(g, point), rtol=1e-5, atol=1e-7)


def test_a_function_calling_the_file_in_a_loop(tmp_path, monkeypatch):
    """The file's gradient called by a function of yours, in a loop and a branch."""
    g = _write(tmp_path, "while_helper_in_loop")
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "hl_caller.py").write_text(
        "from hl_while_helper_in_loop import grad_while_helper_in_loop as g\n\n\n"
        "def caller(x, n: int):\n    s = 0.0\n    for k in range(2):\n"
        "        if x > 0.0:\n            s = s + g(x + 0.1 * k, n) * x\n"
        "        else:\n            s = s - g(x, n)\n    return s\n", encoding="utf-8")
    caller = import_source(str(tmp_path), (tmp_path / "hl_caller.py").read_text(),
                           "hl_caller").caller
    d = s2s_ad.grad(caller, wrt="x")
    for point in [(0.4, 3), (-0.3, 2)]:
        _checked(g, "while_helper_in_loop", point)
        np.testing.assert_allclose(d(*point), _fd(caller, point), rtol=1e-5, atol=1e-7)


def _fd_hessian_of(grad_fn, c, x):
    """Central differences of the (checked) gradient ``(dc, dx)``: the blocks
    of the Hessian with respect to the list ``c`` and the number ``x``."""
    n = len(c)
    cols = []
    for k in range(n + 1):
        up_c, down_c, up_x, down_x = list(c), list(c), x, x
        if k < n:
            up_c[k] += H
            down_c[k] -= H
        else:
            up_x, down_x = x + H, x - H
        gu, gd = grad_fn(up_c, up_x), grad_fn(down_c, down_x)
        cols.append((np.append(gu[0], gu[1]) - np.append(gd[0], gd[1])) / (2 * H))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("target,fn", [("examples/horner.py:horner", None),
                                       ("tests/higher_lists_src.py:list_through_helper",
                                        src.list_through_helper)])
def test_cli_hessian_of_a_list_parameter_without_length(target, fn, tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if fn is None:
        from examples.horner import horner as fn
    out = tmp_path / "hess_list.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "hessian", target, "--wrt", "c,x",
                           "-o", str(out)], cwd=root, capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, PYTHONPATH=root))
    assert done.returncode == 0, done.stderr
    assert "len(c) !=" not in out.read_text(encoding="utf-8")  # no per-length check
    grad_fn = s2s_ad.grad(fn, wrt=("c", "x"))
    api = s2s_ad.hessian(fn, wrt=("c", "x"))
    for c, x in [([0.5, -1.2, 2.0], 0.7), ([0.3, 0.1, -0.4, 1.5, 0.9], -0.6), ([1.1], 0.4)]:
        # the gradient itself against central differences of f
        for k in range(len(c)):
            up, down = list(c), list(c)
            up[k] += H
            down[k] -= H
            np.testing.assert_allclose(grad_fn(c, x)[0][k], (fn(up, x) - fn(down, x)) / (2 * H),
                                       rtol=1e-6, atol=1e-8)
        script = ("import json, sys\nfrom hess_list import *\n"
                  f"h = hessian_{fn.__name__}({c!r}, {x!r})\n"
                  "assert 's2s_ad' not in sys.modules\n"
                  "import numpy as np\n"
                  "print(json.dumps(np.block([[np.asarray(h[0][0]), np.asarray(h[0][1])[:, None]],"
                  " [np.asarray(h[1][0])[None, :], np.asarray([[h[1][1]]])]]).tolist()))\n")
        run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                             text=True, timeout=120, env={"PATH": os.environ.get("PATH", "")})
        assert run.returncode == 0, run.stderr
        want = _fd_hessian_of(grad_fn, c, x)
        np.testing.assert_allclose(np.array(json.loads(run.stdout)), want, rtol=1e-5, atol=1e-6)
        (Hcc, Hcx), (Hxc, Hxx) = api(c, x)
        got = np.block([[np.asarray(Hcc), np.asarray(Hcx)[:, None]],
                        [np.asarray(Hxc)[None, :], np.asarray([[Hxx]])]])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
