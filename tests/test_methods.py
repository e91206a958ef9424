"""Bound methods: ``self`` attributes are constants of the gradient passed
as ``self_NAME`` keywords (read on every call), ``self.f(x)`` calls a method
lifted the same way, staticmethod and classmethod; checked against central
differences through grad, vjp and the CLI."""

import os
import subprocess
import sys

import numpy as np
import pytest

import methods_src as m
import s2s_ad
from array_oracle import fd_gradient as array_fd
from oracle import close, fd_gradient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))

CASES = [
    (m.Spring(2.0).energy, [0.3]),
    (m.Spring(3.0, "abs").energy, [0.3]),
    (m.Spring(2.0).via_static, [0.3]),
    (m.Spring.unit, [0.3]),
    (m.Spring(2.0).in_loop, [0.3, 3]),
]


@pytest.mark.parametrize("fn, point", CASES, ids=lambda v: getattr(v, "__qualname__", ""))
def test_bound_methods_against_finite_differences(fn, point):
    got = s2s_ad.grad(fn)(*point)
    assert close(got, fd_gradient(fn, point, [0])[0])
    value, pull = s2s_ad.vjp(fn, *point)
    assert close(value, fn(*point)) and close(pull(2.0)[0], 2.0 * got)
    assert len(pull(1.0)) == len(point)     # no cotangent for self's attributes


def test_attributes_are_read_on_every_call():
    s = m.Spring(2.0)
    denergy = s2s_ad.grad(s.energy)
    before = denergy(0.3)
    s.k = 5.0
    assert close(denergy(0.3), fd_gradient(s.energy, [0.3], [0])[0])
    assert not close(before, denergy(0.3))


def test_two_objects_of_one_class_share_code_not_values():
    a, b = m.Spring(2.0), m.Spring(7.0)
    assert close(s2s_ad.grad(a.energy)(0.3), fd_gradient(a.energy, [0.3], [0])[0])
    assert close(s2s_ad.grad(b.energy)(0.3), fd_gradient(b.energy, [0.3], [0])[0])


def test_a_static_attribute_selects_the_code():
    s = m.Spring(2.0)
    quad = s2s_ad.grad(s.energy)(0.3)
    s.mode = "abs"      # a string attribute: the code is generated for its value
    assert close(s2s_ad.grad(s.energy)(0.3), fd_gradient(s.energy, [0.3], [0])[0])
    assert not close(quad, s2s_ad.grad(s.energy)(0.3))


def test_numpy_model():
    rng = np.random.default_rng(1)
    model = m.Linear(rng.normal(size=(3, 4)), rng.normal(size=3))
    x, y = rng.normal(size=4), rng.normal(size=3)
    dx, dy = s2s_ad.grad(model.loss, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(dx, array_fd(model.loss, [x, y], 0), rtol=1e-5)
    np.testing.assert_allclose(dy, array_fd(model.loss, [x, y], 1), rtol=1e-5)


def test_a_function_calling_a_method_of_a_module_object_is_refused_located():
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(m.uses_a_model)(0.3)
    assert "spring.energy" in info.value.source_line


@pytest.mark.parametrize("fn, fragment, message", [
    (m.Spring(2.0).passes_self, "helper_taking_object(self, x)", "used as a value"),
    (m.Spring(2.0).writes, "self.k = x", "attribute assignment"),
    (m.Spring.energy, "def energy", "taken from its class"),
])
def test_refusals_are_located(fn, fragment, message):
    with pytest.raises(s2s_ad.SourceError, match=message) as info:
        s2s_ad.grad(fn)(0.3)
    assert info.value.file.endswith("methods_src.py") and fragment in info.value.source_line


def test_check_says_it_does_not_run_methods():
    with pytest.raises(s2s_ad.S2SError, match="reads data from a closure or is a bound method"):
        s2s_ad.check(m.Spring(2.0).energy)


@pytest.mark.parametrize("target, call, want", [
    ("methods_src.py:spring.energy", "grad_energy(0.3, self_k=2.0, self_rest=1.5)",
     lambda: fd_gradient(m.spring.energy, [0.3], [0])[0]),
    ("methods_src.Spring.unit", "grad_unit(0.3, cls_scale=3.0)",
     lambda: fd_gradient(m.Spring.unit, [0.3], [0])[0]),
    ("methods_src.Spring.sq", "grad_sq(0.3)", lambda: 0.6),
])
def test_cli_targets_in_a_fresh_interpreter(tmp_path, target, call, want):
    out = tmp_path / "g_method.py"
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", target, "-o", str(out)],
                          cwd=HERE, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    run = subprocess.run([sys.executable, "-c", f"import g_method\nprint(g_method.{call})"],
                         cwd=tmp_path, capture_output=True, text=True,
                         env={"PATH": os.environ.get("PATH", "")}, timeout=120)
    assert run.returncode == 0, run.stderr
    assert close(float(run.stdout), want())


def test_cli_refuses_an_instance_method_taken_from_its_class():
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "methods_src.Spring.energy"],
                          cwd=HERE, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "taken from its class" in done.stderr


def test_a_call_reads_the_attributes_not_the_source(monkeypatch):
    # The attributes a method reads are found once, when the gradient is
    # asked for; each call only reads their values (it took 6 ms a call
    # when every call walked the source again).
    from s2s_ad.frontend import methods
    s = m.Spring(2.0)
    d = s2s_ad.grad(s.energy)
    calls = []
    real = methods.plan
    monkeypatch.setattr(methods, "plan", lambda meth: calls.append(meth) or real(meth))
    for k in (2.0, 3.0, 4.0):
        s.k = k
        assert close(d(0.3), fd_gradient(s.energy, [0.3], [0])[0])
    assert calls == []
