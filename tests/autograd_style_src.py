"""Constructs of autograd-style NumPy code (model factories, unpacking
helpers, distributions' log-densities), written for these tests: each is
differentiated as it stands by tests/test_autograd_style.py."""

import numpy as np
from scipy.stats import t as student_t


def robust_regression(params, x, y):
    """Student-t errors with a fitted number of degrees of freedom."""
    w, log_df, log_scale = params[:-2], params[-2], params[-1]
    return -np.sum(student_t.logpdf(y, np.exp(log_df), x @ w, np.exp(log_scale)))


def unpack_mixture(params):
    weights = params["logits"] - np.log(np.sum(np.exp(params["logits"])))
    return weights, params["centres"], params["widths"]


def mixture_loglik(params, data):
    """The components read by zipping the tuple a helper returns, spread."""
    total = 0.0
    for weight, centre, width in zip(*unpack_mixture(params)):
        total = total + np.exp(weight) * np.sum(np.exp(-((data - centre) / width) ** 2))
    return np.log(total)


def layer(w, x, act=np.tanh):
    return act(x @ w)


def two_layers(w1, w2, x):
    """The first layer's activation left to the default, the second given."""
    return np.sum(layer(w2, layer(w1, x), np.sin) ** 2)


def scaled(f, x):
    return f(x) * 2.0


def passed_ufunc(x):
    return np.sum(scaled(np.exp, x) + scaled(np.log1p, x * x))


def make_model(n_in, n_out, scale):
    """A factory: closures reading its numbers (shapes, a scale)."""
    def unpack(params):
        return np.reshape(params[:n_in * n_out], (n_in, n_out)), params[n_in * n_out:]

    def predict(weights, bias, x):
        return np.tanh(x @ weights + bias) * scale

    def set_scale(value):
        nonlocal scale
        scale = value

    return unpack, predict, set_scale


unpack_model, predict_model, set_model_scale = make_model(3, 2, 1.5)


def model_loss(params, x, y):
    """The factory's closures called by a function of the module."""
    weights, bias = unpack_model(params)
    return np.sum((predict_model(weights, bias, x) - y) ** 2)
