"""PyTorch-flavoured objectives, written for this repository from the
objectives' mathematical definitions in the idiom of GradBench's PyTorch
tools: ``torch`` functions with ``dim=``/``keepdim=``, tensor methods
(``.sum(1)``, ``.unsqueeze``, ``.view``, ``.expand``, ``.pow``, ``.T``),
``torch.nn.functional.pad``, ``torch.special.multigammaln``.
tests/test_torch_numpy.py differentiates them with s2s-ad (the generated code
calls NumPy, never torch) and compares with central differences of these
functions themselves run on float64 tensors, and with torch.autograd, where
torch is installed; where it is not, on the stand-in of tests/torch_standin.py
(set S2S_TORCH_STANDIN=1 to use the stand-in even where torch is installed).
Tensors are made float64 (``dtype=torch.float64``) wherever a float tensor is
created, as s2s-ad computes in float64."""

import math
import os

try:
    if os.environ.get("S2S_TORCH_STANDIN"):
        raise ImportError("the stand-in was asked for")
    import torch
    import torch.nn.functional as F
    REAL_TORCH = True
except ImportError:
    from torch_standin import torch
    F = torch.nn.functional
    REAL_TORCH = False


def log_sum_exp(v):
    top = torch.max(v)
    return top + torch.log(torch.sum(torch.exp(v - top)))


def nearest_cost(points, centers):
    """k-means: each point's squared distance to its nearest center."""
    across = (points ** 2).sum(1)[None, :] + (centers ** 2).sum(dim=1)[:, None]
    dists = across - 2 * torch.matmul(centers, points.T)
    (closest, _) = torch.min(dists, dim=0)
    return closest.sum()


def wishart_prior(alphas, diag, lower, gamma, m):
    d = diag.shape[1]
    n = d + m + 1
    frob = torch.sum(torch.exp(diag) ** 2, dim=1) + torch.sum(lower ** 2, dim=1)
    out = torch.sum(0.5 * gamma * gamma * frob - m * torch.sum(diag, 1))
    c = n * d * math.log(gamma / math.sqrt(2))
    return out - alphas.shape[0] * (c - torch.special.multigammaln(torch.tensor(0.5 * n, dtype=torch.float64), d))


def mixture_loss(alphas, means, icf, x, gamma, m):
    """Gaussian mixture negative log-likelihood, the Cholesky factors read
    from ``icf`` (the log-diagonal, then the strict lower triangle by
    columns) through an index matrix built with ``pad``, ``cumsum``,
    ``arange(d - 1, 0, -1)``, ``expand``, ``.T`` and ``tril``."""
    n, d = x.shape
    diag = icf[:, :d]
    starts = F.pad(torch.cumsum(torch.arange(d - 1, 0, -1), 0) + d, (1, 0), value=d)
    offsets = starts - torch.arange(1, d + 1)
    idx = torch.tril(torch.arange(d).expand((d, d)).T + offsets[None, :], -1)
    factors = icf[:, idx] * (idx > 0)[None, ...]
    centred = x[:, None, :] - means[None, ...]
    z = torch.exp(diag) * centred + torch.einsum("ijk,mik->mij", factors, centred)
    inner = alphas + torch.sum(diag, 1) - 0.5 * torch.sum(z ** 2, 2)
    fit = torch.sum(torch.logsumexp(inner, 1)) - n * torch.logsumexp(alphas, 0)
    return -fit + wishart_prior(alphas, diag, icf[:, d:], gamma, m)


def mixture_loss_rows(alphas, means, diag, lower, x):
    """The same likelihood with the factors written by index arrays:
    ``repeat_interleave``, ``cat`` of a comprehension, ``zeros(..., dtype=)``."""
    k, d = means.shape
    cols = torch.repeat_interleave(torch.arange(d - 1), torch.arange(d - 1, 0, -1))
    rows = torch.cat([torch.arange(c + 1, d) for c in range(d - 1)])
    factors = torch.zeros((k, d, d), dtype=lower.dtype)
    factors[:, rows, cols] = lower
    centred = x[:, None, :] - means[None, ...]
    z = torch.exp(diag) * centred + torch.einsum("ijk,mik->mij", factors, centred)
    inner = alphas + diag.sum(dim=1) - 0.5 * z.pow(2).sum(dim=2)
    return x.shape[0] * torch.logsumexp(alphas, dim=0) - torch.logsumexp(inner, dim=1).sum()


def rotate(rot, pt):
    """Rodrigues' rotation of ``pt`` by the angle-axis vector ``rot``."""
    sq = torch.sum(rot ** 2)
    if sq != 0.0:
        theta = torch.sqrt(sq)
        axis = rot / theta
        cross = torch.linalg.cross(axis, pt)
        along = torch.dot(axis, pt) * (1.0 - torch.cos(theta))
        return pt * torch.cos(theta) + cross * torch.sin(theta) + axis * along
    return pt + torch.cross(rot, pt)


