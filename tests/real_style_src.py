"""Objectives written the way scientific and machine-learning NumPy code is
written in the wild (autograd-style examples, JAX tutorials, scipy.optimize
objectives): plain ``import numpy as np``, SciPy's special functions and
distributions, helpers, loops over time steps, parameters in lists of tuples
and dicts. Differentiated unmodified by tests/test_real_style.py."""

import numpy as np
import scipy.special
from scipy.special import expit, gammaln, log_expit, logsumexp, xlogy
from scipy.optimize import rosen as scipy_rosen
from scipy.stats import multivariate_normal, norm, poisson


# -- a small classifier: a list of (W, b) layers, integer labels ------------

def mlp_log_probs(layers, X):
    h = X
    for W, b in layers[:-1]:
        h = np.tanh(h @ W + b)
    W, b = layers[-1]
    scores = h @ W + b
    return scores - logsumexp(scores, axis=1, keepdims=True)


def mlp_objective(layers, X, labels, l2=0.01):
    logp = mlp_log_probs(layers, X)
    picked = logp[np.arange(X.shape[0]), labels]
    penalty = sum(np.sum(W ** 2) for W, _ in layers)
    return -np.mean(picked) + l2 * penalty


# -- Gaussian-process regression: the negative log marginal likelihood ------

def rbf_kernel(log_params, A, B):
    amplitude = np.exp(log_params[0])
    lengths = np.exp(log_params[1:])
    gaps = A[:, np.newaxis, :] / lengths - B[np.newaxis, :, :] / lengths
    return amplitude * np.exp(-0.5 * np.sum(gaps ** 2, axis=-1))


def gp_objective(params, X, y):
    noise = np.exp(params[0]) + 1e-4
    K = rbf_kernel(params[1:], X, X) + noise * np.eye(len(y))
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    n = y.shape[0]
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(L))) + 0.5 * n * np.log(2 * np.pi)


# -- logistic regression with SciPy's stable pieces ---------------------------

def logistic_objective(w, X, t):
    p = expit(X @ w[1:] + w[0])
    cross = -np.sum(xlogy(t, p) + xlogy(1.0 - t, 1.0 - p))
    return cross / len(t) + 0.5 * np.dot(w, w) / 10.0


# -- negative binomial counts: gammaln, log_expit -----------------------------

def negbin_objective(params, counts):
    r = np.exp(params[0])
    logit_p = params[1]
    ll = (gammaln(counts + r) - gammaln(r) - gammaln(counts + 1.0)
          + counts * log_expit(logit_p) + r * log_expit(-logit_p))
    return -np.sum(ll)


def poisson_objective(beta, X, counts):
    rates = np.exp(X @ beta)
    return -np.sum(poisson.logpmf(counts, rates))


# -- a hidden Markov model's forward pass in log space ------------------------

def hmm_objective(log_pi, log_A, log_B, observations):
    log_A = log_A - logsumexp(log_A, axis=1, keepdims=True)
    log_B = scipy.special.log_softmax(log_B, axis=1)
    alpha = scipy.special.log_softmax(log_pi) + log_B[:, observations[0]]
    for y in observations[1:]:
        alpha = logsumexp(alpha[:, None] + log_A, axis=0) + log_B[:, y]
    return -logsumexp(alpha)


# -- black-box variational inference: reparameterised samples ----------------

def log_joint(z, data):
    prior = np.sum(norm.logpdf(z, 0.0, 2.0), axis=1)
    lik = np.sum(norm.logpdf(data[None, :], z[:, :1], np.exp(z[:, 1:])), axis=1)
    return prior + lik


def elbo_objective(var_params, eps, data):
    D = var_params.shape[0] // 2
    mean, log_std = var_params[:D], var_params[D:]
    z = mean + eps * np.exp(log_std)
    entropy = 0.5 * D * (1.0 + np.log(2 * np.pi)) + np.sum(log_std)
    return -(entropy + np.mean(log_joint(z, data)))


# -- an ODE integrated with RK4, the right-hand side passed as a function ----

def rk4(f, y, dt, steps):
    path = [y]
    for _ in range(steps):
        k1 = f(y)
        k2 = f(y + 0.5 * dt * k1)
        k3 = f(y + 0.5 * dt * k2)
        k4 = f(y + dt * k3)
        y = y + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        path.append(y)
    return path


def pendulum_objective(params, y0):
    damping, stiffness = params[0], params[1]

    def rhs(s):
        return np.array([s[1], -stiffness * np.sin(s[0]) - damping * s[1]])

    path = np.stack(rk4(rhs, y0, 0.05, 20))
    energy = 0.5 * path[:, 1] ** 2 + stiffness * (1.0 - np.cos(path[:, 0]))
    times = 0.05 * np.arange(path.shape[0])
    return np.trapezoid(energy, times) + np.sum(np.diff(path[:, 0]) ** 2)


# -- a vanilla RNN over a (time, batch, features) array, dict parameters ------

def rnn_objective(params, inputs, targets):
    hidden = np.repeat(params["h0"], inputs.shape[1], axis=0)  # a learned initial state
    loss = 0.0
    for x, t in zip(inputs, targets):
        hidden = np.tanh(np.concatenate((x, hidden), axis=1) @ params["W"] + params["b"])
        probs = scipy.special.softmax(hidden @ params["W_out"], axis=1)
        loss = loss - np.sum(t * np.log(probs))
    return loss + 1e-3 * np.sum(params["W"] ** 2)


