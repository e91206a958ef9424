"""GradBench's particle eval (examples/gradbench/particle.py): a derivative
of a function that takes a derivative inside a `while` loop whose trip
count depends on the parameter. Each of the four mode pairs' slope is
compared with central differences of the objective, through the API and
through the CLI's file imported in a fresh interpreter; the argmin of each
variant lands the particle on the origin."""

import os
import subprocess
import sys
import textwrap

import pytest

from gradbench import particle

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POINTS = (-0.2, 0.0, 0.3, 0.9)


def central(f, w, h=1e-6):
    return (f(w + h) - f(w - h)) / (2 * h)


@pytest.mark.parametrize("variant", ["rr", "rf", "fr", "ff"])
def test_slope_against_differences(variant):
    euler = particle.euler_reverse if variant[1] == "r" else particle.euler_forward
    slope = particle.slope_by(variant[0], euler)
    for w in POINTS:
        assert slope(w) == pytest.approx(central(euler, w), rel=1e-6, abs=1e-8), w


def test_inner_force_is_minus_the_field():
    """The inner derivative alone, both modes, against differences of p."""
    x0, x1, w = 1.3, 4.2, 0.25
    for force in (particle.force_reverse, particle.force_forward):
        g0, g1 = force(x0, x1, w)
        assert g0 == pytest.approx(central(lambda t: particle.potential(t, x1, w), x0), rel=1e-7)
        assert g1 == pytest.approx(central(lambda t: particle.potential(x0, t, w), x1), rel=1e-7)


def test_every_variant_lands_on_the_origin():
    found = [particle.particle(v) for v in ("rr", "rf", "fr", "ff")]
    for w in found:
        assert w == pytest.approx(found[0], abs=1e-9)
        assert particle.euler_reverse(w) < 1e-6
    # it stops once a step would move w by at most 1e-5: the slope there is small, not 0
    assert abs(central(particle.euler_reverse, found[0])) < 1e-2


@pytest.mark.parametrize("target", ["euler_reverse", "euler_forward"])
def test_cli_file_in_a_fresh_interpreter(tmp_path, target):
    out = tmp_path / f"grad_{target}.py"
    src = os.path.join(ROOT, "examples", "gradbench", "particle.py")
    env = dict(os.environ, PYTHONPATH=ROOT)
    subprocess.run([sys.executable, "-m", "s2s_ad", "grad", f"{src}:{target}", "-o", str(out)],
                   check=True, env=env, capture_output=True, text=True)
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import grad_{target} as g
        print(repr(g.grad_{target}(0.3)), repr(g.grad_{target}(-0.2)))
        print("s2s_ad" in sys.modules)
    """)
    run = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, cwd=str(tmp_path), env=dict(os.environ, PYTHONPATH=""))
    *got, imported = run.stdout.split()
    assert imported == "False"   # the generated module runs without s2s-ad
    euler = getattr(particle, target)
    for value, w in zip(got, (0.3, -0.2)):
        assert float(value) == pytest.approx(central(euler, w), rel=1e-6)
