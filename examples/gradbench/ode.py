"""An ODE solved with s steps of classic Runge-Kutta from y(0) = 0 to t = 2:
y0' = x0 and yi' = xi * y(i-1) for i > 0. GradBench's ode eval
differentiates the last component of y(2) with respect to x."""

import numpy as np


def ode_rhs(x, y):
    y_prev = np.roll(y, 1)
    dy = x * y_prev
    dy[0] = x[0]
    return dy


def runge_kutta(x, y, tf, s):
    h = tf / s
    for _ in range(s):
        k1 = ode_rhs(x, y)
        k2 = ode_rhs(x, y + h / 2 * k1)
        k3 = ode_rhs(x, y + h / 2 * k2)
        k4 = ode_rhs(x, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def ode_last(x, s):
    y = runge_kutta(x, np.zeros_like(x), 2.0, s)
    return y[-1]


def runge_kutta_with(f, y, tf, s):
    """The same solver, for a right-hand side f(y) given as a function."""
    h = tf / s
    for _ in range(s):
        k1 = f(y)
        k2 = f(y + h / 2 * k1)
        k3 = f(y + h / 2 * k2)
        k4 = f(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def ode_last_closure(x, s):
    """As GradBench's JAX tool writes it: the right-hand side is a closure
    over x, passed to the solver."""
    def rhs(y):
        dy = x * np.roll(y, 1)
        dy[0] = x[0]
        return dy

    return runge_kutta_with(rhs, np.zeros_like(x), 2.0, s)[-1]
