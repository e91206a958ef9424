"""Control-flow programs for the gradient tests: each entry is a function,
the arguments to differentiate at, and which of them are differentiated.

The functions deliberately mix branches, loops, early exits and loop-carried
values in ways that break naive reverse sweeps (values overwritten across
iterations, adjoints carried backwards, flags from `break`/`return`).
"""

import math


def branch_if_else(x, y):
    if x > y:
        z = x * y
    else:
        z = x + y * y
    return z * x


def branch_elif(x):
    if x > 1.0:
        y = x * x
    elif x > 0.0:
        y = math.sin(x)
    else:
        y = -x * 3.0
    return y * 2.0


def branch_one_sided(x, a):
    y = a * x
    if x < 0.3:
        y = y * y
    return y + x


def branch_and_or(x, y):
    if x > 0.0 and y > 0.0 or not x < 2.0:
        r = x * y
    else:
        r = x - y
    return r


def ternary(x, y):
    m = x if x > y else y
    return m * m + (x * 2.0 if y < 0.5 else y * 3.0)


def branch_nested(x, y):
    r = x
    if x > 0.0:
        if y > 0.0:
            r = r * y
        else:
            r = r - y
        r = r + x
    return r * x


def for_range_const(x):
    s = 1.0
    for i in range(5):
        s = s * x + i
    return s


def for_range_arg(x, n):
    s = 0.0
    for i in range(n):
        s = s + x ** 2 * i
    return s


def for_range_start_step(x, a, b):
    s = x
    for i in range(a, b, 3):
        s = s * 0.5 + x * i
    return s


def for_range_negative_step(x, n):
    s = x
    for i in range(n, 0, -1):
        s = math.sin(s) * i + x
    return s


def horner(c, x):
    s = 0.0
    for i in range(len(c)):
        s = s * x + c[i]
    return s


def sum_list(c, x):
    s = 0.0
    for i in range(len(c)):
        s = s + c[i]
    return s * x


def for_each(xs, w):
    acc = 0.0
    for v in xs:
        acc = acc + w * v * v
    return acc


def for_each_product(xs):
    p = 1.0
    for v in xs:
        p = p * v
    return p


def logistic(x, r, n):
    for i in range(n):
        x = r * x * (1.0 - x)
    return x


def two_carried_swap(a, b, n):
    for i in range(n):
        a, b = b, a + b * 0.5
    return a * b


def nested_loops(x, n):
    s = 0.0
    for i in range(n):
        t = x
        for j in range(i):
            t = t * x + j
        s = s + t
    return s


def triangular_reassign(x, y, n):
    acc = x
    for i in range(n):
        for j in range(i, n):
            acc = acc * 0.9 + y * (i - j)
        acc = math.tanh(acc) + x
    return acc


def loop_with_branch(x, n):
    s = x
    for i in range(n):
        if s > 1.0:
            s = s * 0.5
        else:
            s = s * 3.0 + x
    return s


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-13 * a:
        x = x - (x * x - a) / (2.0 * x)
    return x


def newton_cubic(c):
    x = 1.0
    while True:
        fx = x * x * x - c
        if abs(fx) < 1e-14:
            break
        x = x - fx / (3.0 * x * x)
    return x


def bisection(c):
    lo = 0.0
    hi = c + 1.0
    while hi - lo > 1e-9:
        mid = 0.5 * (lo + hi)
        if mid * mid > c:
            hi = mid
        else:
            lo = mid
    return lo * c


def while_counter(x):
    k = 0
    y = x
    while k < 6:
        y = y * math.cos(y) + x
        k += 1
    return y


def break_loop(x, n):
    s = x
    for i in range(n):
        s = s * 1.5 + x
        if s > 10.0:
            break
        s = s - 0.25 * x
    return s


def continue_loop(x, n):
    s = 0.0
    for i in range(n):
        if i % 2 == 0:
            continue
        s = s + x ** i
    return s


def return_in_loop(xs, t):
    s = 0.0
    for v in xs:
        if v > t:
            return s * t
        s = s + v * v
    return s


def return_in_nested_loop(x, n):
    acc = 0.0
    for i in range(n):
        for j in range(n):
            acc = acc + x * (i + 1) - 0.1 * j
            if acc > 5.0:
                return acc * x
    return acc + x


def return_in_branch(x, y):
    if x > y:
        return x * y
    elif x > 0.0:
        return x - y
    return y * y


def break_in_while(x):
    y = x
    while y < 100.0:
        y = y * y + 1.0
        if y > 50.0:
            break
        y = y + x
    return y


def augmented(x, n):
    s = x
    for i in range(n):
        s *= x
        s += i * x
        s -= 0.5
    return s


def unused_loop_value(x, n):
    s = x
    u = x
    for i in range(n):
        u = u * 2.0
        s = s * x
    return s


def loop_invariant_reads(x, y, n):
    s = 0.0
    for i in range(n):
        s = s + math.exp(y) * x
    return s


def loop_overwrites_temp(x, n):
    s = x
    for i in range(n):
        t = math.exp(s * 0.1)
        s = t * s - x
    return s


def loop_then_straight(x, n):
    s = x
    for i in range(n):
        s = s * 0.5 + 1.0
    y = math.sin(s) * x
    return y


def sequential_loops(x, n):
    s = x
    for i in range(n):
        s = s * x
    t = s
    for i in range(n):
        t = t + s * x
    return t


def branch_in_while(x):
    y = x
    n = 0
    while n < 5:
        if y > 1.0:
            y = y * 0.5
        else:
            y = y * y + 0.7
        n += 1
    return y


