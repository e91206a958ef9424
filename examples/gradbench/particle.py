"""A charged particle steered to the origin (GradBench's particle eval).

Two fixed unit charges sit at (10, 10 - w) and (10, 0); the particle starts
at (0, 8) moving at (0.75, 0), and each Euler step of 0.1 moves it, then
accelerates it by minus the gradient of the potential
p(x) = Σ 1/‖x - charge‖ — a derivative inside the function. The steps
stop when the next would cross the x axis; the crossing point is found on
the straight line from there, and the objective is its squared distance
from the origin. ``argmin`` chooses w by gradient descent on that
objective: a derivative of a function that itself takes a derivative,
through a `while` loop whose trip count depends on w.

The eval's four variants choose the mode of each derivative: the inner
force by reverse mode (``s2s_ad.grad``) or forward mode (two
``s2s_ad.jvp`` passes), the outer slope by either too.

    python examples/gradbench/particle.py
"""

import math

import s2s_ad

DT = 0.1


def potential(x0, x1, w):
    total = 0.0
    for c0, c1 in ((10.0, 10.0 - w), (10.0, 0.0)):
        total += 1.0 / math.hypot(x0 - c0, x1 - c1)
    return total


force_reverse = s2s_ad.grad(potential, wrt=("x0", "x1"))
potential_tangent = s2s_ad.jvp(potential, wrt=("x0", "x1"))


def force_forward(x0, x1, w):
    """∂p/∂x0 and ∂p/∂x1, one forward pass each."""
    _, g0 = potential_tangent(x0, x1, w, dx0=1.0, dx1=0.0)
    _, g1 = potential_tangent(x0, x1, w, dx0=0.0, dx1=1.0)
    return g0, g1


def landing(x0, x1, v0, v1):
    """Squared distance from the origin of where the path crosses x1 = 0."""
    t = -x1 / v1
    x = x0 + t * v0
    return x * x


def euler(force, w):
    """Euler steps until the next would cross the x axis, then the landing."""
    x0, x1, v0, v1 = 0.0, 8.0, 0.75, 0.0
    while x1 + DT * v1 > 0.0:
        a0, a1 = force(x0, x1, w)
        x0, x1 = x0 + DT * v0, x1 + DT * v1
        v0, v1 = v0 - DT * a0, v1 - DT * a1
    return landing(x0, x1, v0, v1)


def euler_reverse(w):
    return euler(force_reverse, w)


def euler_forward(w):
    return euler(force_forward, w)


def argmin(f, slope, w, tol=1e-5):
    """Gradient descent on a scalar w: a step that lowers f is taken (and ten
    in a row double the step); one that does not halves the step."""
    fw, gw, eta, run = f(w), slope(w), 1e-5, 0
    while abs(gw) > tol:
        if run == 10:
            eta, run = 2.0 * eta, 0
            continue
        trial = w - eta * gw
        if abs(trial - w) <= tol:
            break
        f_trial = f(trial)
        if f_trial < fw:
            w, fw, gw, run = trial, f_trial, slope(trial), run + 1
        else:
            eta, run = eta / 2.0, 0
    return w


def slope_by(outer, euler):
    """d euler / dw by reverse mode ("r") or forward mode ("f")."""
    if outer == "r":
        return s2s_ad.grad(euler)
    tangent = s2s_ad.jvp(euler)
    return lambda w: tangent(w, dw=1.0)[1]


def particle(variant, w0=0.0):
    """The eval's variants "rr", "rf", "fr", "ff": outer mode, then inner."""
    euler = euler_reverse if variant[1] == "r" else euler_forward
    return argmin(euler, slope_by(variant[0], euler), w0)


if __name__ == "__main__":
    for variant in ("rr", "rf", "fr", "ff"):
        w = particle(variant)
        print(variant, "w =", w, " objective:", euler_reverse(w))
