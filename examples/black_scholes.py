"""Black–Scholes price of a European call: its gradient gives the Greeks
(delta = ∂C/∂s, vega = ∂C/∂sigma, rho = ∂C/∂r, theta = -∂C/∂t).

    s2s-ad grad examples/black_scholes.py:call_price --wrt s,sigma
"""

import math


def call_price(s, k, t, r, sigma):
    sqrt_t = math.sqrt(t)
    d1 = (math.log(s / k) + (r + 0.5 * sigma * sigma) * t) / (sigma * sqrt_t)
    d2 = d1 - sigma * sqrt_t
    n1 = 0.5 * (1.0 + math.erf(d1 / math.sqrt(2.0)))
    n2 = 0.5 * (1.0 + math.erf(d2 / math.sqrt(2.0)))
    return s * n1 - k * math.exp(-r * t) * n2
