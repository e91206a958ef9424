"""NumPy functions with loops and branches (tests/test_numpy_loops.py)."""

import numpy as np


def power_iteration(A, v, k: int):
    for _ in range(k):
        w = A @ v
        v = w / np.sqrt(np.sum(w * w))
    return np.sum(v * (A @ v))


def residual_layers(W, x, k: int):
    h = x
    for _ in range(k):
        h = np.maximum(W @ h, 0.0) + 0.1 * h
    return np.sum(h ** 2)


def branchy(x, t: float):
    if t > 0:
        y = np.sin(x) * t
    else:
        y = np.cos(x)
    return np.mean(y, axis=0).sum()


def indexed_sum(x, w, n: int):
    s = 0.0
    for i in range(n):
        s = s + np.tanh(x[i] * w[i]) * x[i]
    return s


def row_norms(A, v):
    total = 0.0
    for i in range(len(A)):
        r = A[i]
        total = total + np.sum(r * v) ** 2
    return total


def oscillator(x, v, k: int, dt=0.1):
    for _ in range(k):
        a = -x - 0.1 * v * np.abs(v)
        v = v + dt * a
        x = x + dt * v
    return np.sum(x * x) + np.mean(v)


def accumulate(x, n: int):
    s = 0.0  # becomes an array on the first iteration
    for i in range(n):
        s = s + x * (i + 1)
    return np.sum(s * s)


def until_small(x):
    while np.sum(x * x) > 0.5:
        x = x * 0.7
    return np.sum(np.exp(x))


def assigns_in_loop(x, n: int):
    y = np.zeros(n)
    for i in range(n):
        y[i] = x[i] * 2
    return np.sum(y)


def assigns_over_a_copy(x, n: int):
    y = np.copy(x)
    for i in range(n):
        y[i] = x[i] * 2
    return np.sum(y)


def recurrence(x, a: float, n: int):
    y = np.zeros(n)
    y[0] = x[0]
    for i in range(1, n):
        y[i] = y[i - 1] * a + np.sin(x[i])
    return np.sum(y * y)


def rnn_states(W, U, x, k: int):
    H = np.zeros((k, len(W)))
    h = np.zeros(len(W))
    for t in range(k):
        h = np.tanh(W @ h + U * x[t])
        H[t, :] = h
    return np.sum(H ** 2) + np.sum(H[:, 0])


def branch_assign(x, t: float):
    y = np.copy(x)
    if t > 0:
        y[0] = y[1] * t
    else:
        y[1:] += x[:-1] * t
    return np.sum(y ** 3)


def bound_piece(x, n: int):
    y = np.zeros_like(x)  # any number of axes: y[i] may be a row, a view
    r = 0.0
    for i in range(n):
        y[i] = x[i]
        r = y[i]  # no write into y comes between this and a read of r
    return np.sum(y) + r


def bound_piece_rewritten(x, n: int):
    y = np.zeros_like(x)
    r = 0.0
    for i in range(n):
        y[i] = x[i]
        r = y[i]
        y[i] = y[i] * 2.0  # r sees this write in NumPy
    return np.sum(y) + r


def bound_element(x, n: int):
    y = np.zeros(n)  # one axis: y[i] is a NumPy scalar, a copy
    r = 0.0
    for i in range(n):
        y[i] = x[i] * x[i]
        r = r + y[i] * y[i - 1]
    return np.sum(y) + r


def aliased(x, n: int):
    y = np.zeros(n)
    z = y
    for i in range(n):
        y[i] = x[i]
    return np.sum(z)


def param_assigned(x, n: int):
    for i in range(n):
        x[i] = x[i] * 2
    return np.sum(x)


def _keep(a):
    return a


def piece_to_helper(x, n: int):
    y = np.zeros(n)
    for i in range(n):
        y[i] = x[i]
    return np.sum(_keep(y[0:2])) + len(y)


def rows_by_shape(A, b):
    total = 0.0
    for i in range(A.shape[0]):
        if np.sum(A[i]) > 0:
            total = total + np.dot(A[i], b)
        else:
            total = total - np.sum(A[i] ** 2)
    for j in range(len(b) - 1):
        total = total + A[0, j] * b[j + 1]
    for k in range(A.ndim + np.size(b) - 4):
        total = total * 1.01
    return total


def over_rows(X, w):
    loss = 0.0
    for row in X:
        loss = loss + (row @ w) ** 2
    return loss


def enumerate_zip_rows(X, Y, w):
    s = 0.0
    for i, (x, y) in enumerate(zip(X, Y)):  # Y is shorter: zip stops there
        s = s + np.sum(x * y) * w ** i
    return s


def zip_rows_and_list(X, ys):
    s = 0.0
    for x, y in zip(X, ys):
        if y > 0:
            s = s + np.sum(np.tanh(x)) * y
    return s


def early_return_then_fill(x, n: int):
    # the array is created after an early return: the copying path, whose
    # adjoints may still be the number 0.0 or the seed when an element is read
    if n > 10:
        return x * 2.0
    y = np.zeros(3)
    for i in range(n):
        y[i] = x[i] * x[i]
        if i == 1:
            return y
    return y
