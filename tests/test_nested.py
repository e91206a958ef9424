"""A derivative s2s-ad made, called inside a function it differentiates
(nested AD): its generated module is in the subset, read as a helper
(frontend/source.generated_code). References: the same programs with the
inner gradient written out by hand, by central differences."""

import math
import os
import sys

import numpy as np
import pytest

import s2s_ad
from s2s_ad.errors import SourceError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import nested_src as src  # noqa: E402


def force_by_hand(x0, x1, w):
    a0, a1 = x0 - 10.0, x1 - 10.0 + w
    b0, b1 = x0 - 10.0, x1
    ra, rb = (a0 * a0 + a1 * a1) ** 1.5, (b0 * b0 + b1 * b1) ** 1.5
    return -a0 / ra - b0 / rb, -a1 / ra - b1 / rb


def euler_by_hand(w):
    x0, x1, v0, v1, dt = 0.0, 8.0, 0.75, 0.0, 0.1
    while True:
        g0, g1 = force_by_hand(x0, x1, w)
        n0, n1 = x0 + dt * v0, x1 + dt * v1
        if n1 <= 0.0:
            break
        x0, x1 = n0, n1
        v0, v1 = v0 - dt * g0, v1 - dt * g1
    xf = x0 - x1 / v1 * v0
    return xf * xf


def fd(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("w", [0.0, 0.3, -0.2])
def test_particle_gradient_through_the_force(w):
    assert abs(src.naive_euler(w) - euler_by_hand(w)) < 1e-12
    g = s2s_ad.grad(src.naive_euler)(w)
    assert abs(g - fd(euler_by_hand, w)) < 1e-5 * max(1.0, abs(g))


def test_particle_forward_mode_and_vjp():
    w = 0.3
    ref = fd(euler_by_hand, w)
    value, tangent = s2s_ad.jvp(src.naive_euler)(w, dw=1.0)
    assert abs(tangent - ref) < 1e-5 * max(1.0, abs(ref))
    _, back = s2s_ad.vjp(src.naive_euler, w)
    assert abs(back(1.0)[0] - ref) < 1e-5 * max(1.0, abs(ref))


def test_gradient_of_a_gradient_norm():
    x = np.array([0.3, -0.5, 1.2])

    def by_hand(x):
        g = np.tanh(x) + x / np.cosh(x) ** 2
        return np.sum(g * g)

    ref = np.array([fd(lambda t: by_hand(np.where(np.arange(3) == k, t, x)), x[k])
                    for k in range(3)])
    assert np.allclose(s2s_ad.grad(src.gradient_norm)(x), ref, atol=1e-6)
    v = np.array([1.0, 0.5, -2.0])
    hv = s2s_ad.hvp(src.gradient_norm)(x, v)
    ref_hv = np.array([fd(lambda t: s2s_ad.grad(src.gradient_norm)(x + t * v)[k], 0.0)
                       for k in range(3)])
    assert np.allclose(hv, ref_hv, atol=1e-5)


def test_rebinding_the_derivative_is_seen(monkeypatch):
    x = np.array([0.3, -0.5])
    g = s2s_ad.grad(src.gradient_norm)
    first = g(x)
    monkeypatch.setattr(src, "energy_grad", s2s_ad.grad(src.other))

    def by_hand(x):
        d = np.sin(x) + x * np.cos(x)
        return np.sum(d * d)

    ref = np.array([fd(lambda t: by_hand(np.where(np.arange(2) == k, t, x)), x[k])
                    for k in range(2)])
    assert np.allclose(g(x), ref, atol=1e-6)
    assert np.allclose(s2s_ad.grad(src.gradient_norm)(x), ref, atol=1e-6)
    assert not np.allclose(first, ref)


def test_two_parameters_and_the_lagrangian():
    gx, glam = s2s_ad.grad(src.lagrangian, wrt=(0, 1))(0.7, 1.5)
    ref_x = fd(lambda x: force_by_hand(x, 2.0, 0.0)[0] * 1.5 + force_by_hand(x, 2.0, 0.0)[1],
               0.7)
    assert abs(gx - ref_x) < 1e-6 and abs(glam - force_by_hand(0.7, 2.0, 0.0)[0]) < 1e-12


def test_a_derivative_choosing_its_code_per_call_is_refused_located(tmp_path, monkeypatch):
    mod = tmp_path / "nested_refused.py"
    mod.write_text("import s2s_ad\n\n\ndef p(x, mode='a'):\n    return x * x if mode == 'a' "
                   "else x\n\n\ndp = s2s_ad.grad(p)\n\n\ndef outer(x):\n    return dp(x) * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import nested_refused
    with pytest.raises(SourceError) as info:
        s2s_ad.grad(nested_refused.outer)(0.5)
    err = info.value
    assert err.line == 12 and "chosen when it is called" in err.message
    assert str(err).splitlines()[-1].strip() == "^"


def test_called_from_a_helper_in_a_loop():
    def by_hand(w):
        s = 0.0
        for i in range(3):
            g0, g1 = force_by_hand(0.5 + i, 2.0, w)
            s = s + g0 * g0 + g1
        return s

    g = s2s_ad.grad(src.kicks)(0.3)
    assert abs(g - fd(by_hand, 0.3)) < 1e-6 * max(1.0, abs(g))


def test_cli_file_in_a_fresh_interpreter(tmp_path):
    import subprocess
    out = tmp_path / "grad_euler.py"
    subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                    os.path.join(os.path.dirname(os.path.abspath(__file__)), "nested_src.py")
                    + ":naive_euler", "-o", str(out)], check=True, capture_output=True)
    assert "s2s_ad" not in out.read_text()
    run = subprocess.run([sys.executable, "-c", "import grad_euler; "
                          "print(grad_euler.grad_naive_euler(0.3))"],
                         cwd=tmp_path, capture_output=True, text=True, check=True)
    assert abs(float(run.stdout) - fd(euler_by_hand, 0.3)) < 1e-5 * max(1.0, abs(float(run.stdout)))
