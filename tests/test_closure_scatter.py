"""Closure under differentiation for the adjoints of indexed reads: a NumPy
gradient module that scatters an adjoint back into a slice (``scatter(g, x,
slice(1, None))``), adds into one in place (``add_scattered``), or adds into
an adjoint by index in its reverse loop (``dx = np.zeros_like(x) + 0.0``,
``dx[i] += g``), written to a file and read back under a new name, is
differentiated again (s2s_ad/frontend/scatter_calls.py): its JVP against
central differences of the file's gradient along a random direction, the
gradient of Σ c · (the file's gradient) and the VJP of the file's gradient
against central differences of that sum — in every position
(tests/closure_scatter_src.py: top level, a loop, both sides of a branch,
helpers, a helper of a helper, a helper called in a loop) and through the
CLI in a fresh interpreter. An integer-array index, whose repeated elements
the helpers add up (``scatter(g, x, idx)``, ``add_at(dy, parents[i], g)``),
is read back as the primitive ``own.scatter``: the repeats still add up."""

from __future__ import annotations

import importlib
import inspect
import os
import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
from s2s_ad.higher import origin
from tests import closure_scatter_src as S
from tests.array_oracle import fd_gradient
from tests.modules import import_source, run_generated

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RNG = np.random.default_rng(1417)

CASES = [
    (S.sliced, [RNG.normal(size=6)]),
    (S.in_loop, [RNG.normal(size=5), 3]),
    (S.in_branch, [np.abs(RNG.normal(size=5)) + 0.1]),
    (S.in_branch, [-np.abs(RNG.normal(size=5)) - 0.1]),
    (S.inner, [RNG.normal(size=5)]),
    (S.helper_of_helper, [RNG.normal(size=7)]),
    (S.helper_in_loop, [RNG.normal(size=5), 3]),
    (S.by_element, [RNG.normal(size=5), 4]),
    (S.rows, [RNG.normal(size=(3, 4))]),
    # integer-array indices that repeat elements, whose adjoints add up:
    # `scatter(g, x, idx)` and `add_at(dy, parents[i], g)` read back
    (S.fancy, [RNG.normal(size=5), np.array([0, 2, 2, 4, 2])]),
    (S.fancy_loop, [RNG.normal(size=5), np.array([3, 1, 3, 0])]),
    (S.by_parent, [RNG.uniform(0.5, 1.5, size=6), np.array([-1, 0, 0, 1, 1, 4])]),
    # `dd = scatter(...)`, summed into in place, then `db + unbroadcast(dd, b)`:
    # unbroadcast may return dd itself, which the sum then copies (it was
    # refused where the file is a helper of the probe: "dd must own its array")
    (S.passed_through, [RNG.normal(size=(2, 1)), RNG.normal(size=(2, 2))]),
    # the same adjoint then bound to another name (`dz = dd`) and read after by
    # `-unbroadcast(dd, m)`: `dz = np.copy(dd)` read back
    (S.aliased_after, [RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))]),
]


def _file_gradient(fn, args, folder, label):
    """The gradient module of ``fn`` (its first parameter, an array) loaded
    from its file under a new name, checked against central differences of ``fn``."""
    first = list(inspect.signature(fn).parameters)[0]
    text = s2s_ad.gradient_source(fn, wrt=first, arrays=[first])
    g = getattr(import_source(str(folder), text, label), "grad_" + fn.__name__)
    assert origin(g) is None
    np.testing.assert_allclose(g(*args), fd_gradient(fn, args, 0), rtol=1e-6, atol=1e-8)
    return g, first


@pytest.mark.parametrize("k", range(len(CASES)),
                         ids=[f"{f.__name__}-{k}" for k, (f, _) in enumerate(CASES)])
def test_gradient_file_reading_slices_back_is_differentiated(k, tmp_path):
    fn, args = CASES[k]
    label = f"scatter_file_{fn.__name__}_{k}"
    g, first = _file_gradient(fn, args, tmp_path, label)
    v = RNG.normal(size=np.shape(args[0]))
    h = 1e-5
    along = (g(args[0] + h * v, *args[1:]) - g(args[0] - h * v, *args[1:])) / (2 * h)
    tol = dict(rtol=1e-5, atol=1e-6 * max(1.0, float(np.max(np.abs(along)))))
    # jvp of the file's gradient: H v
    forward = s2s_ad.jvp(g, wrt=first)
    key = list(inspect.signature(forward).parameters)[-1]
    value, tangent = forward(*args, **{key: v})
    np.testing.assert_allclose(value, g(*args), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(tangent, along, **tol)
    # vjp of the file's gradient, and grad of Σ c · (the file's gradient) through a
    # function calling it: H c, against central differences of that sum
    c = RNG.normal(size=np.shape(args[0]))
    want = fd_gradient(lambda a: float(np.sum(c * g(a, *args[1:]))), [args[0]], 0)
    back = s2s_ad.vjp(g, *args)[1](c)
    np.testing.assert_allclose(back[0], want, **tol)
    names = list(inspect.signature(fn).parameters)
    params = ", ".join(n + (": int" if isinstance(a, int) else "") for n, a in zip(names, args))
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    try:
        probe = import_source(str(tmp_path), f"import numpy as np\nfrom {label} import grad_"
                              f"{fn.__name__}\n\n\ndef probe({params}, c):\n    return np.sum("
                              f"c * grad_{fn.__name__}({', '.join(names)}))\n", label + "_probe")
        got = s2s_ad.grad(probe.probe, wrt=first)(*args, c)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(label, None)
    np.testing.assert_allclose(got, want, **tol)


def _cli(folder, *argv):
    done = subprocess.run([sys.executable, "-m", "s2s_ad", *argv], cwd=str(folder),
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=f"{folder}{os.pathsep}{ROOT}"))
    return done


