"""Functions for tests/test_forward.py (s2s-ad reads source from files)."""

import math

import numpy as np

from s2s_ad import custom_vjp


def straight(x, y):
    a = math.sin(x) * y
    b = math.exp(a) / (1.0 + x * x)
    return math.sqrt(b + 2.0) + math.atan2(x, y) - y ** 3


def branches(x, y):
    if x * y > 0.5:
        z = x * x * y
    elif x > y:
        z = math.cos(x + y)
    else:
        z = -x / (1.0 + y * y)
    return z * z + abs(x - y) + max(x, y)


def horner(x, n):
    s = 0.0
    for i in range(n):
        s = s * x + math.sin(i + x)
    return s


def with_while(x, y):
    t = x
    k = 0
    while k < 4 and t < 20.0:
        t = t * (1.5 + y * y) + 0.1
        k += 1
    return t


def early_exit(x, y):
    s = y
    for i in range(6):
        s = s * math.cos(x) + x
        if s > 3.0:
            break
    return s


def looped_helper(a, b):
    s = a
    for _ in range(3):
        s = s * b + math.tanh(s)
    return s


def tuple_helper(a, b):
    u = a * b
    for _ in range(2):
        u = u + math.sin(a)
    return u, u * b


def calls(x, y):
    p = looped_helper(x, y) + looped_helper(y, 0.5)
    u, v = tuple_helper(p, x)
    return u + v * y


def two_outputs(x, y):
    return x * y, math.sin(x) + y


def listed(xs, w):
    s = 0.0
    for i in range(len(xs)):
        s = s + xs[i] * w ** i
    return s


def as_int(x):
    return round(x * 3)


def arrays_elementwise(a, b, s):
    c = np.tanh(a * b) + s * np.exp(-a) / (1.0 + b * b)
    return np.sum(c ** 2 + np.maximum(a, b))


def arrays_linear(W, x, b):
    h = np.tanh(W @ x + b)
    m = np.mean(h * h, axis=0)
    return np.sum(m) + np.dot(x, x) + np.sum(np.outer(x, b)[1:, :])


def arrays_vector(W, x):
    y = np.where(x > 0.0, x * 2.0, np.sin(x))
    return np.concatenate((W @ y, np.cumsum(y) * x))


def arrays_loop(a, b):
    y = np.zeros(3)
    for i in range(3):
        y[i] = np.sum(a * b[i]) + y[i - 1] * 0.5
    return np.sum(y * y) + np.sum(np.transpose(np.reshape(a, (2, 2))) @ a[:2])


def arrays_prod(a):
    return np.prod(a)


def _square_fwd(x):
    return x * x, x


def _square_bwd(x, g):
    return (2 * x * g,)


@custom_vjp
def ruled_square(x):
    return x * x


ruled_square.defvjp(_square_fwd, _square_bwd)


def uses_rule(x):
    return ruled_square(x) + x


def smooth3(x, y, z):
    a = x * x * y + math.sin(x * z)
    b = math.exp(-y * y) * z / (1.0 + x * x)
    return a * b + math.log(1.0 + z * z) * y


def smooth_one(x):
    return math.tanh(x) * x ** 3 + math.cos(2.0 * x)


def unpacked(xs, y):
    a, b, c = xs  # unpacking: the code is generated per length
    return a * b * y + math.sin(c) * c


def appended_in_branch(x, c):
    """A list created empty, first appended an active value in a branch: its
    tangent list starts as zeros for the items it had before the append."""
    xs = []
    if c > 0:
        xs.append(x * x)
    else:
        xs.append(x)
    xs.append(math.sin(x))
    return xs[0] * 3.0 + xs[-1]


def appended_in_loop_after_constants(x, n: int):
    xs = [1.0, 2.0]
    for i in range(n):
        if i % 2 == 0:
            xs.append(x * xs[-1])
        else:
            xs.append(xs[-2] + 0.5)
    return xs[-1] * xs[2] + xs[0]


def euler(x, k, n):
    # -k and k * 0.5 read nothing the loop computes: computed once, before it
    for i in range(n):
        x = x + 0.1 * (-k * x) + k * 0.5
    return x


def euler_twice(x, k, n):
    y = euler(x, k, n)
    if y > 0.0:
        y = euler(y, k, n)
    return y * 2.0


def appended(x, k, n):
    # an empty list grown in a loop, a list made empty again in each outer step
    xs = []
    total = 0.0
    for j in range(2):
        ys = []
        for i in range(n):
            x = x + 0.1 * math.sin(k * x)
            xs.append(x)
            ys.append(x * x)
        total = total + sum(ys)
    if x > 0.0:
        xs.append(k)
    return sum(xs) + total


def appended_in_helper(x, k, n):
    return appended(x, k, n) * appended(k, x, n)


def number_minus_array(s, c):
    # s a 0-d value, c an array without a tangent: the result has c's shape
    return np.sum(np.sum(s * s) - c * 1.5)


def trace_minus_ones(a, b):
    m = np.outer(np.tanh(a), b) * 0.1 + np.eye(np.size(a)) * 2.0
    return np.sum(np.trace(m @ m) - np.ones_like(a, dtype=float) * 1.5)
