"""A piecewise function: quadratic, then sine, then linear, chosen by `if`.

Only the branch the inputs take contributes to the gradient; `s2s-ad check`
decides the comparisons at its sample point and at random points, and proves
the gradient on each of the three paths it finds.

    s2s-ad grad examples/piecewise.py:piecewise
    s2s-ad check examples/piecewise.py:piecewise --at x=0.5,a=2.0
"""

import math


def piecewise(x, a):
    if x > 1.0:
        y = a * x * x
    elif x > 0.0:
        y = a * math.sin(x)
    else:
        y = -x
    return y + x
