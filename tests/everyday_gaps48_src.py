"""Functions written the way numerical Python is written, for
tests/test_everyday_gaps48.py: each one s2s-ad refused or misreported."""

import math

import numpy as np


# -- 1. a list the loop's header makes: list(range(n))[1:], a comprehension --------

def range_tail(x, n):
    s = 0.0
    for i in list(range(n))[1:]:
        s += math.sin(x * i)
    return s


def range_between(x, a, b):
    idx = list(range(a, b))
    s = x * idx[0] + x * x * idx[-1] + len(idx) * x
    for i in list(range(a, b))[1:]:
        s += math.cos(x * i)
    return s


def squares_iterated(xs):
    s = 0.0
    for v in [t * t for t in xs]:
        s = s * 0.5 + v
    return s


def enumerate_tail(x, n):
    s = 0.0
    for k, i in enumerate(list(range(n))[1:]):
        s += k * x ** i
    return s


def pairs_backwards(xs, n):
    s = 0.0
    for i in list(range(1, n))[::-1]:
        s = s * 0.5 + xs[i] * xs[i - 1]
    return s


def _tail_powers(x, n):
    s = 0.0
    for i in list(range(n))[1:]:
        s += x ** i / i
    return s


def tail_in_helper(x, n):
    t = 0.0
    for j in range(2):
        t += _tail_powers(x * (j + 1), n)
    return t


def scaled_items_until(x):
    s = 0.0
    for v in [x * i for i in range(5)]:
        if v > 2.0:
            break
        s += math.sin(v)
    return s


# -- 2. a list of lists of a run-time size -------------------------------------------

def table_of_products(x, w, n, m):
    rows = [[x[i] * w[j] for j in range(m)] for i in range(n)]
    return rows[1][0] * rows[0][1] + sum(sum(r) for r in rows)


def table_flat(x, w, n, m):
    """The rewrite the refusal names: one flat list read at row * m + column."""
    flat = [x[i] * w[j] for i in range(n) for j in range(m)]
    return flat[1 * m + 0] * flat[0 * m + 1] + sum(flat)


def _table_in_helper(x, w, n):
    rows = [[x[i] * w[j] for j in range(len(w))] for i in range(n)]
    return sum(sum(r) for r in rows)


def table_in_helper(x, w, n):
    return _table_in_helper(x, w, n) * 2.0


def pairs_below(xs, n):
    return sum(xs[i] * xs[j] for i in range(n) for j in range(i))


def pairs_filtered(xs, n):
    return sum(xs[i] * math.sin(xs[j]) for i in range(n) for j in range(n) if i != j if i + j > 1)


def all_products(xs):
    return sum(a * b for a in xs for b in xs)


def known_grid(x):
    ys = [x * i - j for i in range(2) for j in range(3)]
    return sum(ys) + ys[4] * ys[5]


def differences_squared(x):
    n = x.shape[0]
    d = np.array([x[i] - x[j] for i in range(n) for j in range(i + 1, n)])
    return np.sum(d ** 2)


# -- 3. x.real, x.imag, x.conjugate() of real numbers and arrays ---------------------

def parts_of_number(x, y):
    return x.real * y.real + x.imag + y.imag * x + x.conjugate() * math.sin(y.conjugate())


def parts_of_array(x):
    return (np.sum(x.real * x.conjugate()) + np.sum(x.imag) + np.sum(np.real(x) * np.imag(x))
            + np.sum(np.conj(x) ** 3) + np.sum(np.conjugate(x) * x[0].real))


def parts_in_loop(xs):
    s = 0.0
    for v in xs:
        s += math.sin(v.real) * v.conjugate() + v.imag
    return s


def _real_square(v):
    return v.real * v.conjugate()


def parts_in_helper(x, y):
    s = 0.0
    for k in range(3):
        s += _real_square(x * k + y)
    return s


def conjugate_written(x):
    y = np.conj(x)  # a new array (x.conjugate() is x itself): writing it leaves x
    y[0] = 5.0
    return np.sum(y * x)


# -- 4. np.array of a comprehension of ints as an index array ------------------------

def leave_one_out(x, k):
    n = x.shape[0]
    keep = np.array([j for j in range(n) if j != k])
    return np.sum(x[keep] ** 2) * x[k]


def leave_one_out_named(x, k):
    n = x.shape[0]
    keep = [j for j in range(n) if j != k]
    return np.sum(np.sin(x[np.array(keep)]))


def neighbours(x, n):
    idx = np.array(list(range(1, n)))
    return np.sum(x[idx] * x[idx - 1])


def leave_each_out(x):
    n = x.shape[0]
    s = 0.0
    for k in range(n):
        others = np.array([j for j in range(n) if j != k])
        s += x[k] * np.sum(x[others])
    return s


def _rest(x, k):
    keep = np.array([j for j in range(x.shape[0]) if j != k])
    return np.sum(np.exp(x[keep]))


def rest_in_helper(x):
    return _rest(x, 0) + _rest(x, 2)


def stacked_floats(x, n):
    ys = np.array([x[j] * j for j in range(n)])
    return np.sum(ys * ys)


# -- 5. an index that is a float ---------------------------------------------------

def list_at(xs, a):
    return xs[a] * 2.0


def array_at(x, a):
    return x[a] * 2.0


def built_list_at(x, a):
    ys = [x, 2.0 * x, 3.0 * x]
    return ys[a] * x


def tuple_at_in_loop(x, a):
    s = 0.0
    for i in range(3):
        t = (x, x * i)
        s += t[a]
    return s


def grown_list_at(x, a):
    ys = []
    for i in range(3):
        ys.append(x * i)
    return ys[a]


# -- 6. explain: a read folded into added_into --------------------------------------

def shifted_product(x, y_prev):
    y = x * y_prev
    y = y + x[0]
    return np.sum(y * y)


def conjugate_is_itself(x):
    y = np.copy(x)
    z = y.conjugate()  # y itself, as NumPy returns a real array's conjugate
    z[0] = 5.0
    return np.sum(y * x)
