"""Methods reading module-level arrays (docs/calls.md, "Methods" and
"Module-level data"): a bound method, a staticmethod, a classmethod, beside
`self` attributes holding numbers and arrays, directly, through a method and
a function of the module, in a loop. The module's arrays are keyword-only
parameters of the generated code read from the module on every call, as a
plain function's are. Gradients against central differences (float64):
`grad`, `vjp`, `jvp`, `value_and_grad`, and the CLI file in a fresh
interpreter."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
from tests import method_data_src as M
from tests.array_oracle import fd_gradient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
X = np.array([0.1, 0.2, 0.3])

TARGETS = {
    "MODEL.loss": M.MODEL.loss,
    "MODEL.with_attribute": M.MODEL.with_attribute,
    "MODEL.through_helpers": M.MODEL.through_helpers,
    "MODEL.in_a_loop": M.MODEL.in_a_loop,
    "Model.static_loss": M.Model.static_loss,
    "Model.class_loss": M.Model.class_loss,
    "MODEL.via_self": M.MODEL.via_self,
    "MODEL.via_class": M.MODEL.via_class,
    "calls_a_static_method": M.calls_a_static_method,
}


def _fd(fn):
    return fd_gradient(fn, [X], 0)


@pytest.mark.parametrize("name", list(TARGETS))
def test_grad_vjp_jvp(name):
    fn = TARGETS[name]
    want = _fd(fn)
    np.testing.assert_allclose(s2s_ad.grad(fn)(X), want, rtol=1e-6, atol=1e-8)
    value, back = s2s_ad.vjp(fn, X)
    assert value == pytest.approx(fn(X))
    np.testing.assert_allclose(back(1.0)[0], want, rtol=1e-6, atol=1e-8)
    u = np.array([0.3, -1.0, 0.5])
    _, tangent = s2s_ad.jvp(fn)(X, dx=u)
    assert tangent == pytest.approx(float(want @ u), rel=1e-6)
    value, g = s2s_ad.value_and_grad(fn)(X)
    assert value == pytest.approx(fn(X))
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)


def test_the_module_array_and_the_attributes_are_read_on_every_call(monkeypatch):
    model = M.Model(2.0, np.array([0.3, -0.2, 0.5]))
    g = s2s_ad.grad(model.with_attribute)
    np.testing.assert_allclose(g(X), _fd(model.with_attribute), rtol=1e-6, atol=1e-8)
    monkeypatch.setattr(M, "W", np.array([3.0, -1.0, 0.5]))
    model.V = np.array([1.0, 0.5, -0.5])
    model.s = 0.5
    np.testing.assert_allclose(g(X), _fd(model.with_attribute), rtol=1e-6, atol=1e-8)
    monkeypatch.setattr(M, "W", 2.0)
    with pytest.raises(TypeError, match="module-level `W`, which was an array"):
        g(X)


def test_the_generated_function_takes_the_module_array_by_name():
    text = s2s_ad.gradient_source(M.MODEL.loss)
    assert "def grad_loss(x, *, self_s, W, dout=1.0):" in text


@pytest.mark.parametrize("name", ["MODEL.loss", "MODEL.through_helpers", "Model.class_loss",
                                  "MODEL.via_class"])
def test_cli_gradient_file_in_a_fresh_interpreter(name, tmp_path):
    out = tmp_path / "g_method.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           f"tests/method_data_src.py:{name}", "-o", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    method = name.split(".")[1]
    head = text.split(f"def grad_{method}(")[1].split(")")[0]
    given = {"self_s": "M.MODEL.s", "self_V": "M.MODEL.V", "cls_scale": "M.Model.scale",
             "W": "M.W", "LAYERS": "M.LAYERS"}
    names = [n.strip() for n in head.split(",") if n.strip() not in ("x", "*", "dout=1.0")]
    assert "W" in names, head
    probe = ("import sys\nimport numpy as np\nimport g_method as g\n"
             "from tests import method_data_src as M\n"
             f"d = g.grad_{method}(np.array({X.tolist()!r}), "
             + ", ".join(f"{n}={given[n]}" for n in names) + ")\n"
             "assert 's2s_ad' not in sys.modules\n"
             "print(repr(np.asarray(d).tolist()))")
    run = subprocess.run([sys.executable, "-c", probe], cwd=str(tmp_path), capture_output=True,
                         text=True, timeout=120,
                         env={"PATH": os.environ.get("PATH", ""),
                              "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"})
    assert run.returncode == 0, run.stderr
    fn = TARGETS[name]
    np.testing.assert_allclose(eval(run.stdout), _fd(fn), rtol=1e-6, atol=1e-8)
