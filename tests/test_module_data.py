"""Module-level data read by the function differentiated (docs/calls.md,
"Module-level data"): arrays and structures of arrays a module defines
(`DATA`, `TARGET`, `LAYERS = [(W1, b1), ...]`) are constants of the gradient,
keyword-only parameters of the generated code read from the module on every
call, directly, in helpers, helpers of helpers, nested functions and
lambdas, loops and branches. Every gradient is compared with central
differences of the original function (tests/array_oracle.py), through
`grad`, `vjp`, `jvp`, `value_and_grad`, `hvp`, `hessian`, and the `grad -o`
file run in a fresh interpreter without s2s-ad."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
from s2s_ad.errors import SourceError
from tests import module_data_src as M
from tests.array_oracle import fd_gradient
from tests.soak import beyond

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
W = np.array([0.3, -0.2, 0.5])

# (function, arguments after the differentiated array)
CASES = [
    (M.loss, ()),
    (M.loss_helper, ()),
    (M.loss_helper_of_helper, ()),
    (M.loss_local_shadow, ()),
    (M.mlp, ()),
    (M.mlp_helper, ()),
    (M.affine, ()),
    (M.in_loop, (3,)),
    (M.in_branch, ()),
    (M.nested, ()),
    (M.nested_helper, ()),
    (M.with_lambda, ()),
    (M.module_lambda, ()),
]
IDS = [f.__name__ if f.__name__ != "<lambda>" else "module_lambda" for f, _ in CASES]


def _fd(fn, rest):
    return fd_gradient(lambda w: fn(w, *rest), [W.copy()], 0)


@pytest.mark.parametrize("fn,rest", CASES, ids=IDS)
def test_gradient_against_central_differences(fn, rest):
    np.testing.assert_allclose(s2s_ad.grad(fn, wrt=0)(W, *rest), _fd(fn, rest),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn,rest", CASES, ids=IDS)
def test_vjp_and_value_and_grad(fn, rest):
    value, back = s2s_ad.vjp(fn, W, *rest)
    assert value == pytest.approx(fn(W, *rest), rel=1e-12)
    np.testing.assert_allclose(back(1.0)[0], _fd(fn, rest), rtol=1e-6, atol=1e-8)
    value, grad = s2s_ad.value_and_grad(fn, wrt=0)(W, *rest)
    assert value == pytest.approx(fn(W, *rest), rel=1e-12)
    np.testing.assert_allclose(grad, _fd(fn, rest), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn", [M.loss_helper, M.mlp_helper, M.nested_helper, M.affine])
def test_jvp_hvp_hessian(fn):
    name = "x" if fn in (M.mlp_helper, M.affine) else "w"
    v = np.array([0.4, -1.0, 0.7])
    value, tangent = s2s_ad.jvp(fn)(W, **{"d" + name: v})
    assert value == pytest.approx(fn(W), rel=1e-12)
    assert tangent == pytest.approx(float(_fd(fn, ()) @ v), rel=1e-6, abs=1e-8)
    g = s2s_ad.grad(fn)
    H = np.array([fd_gradient(lambda w: g(w)[i], [W.copy()], 0) for i in range(3)])
    np.testing.assert_allclose(s2s_ad.hvp(fn)(W, v), H @ v, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(s2s_ad.hessian(fn)(W), H, rtol=1e-5, atol=1e-7)


def test_a_module_array_changed_after_the_gradient_was_made_is_seen():
    """`DATA *= 2` and `DATA = other` after `grad` was asked: the gradient
    reads the module's value when it runs, as the function does."""
    g = s2s_ad.grad(M.loss_helper)
    vjp_value = s2s_ad.vjp(M.loss_helper, W)[0]
    saved = M.DATA
    try:
        M.DATA = saved.copy()
        M.DATA *= 2.0
        np.testing.assert_allclose(g(W), _fd(M.loss_helper, ()), rtol=1e-6, atol=1e-8)
        M.DATA = np.cos(saved)
        np.testing.assert_allclose(g(W), _fd(M.loss_helper, ()), rtol=1e-6, atol=1e-8)
        assert s2s_ad.vjp(M.loss_helper, W)[0] == pytest.approx(M.loss_helper(W))
        assert s2s_ad.vjp(M.loss_helper, W)[0] != pytest.approx(vjp_value)
        # an array of another shape is the same code
        M.DATA = np.ones((4, 3))
        saved_target, M.TARGET = M.TARGET, np.arange(4.0)
        try:
            np.testing.assert_allclose(g(W), _fd(M.loss_helper, ()), rtol=1e-6, atol=1e-8)
        finally:
            M.TARGET = saved_target
    finally:
        M.DATA = saved