def max_in_loop(xs):
    m = xs[0]
    for v in xs:
        m = max(m, v)
    return m * m


def underscore_name(x, n):
    _ = x * 3.0
    s = x
    for i in range(n):
        s = s * 0.5 + _
    return s * _


# name -> (function, args, wrt indices)
PROGRAMS = {
    "branch_if_else>": (branch_if_else, [1.5, 0.5], [0, 1]),
    "branch_if_else<": (branch_if_else, [0.2, 0.5], [0, 1]),
    "branch_elif_hi": (branch_elif, [1.7], [0]),
    "branch_elif_mid": (branch_elif, [0.4], [0]),
    "branch_elif_lo": (branch_elif, [-0.4], [0]),
    "branch_one_sided_taken": (branch_one_sided, [0.2, 1.3], [0, 1]),
    "branch_one_sided_not": (branch_one_sided, [0.5, 1.3], [0, 1]),
    "branch_and_or": (branch_and_or, [0.5, 0.7], [0, 1]),
    "branch_and_or_not": (branch_and_or, [2.5, -0.7], [0, 1]),
    "branch_and_or_else": (branch_and_or, [0.5, -0.7], [0, 1]),
    "ternary": (ternary, [0.9, 0.3], [0, 1]),
    "ternary_other": (ternary, [0.2, 0.7], [0, 1]),
    "branch_nested": (branch_nested, [0.8, -0.4], [0, 1]),
    "branch_nested2": (branch_nested, [0.8, 0.4], [0, 1]),
    "for_range_const": (for_range_const, [0.7], [0]),
    "for_range_arg": (for_range_arg, [0.7, 6], [0]),
    "for_range_arg_zero": (for_range_arg, [0.7, 0], [0]),
    "for_range_start_step": (for_range_start_step, [0.7, 2, 13], [0]),
    "for_range_negative_step": (for_range_negative_step, [0.3, 5], [0]),
    "horner": (horner, [[1.0, -2.0, 0.5, 3.0], 0.8], [0, 1]),
    "sum_list": (sum_list, [[1.0, -2.0, 0.5], 0.8], [0, 1]),
    "for_each": (for_each, [[0.3, -1.2, 2.0], 1.1], [0, 1]),
    "for_each_tuple": (for_each, [(0.3, -1.2, 2.0), 1.1], [0, 1]),
    "for_each_product": (for_each_product, [[0.3, -1.2, 2.0, 0.9]], [0]),
    "logistic": (logistic, [0.3, 3.2, 8], [0, 1]),
    "two_carried_swap": (two_carried_swap, [0.3, 0.8, 5], [0, 1]),
    "nested_loops": (nested_loops, [0.9, 5], [0]),
    "triangular_reassign": (triangular_reassign, [0.4, 0.3, 4], [0, 1]),
    "loop_with_branch": (loop_with_branch, [0.7, 8], [0]),
    "newton_sqrt": (newton_sqrt, [2.0], [0]),
    "newton_cubic": (newton_cubic, [3.0], [0]),
    "while_counter": (while_counter, [0.6], [0]),
    "break_loop_breaks": (break_loop, [1.0, 10], [0]),
    "break_loop_runs_out": (break_loop, [0.1, 4], [0]),
    "continue_loop": (continue_loop, [0.9, 7], [0]),
    "return_in_loop": (return_in_loop, [[0.3, 0.5, 2.0, 0.1], 1.5], [0, 1]),
    "return_in_loop_none": (return_in_loop, [[0.3, 0.5, 0.1], 1.5], [0, 1]),
    "return_in_nested_loop": (return_in_nested_loop, [0.9, 4], [0]),
    "return_in_nested_loop_none": (return_in_nested_loop, [0.1, 3], [0]),
    "return_in_branch1": (return_in_branch, [0.9, 0.3], [0, 1]),
    "return_in_branch2": (return_in_branch, [0.2, 0.3], [0, 1]),
    "return_in_branch3": (return_in_branch, [-0.2, 0.3], [0, 1]),
    "break_in_while": (break_in_while, [1.2], [0]),
    "break_in_while2": (break_in_while, [3.2], [0]),
    "augmented": (augmented, [0.8, 4], [0]),
    "unused_loop_value": (unused_loop_value, [0.8, 4], [0]),
    "loop_invariant_reads": (loop_invariant_reads, [0.8, 0.3, 4], [0, 1]),
    "loop_overwrites_temp": (loop_overwrites_temp, [0.8, 5], [0]),
    "loop_then_straight": (loop_then_straight, [0.8, 5], [0]),
    "sequential_loops": (sequential_loops, [0.8, 3], [0]),
    "branch_in_while": (branch_in_while, [0.6], [0]),
    "max_in_loop": (max_in_loop, [[0.3, 1.7, -0.2, 1.1]], [0]),
    "underscore_name": (underscore_name, [0.7, 3], [0]),
}


# -- refused: each raises a SourceError pointing at the construct ------------

def refused_for_else(x, n):
    for i in range(n):
        x = x * 2.0
    else:
        x = x + 1.0
    return x


def _helper(x):
    return x * x


def call_in_loop(x, n):
    for i in range(n):
        x = _helper(x)
    return x


def refused_loop_local_after(x, n):
    for i in range(n):
        t = x * i
    return t


def refused_one_branch(x):
    if x > 0.0:
        y = x * 2.0
    return y


def refused_truthiness(x):
    if x and x > 1.0:  # `and` gives an operand: a float here, not a bool
        x = x * 2.0
    return x


def refused_missing_return(x):
    if x > 0.0:
        return x