def test_cli_jvp_and_gradient_of_a_gradient_file_with_helper_pairs(tmp_path):
    """`s2s-ad grad -o` of a helper of a helper reading slices, `s2s-ad jvp -o`
    of that file, and `s2s-ad grad -o` of a probe summing over it: both run in a
    fresh interpreter without s2s-ad, against central differences of the file's gradient."""
    src = os.path.join(ROOT, "tests", "closure_scatter_src.py")
    for argv in (("grad", src + ":helper_of_helper", "--wrt", "v", "-o", "hh_grad.py"),
                 ("jvp", "hh_grad.py:grad_helper_of_helper", "--wrt", "v", "-o", "hh_jvp.py")):
        done = _cli(tmp_path, *argv)
        assert done.returncode == 0, done.stderr
    text = (tmp_path / "hh_grad.py").read_text(encoding="utf-8")
    assert "scatter(" in text and "add_scattered(" in text and "def outer_bwd(" in text
    v, direction = RNG.normal(size=7), RNG.normal(size=7)
    probe = ("import inspect, sys, numpy as np, hh_jvp\n"
             f"v = np.array({v.tolist()!r})\n"
             "f = hh_jvp.jvp_grad_helper_of_helper\n"
             "key = list(inspect.signature(f).parameters)[-1]  # the tangent of v\n"
             f"_, t = f(v, **{{key: np.array({direction.tolist()!r})}})\n"
             "assert 's2s_ad' not in sys.modules\n"
             "print(repr(np.asarray(t).tolist()))\n")
    run = subprocess.run([sys.executable, "-c", probe], cwd=str(tmp_path), capture_output=True,
                         text=True, env={"PATH": os.environ.get("PATH", "")}, timeout=120)
    assert run.returncode == 0, run.stderr + (tmp_path / "hh_jvp.py").read_text(encoding="utf-8")
    tangent = np.array(eval(run.stdout))  # a list of floats printed by repr
    g = _file_gradient(S.helper_of_helper, [v], tmp_path, "hh_grad_again")[0]
    h = 1e-5
    along = (g(v + h * direction) - g(v - h * direction)) / (2 * h)
    np.testing.assert_allclose(tangent, along, rtol=1e-5,
                               atol=1e-6 * max(1.0, np.max(np.abs(along))))
    # the gradient of Σ c · ∇f, from a probe importing the file
    (tmp_path / "hh_probe.py").write_text("import numpy as np\nfrom hh_grad import "
                                          "grad_helper_of_helper\n\n\ndef probe(v, c):\n"
                                          "    return np.sum(c * grad_helper_of_helper(v))\n",
                                          encoding="utf-8")
    done = _cli(tmp_path, "grad", "hh_probe.py:probe", "--wrt", "v", "-o", "hh_second.py")
    assert done.returncode == 0, done.stderr
    c = RNG.normal(size=7)
    got = run_generated(tmp_path, "hh_second", "grad_probe", [v, c])[0]
    want = fd_gradient(lambda a: float(np.sum(c * g(a))), [v], 0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * max(1.0, np.max(np.abs(want))))


def test_an_integer_array_index_read_back_keeps_repeated_elements_summed(tmp_path):
    """``scatter(g, x, idx)`` with ``idx`` an integer array that repeats an
    element adds the repeats up, which an assignment would not: read back it
    is the primitive ``own.scatter``, not a subscript write."""
    idx = np.array([0, 2, 2, 4])
    g, _ = _file_gradient(S.fancy, [RNG.normal(size=5), idx], tmp_path, "fancy_grad")
    graph = s2s_ad.lower(g, arrays=["x", "idx"])
    prims = [op.prim for op in graph.body.ops]
    assert "own.scatter" in prims and "array.setitem" not in prims, prims
    x, v = RNG.normal(size=5), RNG.normal(size=5)
    _, tangent = s2s_ad.jvp(g, wrt="x")(x, idx, dx_1=v)
    np.testing.assert_allclose(tangent, 2 * np.bincount(idx, minlength=5) * v, rtol=1e-12)
