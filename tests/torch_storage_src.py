"""torch-flavoured functions where torch's result shares a tensor's storage
(``x.double()`` of a float64 tensor is ``x`` itself, ``x.expand(...)`` a
view, ``torch.from_numpy(a)`` the array's memory), written into or not.
tests/test_torch_storage.py differentiates them against central differences
of the functions themselves, run on tests/torch_standin.py (or torch), and
checks the refusals."""

import numpy as np

from torch_src import torch


# -- accepted: the copy is explicit, or nothing is written ---------------------

def double_then_clone_written(a, b, s):
    h = a * s
    v = h.double().clone()
    v[0] = b[2] * 3.0
    return torch.sum(h * b) + torch.sum(v * v)


def clone_then_double_written(a, b, s):
    h = a * s
    v = h.clone().double()
    v[1] = b[0] * s
    return torch.sum(h * b) + torch.sum(v * v)


def count_double_in_writing_function(a, b, s):
    h = torch.zeros(4, dtype=torch.float64)
    h[0] = s
    h[2] = b[1] * s
    p = torch.sum(a > 0).double()
    return torch.sum(h * a) * p


def double_read_only(a, b, s):
    h = a * s
    v = h.double()
    return torch.sum(h * b) + torch.sum(v * v)


def expand_read_only(a, b, s):
    h = (a * s).unsqueeze(0)
    return torch.sum(h.expand(3, 4) * b) + torch.sum(h.expand_as(torch.outer(b[:2], b)))


def contiguous_written(a, b, s):
    h = a * s
    v = h.contiguous()
    v[0] = b[2] * 3.0
    return torch.sum(h * b) + torch.sum(v * v)


def from_numpy_written(a, b, s):
    h = np.zeros(4)
    g = torch.from_numpy(h)
    g[1] = s * b[0]
    return np.sum(h * a) + np.sum(g * b)


def permute_one_axis(a, b, s):
    h = a * s
    return torch.sum(h.permute(0) * b) + torch.sum(torch.permute(h, (0,)) ** 2)


# -- refused: a write would show through the shared storage -------------------

def double_written(a, b, s):
    h = a * s
    v = h.double()
    v[0] = b[2] * 3.0
    return torch.sum(h * b) + torch.sum(v * v)


def zeros_double_written(a, b, s):
    h = torch.zeros(4, dtype=torch.float64)
    g = h.double()
    g[1] = s
    return torch.sum(h * a) + torch.sum(g * b)


def expand_written(a, b, s):
    h = a * s
    v = h.expand(4)
    v[0] = b[2] * 3.0
    return torch.sum(h * b) + torch.sum(v * v)


def as_tensor_float64_written(a, b, s):
    h = a * s
    v = torch.as_tensor(h, dtype=torch.float64)
    v[0] = b[2]
    return torch.sum(h * b) + torch.sum(v * v)
