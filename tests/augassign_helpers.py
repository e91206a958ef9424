"""A helper reached as ``module.function`` from tests/numpy_augassign_src.py:
an attribute call that is not NumPy's."""


def same(u):
    return u