def distort(radial, p):
    r2 = torch.sum(p ** 2)
    return p * (1.0 + radial[0] * r2 + radial[1] * r2 * r2)


def reprojection(cam, pt, w, feat):
    """Bundle adjustment: the weighted reprojection error of one observation
    (a helper calling helpers; ``vjp`` gives its Jacobian's rows)."""
    seen = rotate(cam[0:3], pt - cam[3:6])
    projected = distort(cam[9:11], seen[0:2] / seen[2]) * cam[6] + cam[7:9]
    return w * (projected - feat)


def reprojection_cost(cam, pt, w, feat):
    return torch.sum(reprojection(cam, pt, w, feat) ** 2)


def lstm_cell(weight, bias, hidden, cell, inp):
    gates = torch.cat((inp, hidden, inp, hidden)) * weight + bias
    h = hidden.shape[0]
    forget = torch.sigmoid(gates[0:h])
    ingate = torch.sigmoid(gates[h:2 * h])
    outgate = torch.sigmoid(gates[2 * h:3 * h])
    change = torch.tanh(gates[3 * h:])
    cell = cell * forget + ingate * change
    return outgate * torch.tanh(cell), cell


def lstm_predict(weights, extra, state, inp):
    """One step of the stacked cells; the new state's rows written in turn
    into a copy taken without derivative (every row is written)."""
    new_state = state.clone().detach()
    x = inp * extra[0]
    for i in range(0, state.shape[0], 2):
        h, c = lstm_cell(weights[i], weights[i + 1], state[i], state[i + 1], x)
        new_state[i], new_state[i + 1] = h, c
        x = h
    return x * extra[1] + extra[2], new_state


def lstm_loss(weights, extra, state, sequence):
    """An LSTM's log-loss over a sequence."""
    total = 0.0
    inp = sequence[0]
    for t in range(sequence.shape[0] - 1):
        pred, state = lstm_predict(weights, extra, state, inp)
        norm = pred - torch.log(torch.sum(torch.exp(pred)))
        gold = sequence[t + 1]
        total = total + torch.sum(gold * norm)
        inp = gold
    return -total / ((sequence.shape[0] - 1) * sequence.shape[1])


def lstm_predict_rows(weights, extra, state, inp):
    """The step as GradBench's PyTorch LSTM writes it: the pair a cell
    returns written into two rows of a detached copy of the state, the hidden
    row then bound to the name of the next cell's input (``x = new_state[i]``,
    a view of the row, read before any later write into it)."""
    new_state = state.clone().detach()
    x = inp * extra[0]
    for i in range(0, len(state), 2):
        (new_state[i], new_state[i + 1]) = lstm_cell(weights[i], weights[i + 1], state[i],
                                                     state[i + 1], x)
        x = new_state[i]
    return (x * extra[1] + extra[2], new_state)


def lstm_loss_rows(weights, extra, state, sequence):
    """The log-loss over a sequence, the states kept in a list the loop
    appends to; the step is a helper calling a helper."""
    states = [state]
    total = 0.0
    inp = sequence[0]
    for t in range(len(sequence) - 1):
        pred, new_state = lstm_predict_rows(weights, extra, states[t], inp)
        states.append(new_state)
        gold = sequence[t + 1]
        total += torch.sum(gold * (pred - torch.log(torch.sum(torch.exp(pred)))))
        inp = gold
    return -total / ((len(sequence) - 1) * sequence.shape[1])


def euler_rotation(angles):
    """A rotation matrix from three angles, entries written into ``torch.eye``."""
    rx = torch.eye(3, dtype=torch.float64)
    rx[1, 1] = torch.cos(angles[0])
    rx[2, 1] = torch.sin(angles[0])
    rx[1, 2] = -rx[2, 1]
    rx[2, 2] = rx[1, 1]
    rz = torch.eye(3, dtype=torch.float64)
    rz[0, 0] = torch.cos(angles[1])
    rz[1, 0] = torch.sin(angles[1])
    rz[0, 1] = -rz[1, 0]
    rz[1, 1] = rz[0, 0]
    return rz @ rx


def posed_points(angles, points, weights):
    """Skinning-like: points rotated, shifted, blended; ``.unsqueeze``,
    ``.view``/``.reshape``, ``torch.transpose``, ``torch.stack(dim=)``,
    ``.t()`` and ``keepdim=``."""
    rot = euler_rotation(angles)
    moved = torch.transpose(rot @ torch.transpose(points, 0, 1), 0, 1)
    both = torch.stack([moved, points * 0.5], dim=0)
    blend = torch.sum(both * weights.unsqueeze(-1), 0)
    flat = blend.view(-1).reshape(points.shape[0], 3)
    scale = torch.sum(flat ** 2, dim=1, keepdim=True).sqrt()
    return torch.sum(flat / (1.0 + scale)) + flat.t().sum() * angles.sum()


