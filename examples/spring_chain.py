"""A chain of N masses joined by stiff nonlinear springs, ends held fixed,
stepped by implicit (backward) Euler: each step solves

    F(z) = z - y - h·rhs(z) = 0

for the next state z by Newton's method, whose linear system needs the
Jacobian of rhs: ``s2s_ad.jacobian(rhs)`` (forward mode here, as the state
has as many elements as the output). Stiff springs make explicit Euler
blow up at this step size; the implicit step stays stable, and damping
makes the energy fall.

    python examples/spring_chain.py
"""

import numpy as np

N = 4           # masses
K = 50.0        # linear stiffness
K3 = 200.0      # cubic stiffness
DAMPING = 0.3


def rhs(y):
    """d/dt of the state y = (positions q, velocities v)."""
    q = y[:N]
    v = y[N:]
    ends = np.concatenate((np.zeros(1), q, np.zeros(1)))
    stretch = ends[1:] - ends[:-1]                 # the N + 1 springs
    tension = K * stretch + K3 * stretch ** 3
    force = tension[1:] - tension[:-1]
    return np.concatenate((v, force - DAMPING * v))


def energy(y):
    q = y[:N]
    v = y[N:]
    ends = np.concatenate((np.zeros(1), q, np.zeros(1)))
    stretch = ends[1:] - ends[:-1]
    return 0.5 * np.sum(v * v) + np.sum(0.5 * K * stretch ** 2 + 0.25 * K3 * stretch ** 4)


def implicit_step(y, h, tol=1e-12, max_newton=20):
    """One backward-Euler step from y: Newton on z - y - h·rhs(z) = 0."""
    import s2s_ad

    jac = s2s_ad.jacobian(rhs)
    z = y + h * rhs(y)                             # explicit guess
    for _ in range(max_newton):
        residual = z - y - h * rhs(z)
        if np.max(np.abs(residual)) < tol:
            break
        z = z - np.linalg.solve(np.eye(2 * N) - h * jac(z), residual)
    return z


def simulate(y, h=0.05, steps=40):
    states = [y]
    for _ in range(steps):
        y = implicit_step(y, h)
        states.append(y)
    return states


if __name__ == "__main__":
    y0 = np.concatenate((np.array([0.3, -0.2, 0.25, 0.0]), np.zeros(N)))
    states = simulate(y0)
    print("energy:", " ".join(f"{energy(s):.4f}" for s in states[::8]))
    print("final positions:", np.round(states[-1][:N], 5))
