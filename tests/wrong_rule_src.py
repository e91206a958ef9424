"""A user rule whose backward is wrong (registered without check=True), and
functions that reach it directly, through a helper and in a loop: test data
for test_testing.py. ``s2s_ad.check`` takes the rule as given;
``s2s_ad.testing.assert_gradient`` must still fail on each of them."""

import math

import s2s_ad


@s2s_ad.custom_vjp
def softplus(x):
    return math.log1p(math.exp(x))


def softplus_fwd(x):
    return softplus(x), x


def softplus_bwd_wrong(x, g):
    # The derivative is the logistic function 1 / (1 + exp(-x)); this drops
    # the minus sign.
    return (g / (1.0 + math.exp(x)),)


softplus.defvjp(softplus_fwd, softplus_bwd_wrong)


def direct(x, y):
    return softplus(x * y) + y


def helper(x):
    return 2.0 * softplus(x)


def through_helper(x):
    return helper(x) * x


def in_loop(x, n):
    acc = 0.0
    for i in range(n):
        acc = acc + softplus(x + i)
    return acc
