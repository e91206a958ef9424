"""Source corpus for tests/test_numpy_ranks.py: element reads and writes
whose shapes the function's own code fixes (s2s_ad/reverse/ranks.py), in
every position, and writes whose shapes it does not fix."""

import numpy as np


def fill(x, a: float):
    y = np.zeros(len(x))
    y[0] = x[0]
    for i in range(1, len(x)):
        y[i] = y[i - 1] * a + x[i]
    return np.sum(y * y)


def _fill(x, a):
    y = np.zeros(len(x))
    y[0] = x[0]
    for i in range(1, len(x)):
        y[i] = y[i - 1] * a + x[i]
    return y


def _fill_twice(x, a):
    return _fill(x, a) + _fill(x, a * 0.5)


def fill_in_helper(x, a: float):
    return np.sum(_fill(x, a) ** 2)


def fill_in_helper_of_helper(x, a: float):
    return np.sum(np.sin(_fill_twice(x, a)))


def interleaved(x, a: float):
    """Two writes per iteration of a loop stepping by 2, each into its own
    elements (y[i], y[i + 1]): neither reverse zeroes."""
    y = np.zeros(len(x))
    for i in range(0, len(x) - 1, 2):
        y[i] = x[i] * a
        y[i + 1] = np.sin(x[i + 1]) * y[i]
    return np.sum(y * y)


def interleaved_rows(x, a: float):
    """interleaved, by rows of a matrix: no zero written into the rows'
    adjoints."""
    y = np.zeros_like(x)
    for i in range(0, len(x) - 1, 2):
        y[i] = np.sin(x[i]) * a
        y[i + 1] = x[i + 1] * y[i]
    return np.sum(y * y * x)


def interleaved_overwritten(x, a: float):
    """y[i + 2] is written an iteration before y[i] reads and overwrites it:
    the write into y[i] must zero its adjoint (the gradient is wrong without)."""
    y = np.zeros(len(x))
    for i in range(0, len(x) - 2, 2):
        y[i + 2] = x[i] * a
        y[i] = y[i] * a + x[i + 1]
    return np.sum(y * y)


def interleaved_read_ahead(x, a: float):
    """y[i + 2] read before the next iteration writes it: zeroed."""
    y = np.zeros(len(x))
    for i in range(0, len(x) - 2, 2):
        y[i] = x[i] * a + y[i + 2] * x[i + 1]
        y[i + 1] = np.cos(x[i + 1]) * y[i]
    return np.sum(y * y)


def fill_in_branch(x, a: float):
    y = np.zeros(len(x))
    if a > 0.0:
        for i in range(1, len(x)):
            y[i] = y[i - 1] * a + np.sin(x[i])
    else:
        for i in range(len(x)):
            y[i] = x[i] * a
    return np.sum(y * x)


def fill_in_loop(x, a: float, m: int):
    y = np.zeros(len(x))
    total = 0.0
    for k in range(m):
        for i in range(1, len(x)):
            y[i] = y[i - 1] * a + x[i] * k
        total = total + np.sum(y * y)
    return total


def helper_in_loop(x, a: float, m: int):
    total = 0.0
    for k in range(m):
        total = total + np.sum(_fill(x, a * k) ** 2)
    return total


def while_fill(x, c: float):
    y = np.zeros(len(x))
    i = 1
    while i < len(x) and y[i - 1] < c:
        y[i] = y[i - 1] + x[i] * x[i]
        i = i + 1
    return np.sum(y * x)


def grid(x, a: float):
    n = x.shape[0]
    H = np.zeros((n, 2))
    for i in range(n):
        H[i, 0] = x[i] * a
        H[i, 1] = np.sin(H[i, 0]) + H[i - 1, 1] * 0.5
    return np.sum(H * H)


def rows(W, x, a: float):
    H = np.zeros((len(x), len(x)))
    for i in range(len(x)):
        H[i] = W[i] * a + x[i]
    return np.sum(H ** 2)


def rotation(t, v):
    R = np.eye(3)
    R[1, 1] = np.cos(t)
    R[2, 1] = np.sin(t)
    R[1, 2] = -R[2, 1]
    R[2, 2] = R[1, 1]
    return np.sum((R @ v) ** 2)


def defined_before_loop(w, q, a: float):
    t = w * a
    y = np.zeros(len(q))
    for i in range(len(q)):
        y[i] = t + q[i]
    return np.sum(y * y) + np.sum(t * q)


