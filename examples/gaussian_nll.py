"""Negative log-likelihood of one observation under a normal distribution,
with the scale parametrised by its logarithm (as in a regression head).

    s2s-ad grad examples/gaussian_nll.py:nll --wrt mu,log_sigma
"""

import math

LOG_2PI = math.log(2.0 * math.pi)


def nll(x, mu, log_sigma):
    sigma = math.exp(log_sigma)
    z = (x - mu) / sigma
    return 0.5 * z * z + log_sigma + 0.5 * LOG_2PI


if __name__ == "__main__":
    # `python examples/gaussian_nll.py`, from any directory: s2s-ad reads nll
    # from this file, so nothing needs the repository root on the path.
    import s2s_ad

    g = s2s_ad.grad(nll, wrt=("mu", "log_sigma"))
    print("nll(1.0, 0.2, 0.1) =", nll(1.0, 0.2, 0.1))
    print("(dmu, dlog_sigma) =", g(1.0, 0.2, 0.1))
    print(s2s_ad.check(nll))
