"""Everyday Python in objective functions (tests/test_everyday.py): input
checks (`assert`, `if c: raise`), `match` on a static value. Each function
is differentiated and compared with central differences; the checks must
raise in the generated code exactly when they raise here."""

import math


def checked(x, y):
    assert x > 0, "x must be positive"
    if y < -5.0:
        raise ValueError(f"y too small: {y}")
    return math.log(x) * y * y


def checked_elif(x, y):
    if x <= 0.0:
        raise ValueError(f"x={x:.3f} is not positive")
    elif y > 10.0:
        raise OverflowError("y is too large")
    else:
        z = x * y
    return z * z + x


def checked_else(x):
    if x > 0.0:
        r = math.sqrt(x)
    else:
        raise ValueError(f"negative: {x!r}")
    return r * x


def raise_after_returns(x):
    if x > 1.0:
        return x * x
    elif x > 0.0:
        return math.sqrt(x) * 2.0
    raise ValueError(f"x must be positive, got {x}")


def _validate(t):
    assert t != 0.0, f"t is zero ({t})"
    return 1.0 / t


def _middle(t, s):
    if s < 0.0:
        raise ValueError("s must not be negative")
    return _validate(t) * s


def in_helper(x, y):
    return _validate(x) * y + x


def in_helper_of_helper(x, y):
    return _middle(x, y) + _middle(y, x) * x


def _unused_check(t):
    assert t < 100.0, "t too large"
    return t * 2.0


def helper_result_unused(x, y):
    _unused_check(y)
    c = _unused_check(y)
    return x * x + 0.0 * c


def in_loop(x, n):
    s = 0.0
    for i in range(n):
        if s > 50.0:
            raise OverflowError(f"diverged at step {i}: s={s:.2f}")
        s = s + x * x + i
    return s


def in_loop_unused(x, n):
    # the loop's value is not read by the gradient: it still runs, for the check
    t = 0.0
    for i in range(n):
        t = t + 1.0
        assert t < 4.5, f"too many steps ({t})"
    return x * x * t


def in_branch(x, y):
    if x > 0.0:
        assert y > 0.0, "y must be positive when x is"
        r = x * y
    else:
        r = x - y
    return r * r


def in_while(x):
    k = 0
    while x > 1.0:
        x = x / 2.0
        k = k + 1
        if k > 20:
            raise RuntimeError(f"no convergence after {k} halvings")
    return x * x


def loss(x, mode="l2"):
    match mode:
        case "l2":
            return x * x
        case "l1" | "abs":
            return abs(x)
        case "huber":
            if abs(x) < 1.0:
                return 0.5 * x * x
            return abs(x) - 0.5
        case None:
            return x
        case _:
            raise ValueError(f"unknown mode {mode}")


def _reduce(x, how):
    match how:
        case "sum":
            r = x + x
        case "prod":
            r = x * x
        case _:
            r = x
    return r


def match_in_helper(x, how="prod"):
    return _reduce(x, how) * x + _reduce(x, "sum")


def match_in_loop(x, n, mode="l1"):
    s = 0.0
    for i in range(n):
        match mode:
            case "l1":
                s = s + abs(x - i)
            case _:
                s = s + (x - i) ** 2
    return s


def poly(x, coeffs=(1.0, -2.0, 0.5)):
    s = 0.0
    for c in coeffs:
        s = s * x + c
    return s


def _horner(x, cs=[0.5, 1.0, -1.5]):
    s = 0.0
    for c in cs:
        s = s * x + c
    return s


def poly_of_default(x):
    return _horner(x) * x + _horner(x * x)


def poly_given(x, y):
    cs = [x, y, 1.0]
    return _horner(x, cs) + _horner(y)


def all_positive(x, y):
    cs = [x, y, x * y]
    if all(c > 0 for c in cs):
        return math.log(x * y) + x
    return x * y


def any_negative(xs):
    if any(v < 0 for v in xs):
        return sum(xs) * xs[0]
    return sum(v * v for v in xs)


def flags_all(x, y):
    flags = (x > 0, y > x)
    if all(flags) and not any(w > 10.0 for w in (x, y)):
        return x * y * y
    return x - y


def empty_or_not(x, ws):
    if not ws:
        return x * x
    return x * sum(ws)


def all_in_loop(x, n):
    s = 0.0
    for i in range(n):
        pair = [x - i, x + i]
        if all(p > 0 for p in pair) and any(p > 2.0 for p in pair):
            s = s + pair[0] * pair[1]
        else:
            s = s + x
    return s


def _square_number(v):
    if isinstance(v, (float, int)):
        return v * v
    return 2.0 * v


def number_or_not(x):
    if isinstance(x, float):
        return x * x * x
    return 3.0 * x


def number_in_helper(x, y):
    return _square_number(x) * y + _square_number(_square_number(y))


def guarded_match(x, mode="a", flag=True):
    match mode:
        case "a" if x > 0:
            y = x * x
        case "a":
            y = -x
        case _:
            y = x
    match flag:
        case True:
            y = y * 2.0
        case False:
            y = y * 3.0
    if x > 100.0:
        raise ValueError(f"{mode}: x={x:.1f} too big, flag {flag!r}")
    return y


def match_no_default(x, mode):
    match mode:
        case "l2":
            return x * x
        case _:
            return abs(x)


def _shown(t):
    print("helper", t)
    return t * t


def printing(x, n, mode="fast"):
    s = 0.0
    print("start", x, mode, sep=" | ")
    for i in range(n):
        s = s + math.sin(x * i)
        print(f"step {i}: s={s:.4f}", end=";\n")
    y = _shown(s)
    print(y)
    return y


def walrus(x, y):
    if (d := x - y) > 0:
        z = d * d
    else:
        z = -d
    return z + (w := x * y) * w + d


def walrus_in_loop(x, xs):
    s = 0.0
    for v in xs:
        if (t := v * x) > 1.0:
            s = s + t
    return s


def three_coefficients(x, c):
    if len(c) != 3:
        raise ValueError(f"expected 3 coefficients, got {len(c)}")
    return c[0] + c[1] * x + c[2] * x * x


def countdown(x, n):
    """`while n:` on an int counter and `if r:` on a float: Python's truth
    of a number, `!= 0`."""
    acc = 0.0
    while n:
        acc = acc + x * n
        n = n - 1
    r = x - 1.5
    if r:
        acc = acc * x
    return acc


def truth_of_difference(x, y):
    """A number's truth in a conditional expression, under `not` and in an
    `assert`, in a helper called in a loop."""
    total = 0.0
    for k in range(3):
        total = total + _nonzero_step(x, y, k)
    return total


def _nonzero_step(x, y, k):
    assert x - 10.0, "x must not be 10"
    s = math.sin(x) if not (y - k) else math.cos(y) * x
    return s * (k + 1)
