"""Third derivatives. ``s2s-ad grad -o`` twice writes the second gradient
module; it is in the subset, so ``s2s_ad.grad`` of it, and ``s2s-ad grad``
of its file (run in a fresh interpreter), give the third derivative: each
compared with central differences (float64) of the second module, itself
checked against central differences of the first, itself checked against
central differences of the function (tests/third_src.py: straight-line
code, a ``for`` loop, both sides of a branch, a ``while`` loop whose tape is
read back as a stack at a counter, a helper called in a loop). The
functions the higher-order API returns (``grad(grad(f))``, ``hessian``,
``hvp``, ``jvp(grad(f))``) call generated modules and are not differentiated
again: refused with a message naming the file route."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
import third_src as src
from s2s_ad import cli
from s2s_ad.higher import HigherOrderError
from tests.modules import import_source

H = 1e-4

CASES = {
    "straight": [(0.7, 1.3), (-0.4, 0.9)],
    "looped": [(0.6, 4), (0.3, 1)],
    "branched": [(0.8,), (0.2,)],
    "whiled": [(0.4,), (1.1,), (2.9,)],
    "helper_in_loop": [(0.6, 3), (-0.5, 2)],
}


def _fd(f, point, h=H):
    up, down = list(point), list(point)
    up[0] += h
    down[0] -= h
    return (f(*up) - f(*down)) / (2 * h)


def _modules(tmp_path, name):
    first = tmp_path / f"t1_{name}.py"
    assert cli.main(["grad", f"{src.__file__}:{name}", "--wrt", "x", "-o", str(first)]) == 0
    second = tmp_path / f"t2_{name}.py"
    assert cli.main(["grad", f"{first}:grad_{name}", "--wrt", "x", "-o", str(second)]) == 0
    g1 = getattr(import_source(str(tmp_path), first.read_text(encoding="utf-8"), f"t1m_{name}"),
                 f"grad_{name}")
    g2 = getattr(import_source(str(tmp_path), second.read_text(encoding="utf-8"), f"t2m_{name}"),
                 f"grad_grad_{name}")
    return second, g1, g2


@pytest.mark.parametrize("name", sorted(CASES))
def test_third_derivative_from_the_second_module(name, tmp_path):
    second, g1, g2 = _modules(tmp_path, name)
    third = s2s_ad.grad(g2, wrt="x")
    out = tmp_path / f"t3_{name}.py"
    assert cli.main(["grad", f"{second}:grad_grad_{name}", "--wrt", "x", "-o", str(out)]) == 0
    f = getattr(src, name)
    for point in CASES[name]:
        np.testing.assert_allclose(g1(*point), _fd(f, point, 1e-6), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(g2(*point), _fd(g1, point), rtol=1e-6, atol=1e-7)
        want = _fd(g2, point)
        np.testing.assert_allclose(third(*point), want, rtol=1e-5, atol=1e-6,
                                   err_msg=f"{name} at {point}")
        script = (f"import json, sys\nsys.path.insert(0, {str(tmp_path)!r})\n"
                  f"from t3_{name} import grad_grad_grad_{name} as h\n"
                  "assert 's2s_ad' not in sys.modules\n"
                  f"print(json.dumps(h(*{list(point)!r})))\n")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        run = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True,
                             text=True, cwd=str(tmp_path), env=env, timeout=120)
        assert run.returncode == 0, run.stderr
        np.testing.assert_allclose(json.loads(run.stdout), want, rtol=1e-5, atol=1e-6)


def test_the_api_second_derivatives_are_not_differentiated_again():
    f = src.straight
    made = [s2s_ad.grad(s2s_ad.grad(f, wrt=0), wrt=0), s2s_ad.hessian(f, wrt=0),
            s2s_ad.hvp(f, wrt=0), s2s_ad.jvp(s2s_ad.grad(f, wrt=0), wrt=0)]
    np.testing.assert_allclose(made[0](0.7, 1.3), made[1](0.7, 1.3), rtol=1e-12)
    for fn in made:
        for again in (lambda: s2s_ad.grad(fn, wrt=0), lambda: s2s_ad.jvp(fn, wrt=0),
                      lambda: s2s_ad.hvp(fn, wrt=0), lambda: s2s_ad.hessian(fn, wrt=0),
                      lambda: s2s_ad.vjp(fn, 0.7, 1.3)):
            with pytest.raises(HigherOrderError, match="s2s-ad grad g1.py:grad_f -o g2.py"):
                again()
