"""`np.concatenate`, `np.hstack`, `np.vstack` (and torch-flavoured
`torch.cat`) of lists of arrays of any length (tests/test_list_joins.py): the
pieces' lengths along the joined axis vary and are known only when the code
runs. Plain Python: the tests compare s2s-ad's derivatives with central
differences of these. f(x, n): x a 1-d array of at least 4 items, n an int
(at least 1)."""

import os

import numpy as np

try:
    if os.environ.get("S2S_TORCH_STANDIN"):
        raise ImportError("the stand-in was asked for")
    import torch
except ImportError:
    from torch_standin import torch


def joined(x, n):
    ys = []
    for i in range(n):
        ys.append(np.sin(x[: i % 3 + 1] * (i + 1.0)))   # pieces of 1, 2, 3 items
    z = np.concatenate(ys)
    return np.sum(z * z * np.arange(z.shape[0]))


def joined_on_axis_1(x, n):
    ys = []
    for i in range(n):
        ys.append(np.outer(x[:2], x[: i % 3 + 1]) * (i + 1.0))
    z = np.concatenate(ys, axis=1)
    w = np.concatenate(ys, axis=-1)
    return np.sum(np.tanh(z) * np.arange(z.shape[1])) + np.sum(w[0] ** 3)


def hstacked(x, n):
    ys = []
    for i in range(n):
        ys.append(np.cos(x[i % 3:] * 2.0))
    blocks = [np.outer(x[:2], x[: i + 1]) for i in range(n)]
    return np.sum(np.hstack(ys) ** 2) + np.sum(np.sin(np.hstack(blocks)))


def vstacked(x, n):
    rows = []
    for i in range(n):
        rows.append(np.sin(x * (i + 1.0)))
    m = np.vstack(rows)
    blocks = []
    for i in range(n):
        blocks.append(np.outer(x[: i + 1], x))
    return np.sum(m * m) + np.sum(np.sin(np.vstack(blocks)))


def _joined_in_helper(x, n):
    ys = [x[:1]]
    for i in range(n):
        ys.append(np.tanh(ys[-1] * 0.5 + x[i % 4]) * x[: len(ys[-1])])
        ys.append(x[: i % 2 + 1] ** 2)
    return np.concatenate(ys[1:])


def in_a_helper_and_a_loop(x, n):
    s = 0.0
    for t in range(2):
        z = _joined_in_helper(x * (t + 1.0), n)
        s = s + np.sum(z * np.cos(z))
        if t == 1:
            s = s + np.sum(np.concatenate([z, x]) ** 2)
    return s


def torch_cat(x, n):
    parts = []
    h = x[:2]
    for i in range(n):
        h = torch.tanh(h * 1.5 + 0.1 * i)
        parts.append(h[: i % 2 + 1])
    z = torch.cat(parts, dim=0)
    return torch.sum(z * z * (1.0 + torch.arange(z.shape[0])))


# still refused, located

def axis_none(x, n):
    ys = []
    for i in range(n):
        ys.append(x * i)
    return np.sum(np.concatenate(ys, axis=None))
