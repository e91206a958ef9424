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


def display_backwards(a, b):
    s = 0.0
    for v in [a * b, b, math.sin(a)][::-1]:
        s = s * 2.0 + v * v
    return s


def display_tail_in_loop(a, b, n):
    s = 0.0
    for k in range(n):
        for v in [a, b * k, a * b][1:]:
            s = s + v * math.cos(s)
    return s


def _display_tail(a, b):
    t = 0.0
    for v in [b, a * a, a * b][1:]:
        t = t * 0.5 + v
    return t


def display_tail_in_helper(a, b):
    return _display_tail(a, b) * _display_tail(b, a)


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


# -- 7. np.where whose discarded side is nan or infinite ------------------------------

def where_compared(a):
    return np.sum(np.where(a > 0, np.sqrt(a), 0.0) * a)


def where_two_arrays(a, b):
    return np.sum(np.where(a > b, np.sqrt(a - b), 0.0))


def where_inverted(a):
    return np.sum(np.where(~(a <= 0), np.sqrt(a), 0.0))


def where_logical_not(a):
    return np.sum(np.exp(np.where(np.logical_not(a <= 0), np.log(a), -1.0)))


def where_or(a):
    return np.sum(np.where((a > 2.0) | (a > 0.5), np.sqrt(a), 0.0))


def where_xor(a):
    return np.sum(np.where((a > 0) ^ (a > 5.0), np.sqrt(a), 0.0))


def where_isnan(a):
    r = np.sqrt(a)
    return np.sum(np.where(np.isnan(r), 0.0, r))


def where_nested(a):
    return np.sum(np.where(a <= 0, 0.0, np.where(a > 1, np.log(a - 1.0), np.sqrt(a))))


def where_safe_mean(S, n):
    return np.sum(np.where(n > 0, S / n, 0.0))


def where_guarded_operand(a):
    r = np.sqrt(np.where(a > 0, a, 1.0))  # the rewrite: any reads of r
    return np.sum(np.where(a > 0, r, 0.0)) + r[0] * np.sum(r[1:])


# -- more of the same: numerical Python as people write it ----------------------------

def mean_square(xs):
    return sum(x * x for x in xs) / len(xs)


