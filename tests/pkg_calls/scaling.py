"""Scaling: calls back into ``shapes`` (the two modules import each other)."""

from pkg_calls import shapes


def scaled(v, w):
    return w * v * v


def both(x, y):
    return shapes.bump(y) * x + scaled(x, y)