def scalar_result(x):
    m = np.max(x)
    return np.log(np.sum(np.exp(x - m))) + m


def element_result(x, a: float):
    y = np.zeros(len(x))
    for i in range(len(x)):  # s2s-ad: loop (the element adjoints of a loop are checked)
        y[i] = np.tanh(x[i] * a)
    return y[-1] + y[0]


def written_in_branch(w, q, c: float):
    t = w * c
    y = np.zeros(3)
    if c > 0.0:
        y[0] = t
    return np.sum(y * q) + np.sum(t * q)


# -- writes whose reverse zeroes the element's adjoint, or need not ------------

def read_same_element(x, a: float):
    y = np.ones(len(x))
    for i in range(len(x)):
        y[i] = y[i] * a + x[i]
    return np.sum(y * y)


def wraps_to_the_end(x, a: float):
    y = np.ones(len(x))
    for i in range(len(x)):
        y[i] = y[i - 1] * a + x[i]
    return np.sum(y * y)


def written_before_the_loop(x, a: float):
    y = np.zeros(len(x))
    y[2] = x[0] * 3.0
    for i in range(1, len(x)):
        y[i] = y[i - 1] * a + x[i]
    return np.sum(y * y)


def read_ahead(x, a: float):
    y = np.ones(len(x))
    for i in range(len(x) - 1):
        y[i] = y[i + 1] * a + x[i]
    return np.sum(y * y)


def whole_read_in_the_loop(x, a: float):
    y = np.ones(len(x))
    for i in range(1, len(x)):
        y[i] = np.sum(y) * a + x[i]
    return np.sum(y * y)


def copied_root(x, a: float):
    y = np.copy(x)
    for i in range(1, len(x)):
        y[i] = y[i - 1] * a + x[i]
    return np.sum(y * y)


def read_after_in_the_body(x, a: float):
    y = np.zeros(len(x))
    acc = 0.0
    for i in range(2, len(x)):
        y[i] = y[i - 2] * a + x[i]
        acc = acc + y[i] * y[i - 1]
    return np.sum(y * y) + acc


def overwritten_by_a_second_loop(x, a: float):
    y = np.zeros(len(x))
    for i in range(len(x)):
        y[i] = x[i] * 2.0
    for i in range(len(x)):
        y[i] = y[i] * a + 1.0
    return np.sum(y * y)


# -- reads the reverse sweep takes from the array again, or from the tape ------

def overwritten_after_the_loop(x, a: float):
    y = np.zeros(len(x))
    y[0] = x[0]
    for i in range(1, len(x)):
        y[i] = y[i - 1] * a + x[i]
    s = np.sum(y * y)
    y[0] = 5.0
    return s + np.sum(y * x)


def written_back_in_the_loop(x, a: float):
    y = np.ones(len(x))
    for i in range(1, len(x)):
        y[i] = y[i - 1] * a + x[i]
        y[i - 1] = y[i] * 0.5
    return np.sum(y * y)


def two_back(x, a: float):
    y = np.zeros(len(x))
    y[0] = x[0]
    y[1] = x[1]
    for i in range(2, len(x)):
        y[i] = y[i - 1] * a + y[i - 2] * a * a + x[i]
    return np.sum(y * y)


def masked_where(w, v, s: float):
    return np.sum(np.mean(np.where(np.log(w ** 2 + 0.5) > 0, np.square(s), 1.0), axis=1,
                          keepdims=True) * v)



def rotation_after_return(t, v):
    n = np.sum(v * v)
    if n < 1e-8:
        return n
    R = np.zeros((3, 3))
    R[0, 0] = np.cos(t)
    R[1, 0] = np.sin(t)
    R[0, 1] = -R[1, 0]
    R[1, 1] = R[0, 0]
    R[2, 2] = 1.0
    return np.sum((R @ v) ** 2)


def _rotation_matrix(t):
    R = np.eye(3)
    R[1, 1] = np.cos(t)
    R[2, 1] = np.sin(t)
    R[1, 2] = -R[2, 1]
    R[2, 2] = R[1, 1]
    return R


def rotations_in_a_loop(ts, v):
    total = 0.0
    for k in range(len(ts)):
        total = total + np.sum((_rotation_matrix(ts[k]) @ v) ** 2 * ts[k])
    return total