def test_a_module_list_of_layers_changed_in_place_is_seen():
    g = s2s_ad.grad(M.mlp)
    W0, b0 = M.LAYERS[0]
    saved = W0.copy()
    try:
        W0 *= -1.5
        np.testing.assert_allclose(g(W), _fd(M.mlp, ()), rtol=1e-6, atol=1e-8)
    finally:
        W0[...] = saved


def test_a_module_structure_of_another_length_asks_for_the_gradient_again():
    g = s2s_ad.grad(M.mlp)
    saved = M.LAYERS
    try:
        M.LAYERS = saved[:1] + [(np.eye(4), np.zeros(4))] + saved[1:]
        with pytest.raises(TypeError, match="reads the module-level `LAYERS`.*ask for the gradient"):
            g(W)
        np.testing.assert_allclose(s2s_ad.grad(M.mlp)(W), _fd(M.mlp, ()), rtol=1e-6, atol=1e-8)
    finally:
        M.LAYERS = saved


def test_module_numbers_stay_constants_and_data_are_no_parameters_to_differentiate():
    x = 0.7
    want = fd_gradient(lambda t: M.with_constants(t), [x], 0)
    assert s2s_ad.grad(M.with_constants)(x) == pytest.approx(float(want), rel=1e-6)
    assert "COEFFS" not in s2s_ad.gradient_source(M.with_constants)
    with pytest.raises(SourceError, match="`DATA` is module-level data loss reads"):
        s2s_ad.grad(M.loss, wrt="DATA")
    text = s2s_ad.gradient_source(M.loss_helper)
    assert "def grad_loss_helper(w, *, DATA, TARGET, dout=1.0):" in text