def mirrored_products(xs):
    n = len(xs)
    return sum(xs[i] * xs[n - 1 - i] for i in range(n // 2))


def dot_zip(xs, ys):
    return sum(a * b for a, b in zip(xs, ys))


def weighted_enumerate(xs):
    s = 0.0
    for i, x in enumerate(xs):
        s += (i + 1) * x ** 2
    return s


def sorted_ends(xs):
    ys = sorted(xs)
    return ys[0] * ys[-1] + ys[len(ys) // 2]


def keyed_extremes(xs):
    return max(xs, key=abs) * min(xs, key=lambda v: (v - 0.5) ** 2)


def any_negative(xs):
    if any(x < 0 for x in xs):
        return sum(abs(x) for x in xs)
    return sum(xs)


def all_above(xs):
    if all(x > -2.0 for x in xs):
        return math.prod(xs)
    return 0.0


def activation(x, kind="relu"):
    if kind == "relu":
        return max(x, 0.0)
    elif kind == "tanh":
        return math.tanh(x)
    elif kind == "softplus":
        return math.log1p(math.exp(x))
    raise ValueError(f"unknown activation {kind!r}")


def checked_log(x):
    if x <= 0:
        raise ValueError(f"x must be positive, got {x:.3f}")
    return math.log(x) * math.sqrt(x)


def asserted_ratio(x, y):
    assert y != 0.0, "y must be nonzero"
    return x / y + math.atan2(x, y)


def running_best(xs):
    best = xs[0]
    for x in xs[1:]:
        if x > best:
            best = x
    return best * sum(xs)


def first_above(xs, target):
    for i, x in enumerate(xs):
        if x > target:
            return x * i
    return target * 2.0


def path_length(xs):
    total = 0.0
    for i in range(1, len(xs)):
        total += (xs[i] - xs[i - 1]) ** 2
    return math.sqrt(total)


def window_mean(xs, k):
    window = xs[k:k + 3]
    return sum(window) / len(window)


def harmonic_weights(xs):
    weights = [1.0 / (i + 1) for i in range(len(xs))]
    return sum(w * x for w, x in zip(weights, xs))


def exp_series(x, n):
    terms = [x ** k / math.factorial(k) for k in range(n)]
    return sum(terms)


def sample_std(xs):
    m = sum(xs) / len(xs)
    var = sum((x - m) ** 2 for x in xs) / (len(xs) - 1)
    return math.sqrt(var)


def consecutive_pairs(xs):
    pairs = list(zip(xs, xs[1:]))
    return sum(a * b for a, b in pairs)


def argmax_by_key(xs):
    idx = max(range(len(xs)), key=lambda i: xs[i])
    return xs[idx] * 2.0


def split_signs(xs):
    return sum(x for x in xs if x > 0) - sum(x for x in xs if x <= 0)


def halves(xs):
    mid = len(xs) // 2
    left, right = xs[:mid], xs[mid:]
    return sum(left) * sum(right)


def reduced(x, mode="mean"):
    vals = [x, 2 * x, 3 * x]
    if mode == "mean":
        return sum(vals) / len(vals)
    if mode == "max":
        return max(vals)
    raise ValueError(f"bad mode: {mode}")


def horner_reversed(xs):
    acc = 1.0
    for x in reversed(xs):
        acc = acc * x + 1.0
    return acc


def rounded_offset(x):
    return x * x + round(x, 2) + round(x * 10.0, 0)


def by_rank(xs):
    ranks = sorted(range(len(xs)), key=lambda i: xs[i])
    return sum(xs[r] * k for k, r in enumerate(ranks))


def prefix_sums(xs):
    cum = []
    s = 0.0
    for x in xs:
        s += x
        cum.append(s)
    return sum(c * c for c in cum)


def strided_products(xs, n):
    out = 0.0
    for i in range(0, n, 2):
        out += xs[i] * xs[i + 1]
    return out


def partial_sums_until(x):
    s = 0.0
    for i in range(10):
        s += x / (i + 1)
        if s > 3.0:
            break
    return s


def empty_or_last(xs):
    if not xs:
        return 0.0
    return xs[-1] * len(xs)


def typed_sum(xs):
    for x in xs:
        if not isinstance(x, float):
            raise TypeError(f"expected floats, got {type(x).__name__}")
    return sum(xs)


def neighbours_both_ways(xs):
    n = len(xs)
    return sum(xs[i] * xs[j] for i in range(n) for j in range(n) if abs(i - j) == 1)


def log_sum_exp(xs):
    m = max(xs)
    return m + math.log(sum(math.exp(x - m) for x in xs))


def repeated_sum(x):
    return sum([x] * 3) + [x, x * x][1] + len([x] * 4 + [x]) * x


def binomial_poly(x, n):
    return sum(math.comb(n, k) * x ** k for k in range(n + 1)) + math.perm(n, 2) * x


def distance_to_origin(xs):
    return math.dist(xs, [0.0] * len(xs))


def sinc(x):
    return 1.0 if math.isclose(x, 0.0) else math.sin(x) / x


def close_or_apart(x, y):
    if math.isclose(x, y, rel_tol=1e-3, abs_tol=1e-6):
        return x * y
    return x - y


def cyclic_products(x):
    n = len(x)
    return sum(x[i] * x[(i + 1) % n] for i in range(n))


def std_of_list(xs):
    return np.std(np.array(xs)) * float(len(xs))


def regression_loss(w, xs, ys):
    loss = 0.0
    for x, y in zip(xs, ys):
        pred = w[0] + w[1] * x
        loss += (pred - y) ** 2
    return loss / len(xs)


def min_max_scaled(xs):
    lo, hi = min(xs), max(xs)
    return sum((x - lo) / (hi - lo) for x in xs)


def position_of_largest(xs):
    i = xs.index(max(xs))
    return xs[i] * i


def table_of_functions(x, kind="tanh"):
    table = {"tanh": math.tanh, "sin": math.sin}
    return table[kind](x)


def unknown_in_comprehension(x, n):
    return sum([x * math.nextafter(k, 1.0) for k in range(n)])
