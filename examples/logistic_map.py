"""Iterate the logistic map x ← r·x·(1 − x) for n steps.

`n` is an integer (a `range` bound): it has no gradient, and asking for one
is refused with its location. The gradient with respect to the start `x` and
the rate `r` runs the n steps backwards, reading each step's `x` from the
tape.

    s2s-ad grad examples/logistic_map.py:logistic --wrt x,r
    s2s-ad check examples/logistic_map.py:logistic --args n=4
"""


def logistic(x, r, n):
    for i in range(n):
        x = r * x * (1.0 - x)
    return x