def _cli(*argv, cwd=ROOT):
    done = subprocess.run([sys.executable, "-m", "s2s_ad", *argv], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
    assert done.returncode == 0, done.stderr
    return done


def _fresh(folder, probe: str) -> str:
    """``probe`` run in a fresh interpreter without s2s-ad (tests/ importable)."""
    probe = probe + "\nassert 's2s_ad' not in sys.modules\n"
    run = subprocess.run([sys.executable, "-c", probe], cwd=str(folder), capture_output=True,
                         text=True, timeout=120,
                         env={"PATH": os.environ.get("PATH", ""),
                              "PYTHONPATH": f"{folder}{os.pathsep}{ROOT}"})
    assert run.returncode == 0, run.stderr
    return run.stdout


@pytest.mark.parametrize("name", beyond(["loss_helper_of_helper", "mlp_helper", "in_loop",
                                         "nested_helper", "module_lambda"], 2))
def test_cli_gradient_file_in_a_fresh_interpreter(name, tmp_path):
    """`s2s-ad grad -o`: the module data are keyword-only parameters; the
    file, imported without s2s-ad, is given the module's values by name
    (the first two in the default run, all five with ``--soak``; each is
    checked in-process in the default run)."""
    out = tmp_path / f"g_{name}.py"
    _cli("grad", f"tests/module_data_src.py:{name}", "-o", str(out))
    fn = getattr(M, name)
    rest = (3,) if name == "in_loop" else ()
    data = [n for n in ("DATA", "TARGET", "LAYERS", "WEIGHTS", "PARAMS")
            if f"{n}," in out.read_text(encoding="utf-8").split(f"def grad_{name}(")[1]
            .split(")")[0] + ","]
    assert data, out.read_text(encoding="utf-8")
    printed = _fresh(tmp_path, "import sys\nimport numpy as np\n"
                     f"import g_{name} as g\nfrom tests import module_data_src as M\n"
                     f"d = g.grad_{name}(np.array({W.tolist()!r}), *{rest!r}, "
                     + ", ".join(f"{n}=M.{n}" for n in data) + ")\n"
                     "print(repr(np.asarray(d).tolist()))")
    np.testing.assert_allclose(eval(printed), _fd(fn, rest), rtol=1e-6, atol=1e-8)


def test_cli_jvp_and_hessian_files_take_the_module_data(tmp_path):
    _cli("hessian", "tests/module_data_src.py:loss_helper", "-o", str(tmp_path / "h_mod.py"))
    _cli("jvp", "tests/module_data_src.py:loss_helper", "-o", str(tmp_path / "j_mod.py"))
    v = [0.4, -1.0, 0.7]
    printed = _fresh(tmp_path, "import sys\nimport numpy as np\nimport h_mod, j_mod\n"
                     "from tests import module_data_src as M\n"
                     f"w = np.array({W.tolist()!r})\n"
                     "H = h_mod.hessian_loss_helper(w, DATA=M.DATA, TARGET=M.TARGET)\n"
                     f"_, t = j_mod.jvp_loss_helper(w, DATA=M.DATA, TARGET=M.TARGET, "
                     f"dw=np.array({v!r}))\n"
                     "print(repr((np.asarray(H).tolist(), float(t))))")
    H, t = eval(printed)
    g = s2s_ad.grad(M.loss_helper)
    want = np.array([fd_gradient(lambda w: g(w)[i], [W.copy()], 0) for i in range(3)])
    np.testing.assert_allclose(H, want, rtol=1e-5, atol=1e-7)
    assert t == pytest.approx(float(_fd(M.loss_helper, ()) @ np.array(v)), rel=1e-6)


SCRIPT = """import numpy as np
import s2s_ad

rng = np.random.default_rng(3)
X = rng.normal(size=(9, 4))
y = rng.normal(size=9)
f = lambda w: np.sum((X @ w - y) ** 2)


def fit(w):
    def pred(v):
        return X @ v
    return np.sum((pred(w) - y) ** 2) + 0.5 * f(w)


w = rng.normal(size=4)
worst = 0.0
for fn in (f, fit):
    g = s2s_ad.grad(fn)(w)
    fd = np.array([(fn(w + 1e-6 * e) - fn(w - 1e-6 * e)) / 2e-6 for e in np.eye(4)])
    worst = max(worst, float(np.max(np.abs(g - fd)) / max(1.0, np.max(np.abs(fd)))))
X = X * 3.0  # rebound after the gradient was made: seen
g = s2s_ad.grad(f)(w)
fd = np.array([(f(w + 1e-6 * e) - f(w - 1e-6 * e)) / 2e-6 for e in np.eye(4)])
worst = max(worst, float(np.max(np.abs(g - fd)) / max(1.0, np.max(np.abs(fd)))))
print(worst)
"""


def test_a_script_lambda_and_nested_function_read_the_scripts_globals(tmp_path):
    (tmp_path / "fit_script.py").write_text(SCRIPT, encoding="utf-8")
    run = subprocess.run([sys.executable, "fit_script.py"], cwd=str(tmp_path),
                         capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert run.returncode == 0, run.stderr
    assert float(run.stdout) < 1e-6


OTHER = """import numpy as np

OTHER_DATA = np.arange(3.0)


def other_helper(w):
    return np.sum(OTHER_DATA * w)
"""

CALLER = """import numpy as np
from other_mod import other_helper


def caller(w):
    return other_helper(w) * 2.0
"""


def test_a_helper_of_another_module_reading_its_module_data_is_refused(tmp_path):
    (tmp_path / "other_mod.py").write_text(OTHER, encoding="utf-8")
    (tmp_path / "caller_mod.py").write_text(CALLER, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        import caller_mod
        with pytest.raises(SourceError, match="reads the module-level data `OTHER_DATA`"):
            s2s_ad.grad(caller_mod.caller)(W)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("caller_mod", None)
        sys.modules.pop("other_mod", None)


def test_jacobians_of_a_function_reading_module_data():
    """residual(w) = DATA @ w - TARGET: its Jacobian is DATA (exactly)."""
    for jac in (s2s_ad.jacfwd, s2s_ad.jacrev, s2s_ad.jacobian):
        np.testing.assert_array_equal(np.asarray(jac(M.residual)(W)), M.DATA)


def test_a_structure_parameter_beside_module_data():
    # the code per structure (layers named by their activation) called with
    # the module's data: it ran into itself without end before
    rng = np.random.default_rng(7)
    layers = [M.Layer(rng.normal(size=(3, 4)), rng.normal(size=4), "tanh"),
              M.Layer(rng.normal(size=(4, 1)), rng.normal(size=1), "linear")]
    g = s2s_ad.grad(M.structure_and_data)(layers)
    assert [x.act for x in g] == ["tanh", "linear"]
    for i, L in enumerate(layers):
        for field in ("W", "b"):
            def f(a, i=i, L=L, field=field):
                moved = list(layers)
                moved[i] = L._replace(**{field: a})
                return M.structure_and_data(moved)
            want = fd_gradient(f, [getattr(L, field)], 0)
            np.testing.assert_allclose(getattr(g[i], field), want, rtol=1e-5, atol=1e-7)
