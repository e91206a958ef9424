"""Tuples, lists and dicts (test data for test_structures.py)."""

import math


def swap_pack(x, y):
    a, b = y, x
    t = (a * b, a + b)
    u, v = t
    return u * v + t[0]


def comp(x, y):
    xs = [x * i + y for i in range(1, 4)]
    return sum(xs) + xs[0] * xs[-1] + len(xs)


def comp_over_list(x, y):
    xs = [x, y, x * y]
    ys = [math.sin(v) for v in xs]
    return sum(v * v for v in ys)


def appended(x, y):
    xs = []
    xs.append(x)
    xs.append(y * y)
    xs.extend([x * y, 2.0])
    xs[1] = xs[1] + x
    return sum(xs) * xs[2]


def with_dict(w, b, x):
    params = {"w": w, "b": b}
    params["scale"] = 2.0
    z = params["w"] * x + params["b"]
    return params["scale"] * math.tanh(z)


def sliced(x, y, z):
    xs = [x, y, z, x * z]
    head = xs[:2]
    return sum(head) * sum(xs[2:]) + xs[1::2][1]


def returns_tuple(x, y):
    loss = (x - y) ** 2
    reg = 0.1 * x * x
    return loss + reg, loss, reg


def returns_list(x, y):
    return [x * y, math.exp(x) + y]


def returns_same_twice(x):
    s = math.sin(x)
    return s, s * x, s


def split(x, y):
    return x * y, x + y


def use_split(x, y):
    p, s = split(x, y)
    q = split(s, 2.0)[0]
    return p * s + q + split(y, y)[1]


def use_split_unused_item(x, y):
    p, s = split(x, y)
    return p * 3.0


def nested_return(x):
    return ((x, x),)


def scalar_from_tuple_call(x):
    return split(x, x) * 2.0


def unpack_scalar_call(x):
    a, b = math_helper(x)
    return a + b


def math_helper(x):
    return x * x


def index_by_float(x):
    xs = [x, x]
    return xs[x]


def comp_over_param_range(x, n):
    return sum([x for i in range(n)])


def list_in_arithmetic(x):
    xs = [x]
    return xs * x


def bad_key(x, k):
    d = {"a": x}
    return d[k]


def norm2(xs, w):
    return sum(x * x for x in xs) * w + xs[0] * xs[-1]


def norm2_tail(xs, w):
    return sum(x * x for x in xs[1:]) * w + xs[0] * xs[-1]  # a slice: any length


def pair_head(xs, w):
    a, b = xs[:2]  # unpacked: code per length
    return sum(x * x for x in xs) * w + a * b


def point_tuple(p, y):
    a, b = p
    return math.sin(a) * b + y * len(p)


def weighted(xs, ws):
    return sum([xs[i] * ws[i] for i in range(len(xs))])


def list_param_to_helper(xs):
    return math_helper(xs[0]) + xs[1]


def bad_list_default(xs=1.0):
    return xs[0]


def built_in_loop(x, y):
    xs = []
    for i in range(4):
        xs.append(x * i + y)
        if i > 1:
            xs[i - 1] = xs[i - 1] * y
    return sum(xs) + xs[2] * xs[-1]


def built_in_loop_with_calls(x):
    xs = [x]
    d = {"total": 0.0}
    for i in range(1, 4):
        xs.append(math_helper(xs[-1]) * 0.5 + i)
        d["total"] = d["total"] + xs[i]
    return d["total"] + len(xs)


def built_then_looped(x, n):
    xs = []
    for i in range(2):
        xs.append(x * (i + 1))
    s = 0.0
    for j in range(n):
        s = s + xs[1] * j
    return s + sum(xs)


def built_in_runtime_loop(x, n):
    xs = []
    for i in range(n):
        xs.append(x * i)
    return sum(xs)


def built_in_branch(x):
    xs = [x]
    if x > 0:
        xs.append(x * 2.0)
    return sum(xs)


def built_with_break(x):
    xs = []
    for i in range(3):
        if x > 1.0:
            break
        xs.append(x)
    return sum(xs)


def weighted_pairs(xs, ws):
    w0, w1 = ws
    return xs[0] * w0 + xs[1] * w1
