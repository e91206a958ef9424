"""np.diff, np.polyval, np.interp (frontend/numpy_forms.py), x.item() (the
`array.item` rule) and `for v in x.tolist():`, against central differences
(tests/array_oracle.py) through `grad`, `vjp`, `jvp`, in helpers and loops,
and the `grad -o` file run in a fresh interpreter without s2s-ad."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
from s2s_ad.errors import SourceError
from tests import numpy_forms_src as N
from tests.array_oracle import fd_gradient, make_function
from tests.soak import rows_beyond

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RNG = np.random.default_rng(9091)
XP = np.array([-1.0, -0.2, 0.4, 1.1, 2.0, 3.5])


def _between_knots(n, knots, rng):
    """Points away from the knots (where the interpolant has a kink)."""
    x = rng.uniform(knots[0] - 1.0, knots[-1] + 1.0, size=n)
    near = np.min(np.abs(x[:, None] - knots[None, :]), axis=1) < 1e-3
    return np.where(near, x + 0.01, x)


CASES = [
    (N.roughness, lambda: [RNG.normal(size=(3, 6))], (0,)),
    (N.roughness, lambda: [RNG.normal(size=7)], (0,)),
    (N.roughness_axis0, lambda: [RNG.normal(size=(4, 3))], (0,)),
    (N.roughness_axis0, lambda: [RNG.normal(size=(2, 4, 3))], (0,)),
    (N.energy, lambda: [RNG.normal(size=(2, 5))], (0,)),
    (N.energy_of_energy, lambda: [RNG.normal(size=6)], (0,)),
    (N.diff_in_loop, lambda: [RNG.normal(size=5), 3], (0,)),
    (N.poly_literal, lambda: [RNG.normal(size=(2, 3))], (0,)),
    (N.poly_array, lambda: [RNG.normal(size=4), RNG.normal(size=5)], (0, 1)),
    (N.poly_array, lambda: [RNG.normal(size=1), RNG.normal(size=(2, 2))], (0, 1)),
    (N.poly_helper, lambda: [RNG.normal(size=3), RNG.normal(size=4)], (0, 1)),
    (N.interp_all, lambda: [_between_knots(9, XP, RNG), XP.copy(), RNG.normal(size=6)], (0, 1, 2)),
    (N.interp_fixed_knots, lambda: [_between_knots(8, N.KNOTS, RNG), RNG.normal(size=5)], (0, 1)),
    (N.interp_in_loop, lambda: [_between_knots(6, N.KNOTS - 0.25, RNG) - 0.05,
                                RNG.normal(size=5), 3], (1,)),
    (N.items, lambda: [RNG.normal(size=3), RNG.normal(size=(2, 3))], (0, 1)),
    (N.item_helper, lambda: [RNG.normal(size=3)], (0,)),
    (N.tolist_loop, lambda: [RNG.normal(size=5)], (0,)),
    (N.tolist_helper, lambda: [RNG.normal(size=4), RNG.normal(size=4)], (0, 1)),
    (N.norms, lambda: [RNG.normal(size=5)], (0,)),
    (N.norms, lambda: [RNG.normal(size=(3, 4))], (0,)),
    (N.vector_norms, lambda: [RNG.normal(size=4)], (0,)),
    (N.norm_helper, lambda: [RNG.normal(size=(4, 2))], (0,)),
    (N.norm_helper, lambda: [RNG.normal(size=6)], (0,)),
    (N.norm_in_loop, lambda: [RNG.normal(size=(2, 3)), 3], (0,)),
    (N.norm_in_loop, lambda: [RNG.normal(size=3), 3], (0,)),
    (N.extremes, lambda: [RNG.normal(size=4)], (0,)),
    (N.extremes, lambda: [RNG.normal(size=4) + 1.0], (0,)),
    (N.extremes_helper, lambda: [RNG.normal(size=3)], (0,)),
    (N.extremes_in_loop, lambda: [RNG.normal(size=5), 4], (0,)),
]
IDS = [f"{f.__name__}-{i}" for i, (f, _, _) in enumerate(CASES)]


@pytest.mark.parametrize("fn,make,wrt", CASES, ids=IDS)
def test_gradient_vjp_jvp_against_central_differences(fn, make, wrt):
    args = make()
    want = [fd_gradient(fn, args, i) for i in wrt]
    got = s2s_ad.grad(fn, wrt=tuple(wrt))(*args)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7)
    value, back = s2s_ad.vjp(fn, *args)
    assert value == pytest.approx(fn(*args), rel=1e-12, abs=1e-12)
    cot = back(1.0)
    for i, w in zip(wrt, want):
        np.testing.assert_allclose(cot[i], w, rtol=1e-5, atol=1e-7)
    params = list(inspect.signature(fn).parameters)
    tangents = {f"d{params[i]}": RNG.normal(size=np.shape(args[i])) for i in wrt}
    value, tangent = s2s_ad.jvp(fn, wrt=tuple(params[i] for i in wrt))(*args, **tangents)
    assert value == pytest.approx(fn(*args), rel=1e-12, abs=1e-12)
    expect = sum(float(np.sum(w * tangents[f"d{params[i]}"])) for i, w in zip(wrt, want))
    assert tangent == pytest.approx(expect, rel=1e-5, abs=1e-7)


def test_interp_equals_numpy_and_takes_the_left_derivative_at_knots():
    fp = RNG.normal(size=6)
    x = np.concatenate([RNG.uniform(-3.0, 5.0, size=40), XP])
    value, _ = s2s_ad.vjp(N.interp_all, x, XP, fp)
    assert value == pytest.approx(np.sum(np.interp(x, XP, fp) ** 2), rel=1e-12)
    at = XP.copy()  # every knot, the first and last included
    got = s2s_ad.grad(N.interp_all, wrt="x")(at, XP, fp)
    left = np.array([(N.interp_all(at, XP, fp) - N.interp_all(at - 1e-7 * e, XP, fp)) / 1e-7
                     for e in np.eye(len(at))])
    np.testing.assert_allclose(got, left, rtol=1e-4, atol=1e-5)


def test_diff_and_polyval_values_equal_numpy():
    x = RNG.normal(size=(3, 5))
    f = make_function("def f(x):\n    return np.diff(x, n=2, axis=1) + 0.0\n",
                      env={"np": np})
    value, _ = s2s_ad.vjp(f, x)
    np.testing.assert_array_equal(value, np.diff(x, n=2, axis=1))
    g = make_function("def g(p, x):\n    return np.polyval([1.5, -2.0, 0.25], x) + "
                      "np.polyval(p, x)\n", name="g", env={"np": np})
    p = RNG.normal(size=3)
    value, _ = s2s_ad.vjp(g, p, x)
    np.testing.assert_allclose(value, np.polyval([1.5, -2.0, 0.25], x) + np.polyval(p, x),
                               rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("body, message", [
    ("np.sum(np.diff(x, n=k))", "`n` of `np.diff` must be a constant int"),
    ("np.sum(np.diff(x, out=x))", "the keyword `out` is not supported"),
    ("np.sum(np.interp(x, x, x, left=0.0))", "the keyword `left` is not supported"),
    ("np.sum(x).item(0)", r"`\.item\(\)` is supported without arguments"),
])
def test_refusals_are_located(body, message):
    f = make_function(f"def f(x, k: int = 1):\n    return {body}\n", env={"np": np})
    with pytest.raises(SourceError, match=message):
        s2s_ad.grad(f, wrt="x")(RNG.normal(size=4))


def test_norms_raise_where_numpy_does_or_where_no_matrix_rule_exists():
    for fn, x in [(N.norms, RNG.normal(size=(2, 2, 2))), (N.vector_norms, RNG.normal(size=(2, 2)))]:
        with pytest.raises(ValueError) as numpy_says:
            fn(x) if fn is N.norms else np.linalg.norm(x, 3)
        with pytest.raises(ValueError) as generated_says:
            s2s_ad.grad(fn)(x)
        if fn is N.norms:
            assert str(generated_says.value) == str(numpy_says.value)
        else:
            assert "not differentiated by s2s-ad" in str(generated_says.value)


def test_norm_values_equal_numpy_for_vectors_and_matrices():
    for x in (RNG.normal(size=6), RNG.normal(size=(3, 5))):
        value, _ = s2s_ad.vjp(N.norms, x)
        assert value == pytest.approx(N.norms(x), rel=1e-13)


def test_builtin_max_of_elements_ties_as_python_and_refuses_rows():
    x = np.array([1.5, 1.5, 0.2])
    g = s2s_ad.grad(N.pick)(x)  # max(1.5, 1.5) is the first: x[0]; min(1.5, 0.2) is x[2]
    np.testing.assert_array_equal(g, [1.0, 0.0, -1.0])
    with pytest.raises(ValueError, match="ambiguous"):
        s2s_ad.grad(N.pick)(RNG.normal(size=(3, 2)))


def test_a_norm_in_a_comprehension_without_axis_stays_refused():
    f = make_function("def f(x):\n    return sum([np.linalg.norm(r, 1) for r in x])\n",
                      env={"np": np})
    with pytest.raises(SourceError, match="give `axis`"):
        s2s_ad.grad(f)(RNG.normal(size=(2, 3)))


def test_tolist_of_a_matrix_raises_as_generated():
    with pytest.raises(AssertionError, match="1-D array"):
        s2s_ad.grad(N.tolist_loop)(RNG.normal(size=(2, 2)))


def _fresh(folder, probe: str) -> str:
    probe = probe + "\nassert 's2s_ad' not in sys.modules\n"
    run = subprocess.run([sys.executable, "-c", probe], cwd=str(folder), capture_output=True,
                         text=True, timeout=120,
                         env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(folder)})
    assert run.returncode == 0, run.stderr
    return run.stdout


@pytest.mark.parametrize("name, shapes, wrt", rows_beyond([
    ("energy_of_energy", [(6,)], "x"),
    ("norm_helper", [(3, 4)], "x"),
    ("extremes_helper", [(3,)], "x --array x"),
    ("poly_helper", [(3,), (4,)], "p,x"),
    ("interp_all", [None, (6,), (6,)], "x,xp,fp"),
    ("item_helper", [(3,)], "x"),
    ("tolist_helper", [(4,), (4,)], "x,y"),
], 3))  # the last four with --soak: each checked in-process (CASES) in the default run
def test_cli_gradient_file_in_a_fresh_interpreter(name, shapes, wrt, tmp_path):
    out = tmp_path / f"g_{name}.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           f"tests/numpy_forms_src.py:{name}", "--wrt",
                           *(wrt.split(" ", 1)[0] + ",", *wrt.split(" ")[1:]), "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert done.returncode == 0, done.stderr
    fn = getattr(N, name)
    args = [(_between_knots(7, XP, RNG) if s is None else
             np.sort(RNG.normal(size=s)) * 2.0 if name == "interp_all" and s == (6,) and i == 1
             else RNG.normal(size=s)) for i, s in enumerate(shapes)]
    if name == "interp_all":
        args[1] = XP.copy()
    printed = _fresh(tmp_path, "import sys\nimport numpy as np\n"
                     f"import g_{name} as g\n"
                     f"args = [np.array(a) for a in {[a.tolist() for a in args]!r}]\n"
                     f"print(repr([np.asarray(d).tolist() for d in g.grad_{name}(*args)]))")
    got = eval(printed)
    for i, d in enumerate(got):
        np.testing.assert_allclose(d, fd_gradient(fn, args, i), rtol=1e-5, atol=1e-7)
