"""Array workloads: a two-layer MLP loss (small and large) and softmax
cross-entropy, against hand-written gradients and, where installed, autograd
(HIPS), JAX (eager and jit) and PyTorch (CPU, eager)."""

import os
import sys

import numpy as np

from harness import Workload

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "examples"))

from mlp import mlp_loss  # noqa: E402
from softmax_xent import softmax_xent  # noqa: E402


def mlp_hand(W1, b1, W2, b2, X, Y):
    A = X @ W1 + b1
    H = np.tanh(A)
    P = H @ W2 + b2
    dP = (2.0 / P.size) * (P - Y)
    # np.dot, not .T @: NumPy's matmul is slow on transposed views
    dW2 = np.dot(H.T, dP)
    db2 = dP.sum(axis=0)
    dA = np.dot(dP, W2.T) * (1.0 - H * H)
    dW1 = np.dot(X.T, dA)
    db1 = dA.sum(axis=0)
    return dW1, db1, dW2, db2


def softmax_hand(W, X, T):
    Z = X @ W
    Z = Z - Z.max(axis=1, keepdims=True)
    E = np.exp(Z)
    S = E / E.sum(axis=1, keepdims=True)
    return np.dot(X.T, (S * T.sum(axis=1, keepdims=True) - T) / len(X))


def _mlp_args(batch, n_in, hidden, n_out=1, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(0, n_in ** -0.5, (n_in, hidden)), rng.normal(0, 0.1, hidden),
            rng.normal(0, hidden ** -0.5, (hidden, n_out)), rng.normal(0, 0.1, n_out),
            rng.normal(size=(batch, n_in)), rng.normal(size=(batch, n_out)))


def _softmax_args(batch=256, n_in=128, classes=10, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(0, n_in ** -0.5, (n_in, classes)), rng.normal(size=(batch, n_in)),
            np.eye(classes)[rng.integers(0, classes, batch)])


def _contenders(fn_name, args, wrt):
    """Other AD tools, only those already installed."""
    out = {}
    try:
        import autograd
        import autograd.numpy as anp

        def mlp(W1, b1, W2, b2, X, Y):
            H = anp.tanh(X @ W1 + b1)
            return anp.mean((H @ W2 + b2 - Y) ** 2)

        def xent(W, X, T):
            Z = X @ W
            m = anp.max(Z, axis=1, keepdims=True)
            lse = m + anp.log(anp.sum(anp.exp(Z - m), axis=1, keepdims=True))
            return -anp.sum(T * (Z - lse)) / len(X)

        g = autograd.grad({"mlp": mlp, "xent": xent}[fn_name], wrt)
        out["autograd"] = lambda: g(*args)
    except ImportError:
        pass
    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)  # float64, as the NumPy contenders

        def jmlp(W1, b1, W2, b2, X, Y):
            return jnp.mean((jnp.tanh(X @ W1 + b1) @ W2 + b2 - Y) ** 2)

        def jxent(W, X, T):
            Z = X @ W
            return -jnp.sum(T * jax.nn.log_softmax(Z, axis=1)) / len(X)

        jge = jax.grad({"mlp": jmlp, "xent": jxent}[fn_name], wrt)
        jg = jax.jit(jge)
        jargs = [jnp.asarray(a) for a in args]
        out["jax (eager)"] = lambda: jax.block_until_ready(jge(*jargs))
        out["jax (jit)"] = lambda: jax.block_until_ready(jg(*jargs))
    except ImportError:
        pass
    try:
        import torch

        torch.set_num_threads(1)  # one thread, as NumPy's BLAS with OPENBLAS_NUM_THREADS=1
        targs = [torch.tensor(a) for a in args]
        wrt_list = wrt if isinstance(wrt, (list, tuple)) else [wrt]

        def torch_grad():
            leaves = [t.detach().requires_grad_(i in wrt_list) for i, t in enumerate(targs)]
            if fn_name == "mlp":
                W1, b1, W2, b2, X, Y = leaves
                loss = torch.mean((torch.tanh(X @ W1 + b1) @ W2 + b2 - Y) ** 2)
            else:
                W, X, T = leaves
                loss = -torch.sum(T * torch.log_softmax(X @ W, dim=1)) / len(X)
            return torch.autograd.grad(loss, [leaves[i] for i in wrt_list])

        out["torch (eager)"] = torch_grad
    except ImportError:
        pass
    return out


MLP_WRT = (0, 1, 2, 3)
SMALL = _mlp_args(32, 16, 32)
LARGE = _mlp_args(1024, 256, 512)
XENT = _softmax_args()

WORKLOADS = [
    Workload("MLP loss 32x16, hidden 32", mlp_loss, mlp_hand, SMALL, wrt=MLP_WRT,
             others=_contenders("mlp", SMALL, MLP_WRT)),
    Workload("MLP loss 1024x256, hidden 512", mlp_loss, mlp_hand, LARGE, wrt=MLP_WRT,
             others=_contenders("mlp", LARGE, MLP_WRT)),
    Workload("softmax x-ent 256x128, 10 classes", softmax_xent, softmax_hand, XENT, wrt=0,
             others=_contenders("xent", XENT, 0)),
]
