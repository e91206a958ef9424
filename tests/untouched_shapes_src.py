"""A value whose adjoint moves through a shape op (reshape, transpose,
swapaxes, moveaxis, expand_dims) read in one arm of a branch only;
tests/test_untouched_shapes.py."""

import numpy as np

def f_reshape(a, b, s):
    g = np.reshape(a, (2, 3)) * 0.5 + b
    if s > 0.0:
        q = g * 2.0
    else:
        q = np.tanh(b)
    return np.sum(q * b)

def f_transpose(a, b, s):
    g = np.transpose(a) * 0.5 + b
    if s > 0.0:
        q = g * 2.0
    else:
        q = np.tanh(b)
    return np.sum(q * b)

def f_T(a, b, s):
    g = a.T * 0.5 + b
    if s > 0.0:
        q = g * 2.0
    else:
        q = np.tanh(b)
    return np.sum(q * b)

def f_swap(a, b, s):
    g = np.swapaxes(a, 0, 1) * 0.5 + b
    if s > 0.0:
        q = g * 2.0
    else:
        q = np.tanh(b)
    return np.sum(q * b)

def f_expand(a, b, s):
    g = np.expand_dims(a[0], 0) * 0.5 + b
    if s > 0.0:
        q = g * 2.0
    else:
        q = np.tanh(b)
    return np.sum(q * b)

def f_moveaxis(a, b, s):
    g = np.moveaxis(a, 0, -1) * 0.5 + b
    if s > 0.0:
        q = g * 2.0
    else:
        q = np.tanh(b)
    return np.sum(q * b)


def _moved_and_summed(x):
    return np.moveaxis(x, 0, -1) * 2.0, np.sum(x)


def tuple_item_in_one_arm(x, s):
    """A helper's tuple, one array of it read in one arm only: where the
    other arm runs, the helper's backward gets zeros of its shape."""
    a, b = _moved_and_summed(x)
    if s > 0.0:
        return np.sum(a * a) + b
    return b * s


def _flat_and_summed(x):
    return np.reshape(x, (-1,)) * 2.0, np.sum(x)


def tuple_item_in_one_arm_reshaped(x, s):
    a, b = _flat_and_summed(x)
    if s > 0.0:
        return np.sum(a * a) + b
    return b * s
