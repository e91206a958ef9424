"""A two-layer perceptron with tanh and mean squared error.

X is a batch (rows are samples), W1, b1, W2, b2 the weights; the gradient
with respect to the weights comes back with the weights' shapes (b1 is
broadcast over the batch, so its adjoint is summed over it).
"""

import numpy as np


def mlp_loss(W1, b1, W2, b2, X, Y):
    H = np.tanh(X @ W1 + b1)
    P = H @ W2 + b2
    return np.mean((P - Y) ** 2)
