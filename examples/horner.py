"""Evaluate a polynomial by Horner's rule: p(x) = (((c0·x + c1)·x + c2)·x + ...).

The loop overwrites `s` on every iteration, and the reverse sweep needs each
old `s` (∂(s·x)/∂x = s): the forward loop pushes one float per iteration,
nothing else. The gradient with respect to the coefficient list is a list.

    s2s-ad grad examples/horner.py:horner --wrt c,x --length c=4
"""


def horner(c, x):
    s = 0.0
    for i in range(len(c)):
        s = s * x + c[i]
    return s