# -- a tiny convolutional layer: patches, tensordot, max-pooling, einsum -----

def conv_objective(filters, images, readout):
    n, c, height, width = images.shape
    k = filters.shape[-1]
    rows = []
    for i in range(height - k + 1):
        cols = []
        for j in range(width - k + 1):
            patch = images[:, :, i:i + k, j:j + k]
            cols.append(np.tensordot(patch, filters, axes=([1, 2, 3], [1, 2, 3])))
        rows.append(np.stack(cols, axis=-1))
    fmap = np.maximum(np.stack(rows, axis=-2), 0.0)  # (n, filters, h, w)
    m, f, h, w = fmap.shape
    pooled = np.max(fmap.reshape((m, f, h // 2, 2, w // 2, 2)), axis=(3, 5))
    scores = np.einsum("nfhw,fhwk->nk", pooled, readout)
    return np.sum(scores ** 2) / n


# -- scipy.optimize-style test problems ----------------------------------------

def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def probit_objective(beta, X, y):
    z = X @ beta
    return -np.sum(y * norm.logcdf(z) + (1.0 - y) * norm.logsf(z))


# -- a 1-D heat equation stepped explicitly, periodic boundary ----------------

def heat_objective(log_kappa, u0, target):
    kappa = np.exp(log_kappa)
    u = u0.copy()
    for _ in range(15):
        lap = np.roll(u, 1) - 2.0 * u + np.roll(u, -1)
        u = u + 0.2 * kappa * lap
    return np.mean((u - target) ** 2)


# -- helpers used in a loop: a training-style sum over minibatches ------------

def batched_objective(w, X, t, batch=3):
    total = 0.0
    for start in range(0, X.shape[0], batch):
        total = total + logistic_objective(w, X[start:start + batch], t[start:start + batch])
    return total


# -- parameters as a flat list of arrays of different shapes ------------------

def l2_of_weights(weights, X, y):
    """weights = [W1, b1, W2, b2]: a plain list of arrays, as optimisers keep them."""
    W1, b1, W2, b2 = weights
    pred = np.tanh(X @ W1 + b1) @ W2 + b2
    penalty = sum(np.sum(w ** 2) for w in weights) + sum(map(np.sum, weights))
    return np.mean((pred - y) ** 2) + 0.01 * penalty


# -- a flat parameter vector unpacked by running offsets ----------------------

def unpack_flat(theta):
    shapes = [(3, 4), (4,), (4, 2), (2,)]
    parts = []
    offset = 0
    for shape in shapes:
        size = int(np.prod(shape))
        parts.append(theta[offset:offset + size].reshape(shape))
        offset += size
    return parts


def flat_objective(theta, X, y):
    W1, b1, W2, b2 = unpack_flat(theta)
    out = np.tanh(X @ W1 + b1) @ W2 + b2
    return np.sum((out[:, 0] - y) ** 2) / np.prod(out.shape) + np.sum(out[:, 1] ** 2) / X.size


def flattened_penalty(layers, X):
    """Every weight and bias in one vector, as an L2 penalty over all
    parameters is often written."""
    flat = np.concatenate([W.ravel() for W, _ in layers] + [b.ravel() for _, b in layers])
    sizes = (flat.shape[0],) + (X.shape[0],)
    return np.dot(flat, flat) / sizes[0] + np.sum(mlp_log_probs(layers, X) ** 2) / sizes[1]


# -- a Gaussian mixture: mixing weights by softmax, full covariances ----------

def gmm_objective(log_weights, means, chol_factors, data):
    log_weights = log_weights - logsumexp(log_weights)
    parts = []
    for k in range(means.shape[0]):
        cov = chol_factors[k] @ chol_factors[k].T + 0.5 * np.eye(data.shape[1])
        parts.append(log_weights[k] + multivariate_normal.logpdf(data, means[k], cov))
    return -np.sum(logsumexp(np.stack(parts, axis=1), axis=1))


# -- particles: pairwise energies over the upper triangle ----------------------

def repulsion_energy(positions, charges):
    gaps = positions[:, None, :] - positions[None, :, :]
    dist = np.sqrt(np.sum(gaps ** 2, axis=-1) + 1e-9)
    pairs = np.triu_indices(positions.shape[0], 1)
    coulomb = np.sum(np.outer(charges, charges)[pairs] / dist[pairs])
    spring = np.sum((dist[np.tril_indices(positions.shape[0], -1)] - 1.0) ** 2)
    return coulomb + 0.5 * spring


def semi_lagrangian(vx, field):
    """Advection by a velocity field, reading the field at cells found by
    rounding down a computed position (a fluid simulation's step)."""
    rows, cols = field.shape
    ys, xs = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    src = (ys - vx).ravel()
    below = np.floor(src).astype(int)
    weight = src - below
    lo, hi = np.mod(below, rows), np.mod(below + 1, rows)
    flat = (1.0 - weight) * field[lo, xs.ravel()] + weight * field[hi, xs.ravel()]
    return np.sum(flat.reshape(rows, cols) ** 2)


# -- still refused, located (tests/test_real_style.py marks them xfail) ---------

def smoothed_signal(kernel, signal):
    return np.sum(np.convolve(signal, kernel, mode="valid") ** 2)


def library_objective(x):
    return scipy_rosen(x) + np.sum(x ** 2)
