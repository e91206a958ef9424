"""A saddle point min_x max_y f(x, y) found by nested gradient steps.

The inner loop climbs in y: y <- y + rate·∇_y f(x, y), STEPS times. The
outer loop descends in x on g(x) = f(x, y_STEPS(x)), the value at the end
of the inner climb — and g's gradient runs through the inner loop: the
tangent of y along a direction of x moves with y, each step's tangent the
forward-mode derivative of the generated gradient ∇_y f
(``s2s_ad.jvp(s2s_ad.grad(f, ...))``: second derivatives of f, made from
f's own source). f is convex in x and concave in y, so the point found has
∇f = 0 there.

    python examples/saddle.py
"""

import math

STEPS = 30
RATE = 0.2


def f(x1, x2, y1, y2):
    return (x1 * x1 + x2 * x2 - y1 * y1 - y2 * y2 + x1 * y1 - 0.5 * x2 * y2
            + 0.3 * math.sin(x1 + y2) - x1 + 0.5 * y1)


def outer_value_and_grad(x1, x2, y1, y2):
    """g(x) = f(x, y after STEPS ascent steps from (y1, y2)) and ∇g: one
    forward-mode pass through the inner loop per direction of x."""
    import s2s_ad

    ascent = s2s_ad.jvp(s2s_ad.grad(f, wrt=("y1", "y2")), wrt=("x1", "x2", "y1", "y2"))
    objective = s2s_ad.jvp(f, wrt=("x1", "x2", "y1", "y2"))
    gradient = []
    for e1, e2 in ((1.0, 0.0), (0.0, 1.0)):
        v1, v2, t1, t2 = y1, y2, 0.0, 0.0   # y and its tangent along (e1, e2)
        for _ in range(STEPS):
            (g1, g2), (dg1, dg2) = ascent(x1, x2, v1, v2, dx1=e1, dx2=e2, dy1=t1, dy2=t2)
            v1, v2 = v1 + RATE * g1, v2 + RATE * g2
            t1, t2 = t1 + RATE * dg1, t2 + RATE * dg2
        value, slope = objective(x1, x2, v1, v2, dx1=e1, dx2=e2, dy1=t1, dy2=t2)
        gradient.append(slope)
    return value, (gradient[0], gradient[1]), (v1, v2)


def saddle(x1=1.0, x2=-1.0, y1=0.0, y2=0.0, steps=60, rate=0.2):
    """Outer gradient steps on x, each starting the inner climb where the last ended."""
    for _ in range(steps):
        _, (g1, g2), (y1, y2) = outer_value_and_grad(x1, x2, y1, y2)
        x1, x2 = x1 - rate * g1, x2 - rate * g2
    return x1, x2, y1, y2


if __name__ == "__main__":
    import s2s_ad

    point = saddle()
    print("saddle point (x1, x2, y1, y2):", [round(p, 6) for p in point])
    print("gradient of f there:", s2s_ad.grad(f, wrt=None)(*point))
