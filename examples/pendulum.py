"""Energy of a damped pendulum after one semi-implicit Euler step: a small
physics model whose gradient with respect to the initial state and the
parameters is what a fitting loop needs.

    s2s-ad grad examples/pendulum.py:energy_after_step --wrt theta,omega,damping
"""

import math

G = 9.81


def energy_after_step(theta, omega, length, damping, dt):
    alpha = -G / length * math.sin(theta) - damping * omega
    omega_next = omega + dt * alpha
    theta_next = theta + dt * omega_next
    kinetic = 0.5 * (length * omega_next) ** 2
    potential = G * length * (1.0 - math.cos(theta_next))
    return kinetic + potential
