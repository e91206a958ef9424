"""The seed case: y = a * x², so dy/da = x² and dy/dx = 2ax.

x is used twice by `b = x * x`, so its adjoint is the sum of two
contributions, one per operand of that `mul`.
"""


def f(a, x):
    b = x * x
    y = a * b
    return y
