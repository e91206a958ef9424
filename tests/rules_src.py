"""Functions with user derivative rules (test data for test_custom_rules.py)."""

import math

import s2s_ad


@s2s_ad.custom_vjp
def logaddexp(a, b):
    m = max(a, b)
    return m + math.log(math.exp(a - m) + math.exp(b - m))


def logaddexp_fwd(a, b):
    out = logaddexp(a, b)
    return out, (a, b, out)


def logaddexp_bwd(res, g):
    a, b, out = res
    return g * math.exp(a - out), g * math.exp(b - out)


logaddexp.defvjp(logaddexp_fwd, logaddexp_bwd, check=True)


def opaque(x):
    """Stands for a C routine: s2s-ad cannot read it (it has a `try`)."""
    try:
        return math.sin(x) * x
    except ValueError:
        return 0.0


def opaque_fwd(x):
    return opaque(x), x


def opaque_bwd(x, g):
    return (g * (math.cos(x) * x + math.sin(x)),)


def opaque_bwd_wrong(x, g):
    return (g * math.cos(x) * x,)


def opaque_bwd_not_tuple(x, g):
    return g * (math.cos(x) * x + math.sin(x))


def uses_logaddexp(x, y):
    return logaddexp(x * y, y) * x


def helper_with_rule(x):
    return logaddexp(x, 2.0 * x)


def rule_inside_helper(x, y):
    return helper_with_rule(x) + helper_with_rule(y) * y


def uses_opaque(x):
    return opaque(x) + x * x


def opaque2(x):
    return opaque(x)


def opaque2_fwd(x):
    return opaque(x), x


def opaque2_bwd(x, g):
    return (g * (math.cos(x) * x + math.sin(x)),)


opaque2.__s2s_ad_vjp__ = (opaque2_fwd, opaque2_bwd)


def uses_opaque2(x):
    return opaque2(x) * 3.0