def item_scale(x):
    """``.item()`` is the number itself, differentiated as the function
    computes it (torch.autograd treats it as a constant: its gradient
    differs from central differences, and from s2s-ad's, by that term)."""
    return torch.sum(x ** 2) * x[0].item() + torch.tensor([1, 2], dtype=torch.float64) @ x[:2]


def statistics(x, y):
    """torch's reductions where they differ from NumPy's: ``std``/``var``
    unbiased by default, ``max(dim)`` the pair (values, indices),
    ``torch.sum`` of a bool tensor (made float64 by ``.double()``), ``amax``, ``cumsum``, ``softmax``."""
    spread = torch.std(x) + torch.var(x, dim=0).sum() + torch.var(x, dim=1, unbiased=False).sum()
    best = torch.max(x, dim=1).values.sum() + torch.amax(y, dim=(0, 1))
    positive = torch.sum(x > 0).double()
    run = torch.cumsum(y, dim=1)[:, -1].sum()
    soft = torch.sum(F.softmax(x, dim=1) * x)
    return spread + best + positive * 0.1 + run + soft + torch.logsumexp(y, dim=1, keepdim=True).sum()


def activations_and_losses(x, y):
    """torch.nn.functional's activations and losses: ``softplus`` (with its
    switch to the line above ``threshold``), ``mse_loss``/``l1_loss`` and their
    reductions, ``leaky_relu``, ``elu``, ``silu``."""
    a = torch.sum(F.softplus(x * y) + F.softplus(x * 30.0, beta=0.5, threshold=10.0))
    b = F.mse_loss(x, y) + F.l1_loss(2.0 * x, y, reduction="sum") + torch.sum(
        F.mse_loss(x, y, reduction="none") * y)
    c = torch.sum(F.leaky_relu(x, 0.1) * y) + torch.sum(F.elu(x * y)) + torch.sum(F.silu(x) * y)
    return a + b + c


def shapes(x, v):
    """Shape functions: ``expand``, ``permute``, ``flip``, ``roll``,
    ``tril``/``triu``, ``diagonal``, ``repeat`` (NumPy's tile), ``unsqueeze``,
    ``squeeze``, ``torch.where``, ``torch.cat(dim=)``, ``torch.outer``."""
    big = v.unsqueeze(0).expand(3, v.shape[0])
    a = torch.sum(big.permute(1, 0) * x[:, :3])
    b = torch.sum(torch.flip(x, dims=(0,)) * torch.roll(x, 1, dims=1))
    c = torch.sum(torch.tril(x[:3, :3], -1) + torch.triu(x[:3, :3]) * 2.0) + torch.diagonal(x).sum()
    d = torch.sum(v.repeat(2) ** 2) + torch.sum(x[:, 0:1].squeeze(1) * v[0])
    e = torch.sum(torch.where(x > 0, x, 0.5 * x)) + torch.sum(torch.cat([x, x * 2], dim=1) ** 2)
    return a + b + c + d + e + torch.sum(torch.outer(v, v))


def helper_of_helper(x):
    return 2.0 * log_sum_exp(x * x) + nearest_cost(x.view(-1, 1), x[:2].unsqueeze(1))


def in_a_loop(x, n: int):
    total = torch.zeros((), dtype=torch.float64)
    for k in range(n):
        total = total + torch.sum(torch.tanh(x * (k + 1)) ** 2, dim=0)
    return total


def in_a_branch(x, flag: int):
    if flag > 0:
        return torch.sum(torch.sigmoid(x) * x)
    return torch.logsumexp(x, dim=0)


def detach_scale(x):
    """``x.detach()`` is a constant of the derivative: the gradient is
    ``0.5 x + sin x``."""
    return 0.5 * torch.sum(x * x.detach()) + torch.sum(torch.sin(x).detach().clone() * x)


# refused, located

def detach_then_write(x):
    y = x * 2.0
    z = y.detach()
    z[0] = 1.0
    return torch.sum(y * z)


def max_of_two(x, y):
    return torch.sum(torch.max(x, y))


def unmapped_function(x):
    return torch.sum(torch.special.zeta(x, 2.0))


def sum_with_dtype(x):
    return torch.sum(x, dtype=torch.float32)


def expand_minus_one(x):
    return torch.sum(x.unsqueeze(0).expand(3, -1))


def stacked_rows(x, w):
    """``torch.stack`` of a comprehension of rows (a range known while
    lowering), as GradBench's hand tracking stacks per-bone transforms."""
    rows = torch.stack([x[i] * w[i] + torch.sin(x[i + 1]) for i in range(3)])
    return torch.sum(rows ** 2) + torch.sum(torch.stack([w * k for k in range(2)], dim=1))


def annotated(x: torch.Tensor, scale: float = 2.0) -> torch.Tensor:
    """Annotations naming torch (``torch.Tensor``) are not read as code."""
    def grow(y: torch.Tensor) -> torch.Tensor:
        return torch.exp(y) * scale
    z: torch.Tensor = grow(x)
    return torch.sum(z ** 2) + torch.sum(x)
