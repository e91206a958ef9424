"""Calls: Rosenbrock written with a helper called nine times, against the
same function written inline (both differentiated by s2s-ad) and by hand.
The ratio to the inline version is the cost of the forward/backward pairs
(a call, a tape tuple, an unpack per call site)."""

import s2s_ad
from harness import Workload
from workloads_scalar import ROSEN_ARGS, rosenbrock10, rosenbrock10_hand


def term(a, b):
    return 100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2


def rosenbrock10_calls(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9):
    return (term(x0, x1) + term(x1, x2) + term(x2, x3) + term(x3, x4) + term(x4, x5)
            + term(x5, x6) + term(x6, x7) + term(x7, x8) + term(x8, x9))


_inline = s2s_ad.grad(rosenbrock10, wrt=None)

WORKLOADS = [
    Workload("rosenbrock, 10 floats, 9 calls to a helper", rosenbrock10_calls, rosenbrock10_hand,
             ROSEN_ARGS, wrt=None,
             others={"s2s-ad inline": lambda: _inline(*ROSEN_ARGS)}),
]
