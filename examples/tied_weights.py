"""A small network, and a variant whose weight matrix W is used twice.

In `tied`, W maps x to the hidden layer and, transposed, the hidden layer
back to the output; W's gradient is the sum of the two contributions, and
the generated code shows both (`dW = ...` then `dW = dW + ...`).
"""

import numpy as np


def sigmoid(u):
    return 1 / (1 + np.exp(-u))


def net(W, V, x, t):
    u = W @ x
    h = 1 / (1 + np.exp(-u))
    yhat = V @ h
    L = np.sum((yhat - t) ** 2)
    return L


def tied(W, x, t):
    u = W @ x
    h = 1 / (1 + np.exp(-u))
    yhat = W.T @ h
    L = np.sum((yhat - t) ** 2)
    return L
