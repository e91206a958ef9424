"""Newton's method for the cube root of c: a `while` loop that stops when the
residual is small, so the trip count depends on the data.

The forward loop counts its iterations; the reverse sweep runs that many
steps backwards. Once converged, the derivative of the iterate is the
derivative of the root, 1 / (3·c^(2/3)).

    s2s-ad grad examples/newton.py:cube_root
"""


def cube_root(c):
    x = 1.0
    while abs(x * x * x - c) > 1e-12 * c:
        x = x - (x * x * x - c) / (3.0 * x * x)
    return x
