"""log-sum-exp of a vector, shifted by its maximum for stability."""

import numpy as np


def logsumexp(x):
    x_max = np.max(x)
    return np.log(np.sum(np.exp(x - x_max))) + x_max
