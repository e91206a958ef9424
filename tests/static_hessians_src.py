"""Programs whose second derivatives depend on a static argument
(tests/test_static_hessians.py)."""
import numpy as np


def poly(x, mode="sq"):
    if mode == "sq":
        return x * x * x
    return 2.0 * x * x


def flagged(x, y, cube=True):
    if cube:
        return x * x * x * y
    return x * y * y


def arrays(x, mode="sq"):
    if mode == "sq":
        return np.sum(np.sin(x) * x * x)
    return np.sum(np.exp(0.5 * x)) * np.sum(x)
