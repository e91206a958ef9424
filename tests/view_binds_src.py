"""A piece of an array written in place, bound to a name, in functions with
loops or branches (s2s_ad/frontend/view_binds.py). In NumPy ``x = y[i]`` is a
view: a write into ``y`` between the binding and a read of ``x`` changes what
the read sees. tests/test_view_binds.py differentiates the functions of the
first part (no write comes between: accepted) against central differences and
compares their values with running them; those of the second part (a write
does come between, so the view's semantics matter) must be refused, located,
or match NumPy exactly."""

import numpy as np


def cell(weight, bias, hidden, memory, inp):
    """An LSTM cell, from its equations: the gates of the input and the hidden
    state, the memory kept by the forget gate and fed by the input gate, the
    new hidden state through the output gate."""
    gates = np.concatenate((inp, hidden, inp, hidden)) * weight + bias
    n = hidden.shape[0]
    forget = 1.0 / (1.0 + np.exp(-gates[0:n]))
    admit = 1.0 / (1.0 + np.exp(-gates[n:2 * n]))
    emit = 1.0 / (1.0 + np.exp(-gates[2 * n:3 * n]))
    memory = memory * forget + admit * np.tanh(gates[3 * n:])
    return emit * np.tanh(memory), memory


def stacked_step(weights, extra, state, inp):
    """One step of stacked cells: each cell's hidden state and memory written
    into two rows of the new state, the hidden row read back as the next
    cell's input (``x = new[i]``, a view of the row)."""
    new = np.copy(state)
    x = inp * extra[0]
    for i in range(0, len(state), 2):
        (new[i], new[i + 1]) = cell(weights[i], weights[i + 1], state[i], state[i + 1], x)
        x = new[i]
    return x * extra[1] + extra[2], new


def step_loss(weights, extra, state, inp):
    pred, new = stacked_step(weights, extra, state, inp)
    return np.sum(pred * pred) + np.sum(new * np.cos(new))


def sequence_loss(weights, extra, state, sequence):
    """The log-loss of a sequence: the step (a helper calling a helper) in a
    loop, the states kept in a list."""
    states = [state]
    total = 0.0
    inp = sequence[0]
    for t in range(len(sequence) - 1):
        pred, new = stacked_step(weights, extra, states[t], inp)
        states.append(new)
        total = total + np.sum(sequence[t + 1] * (pred - np.log(np.sum(np.exp(pred)))))
        inp = sequence[t + 1]
    return -total / (len(sequence) - 1)


def step_in_branch(weights, extra, state, inp, flag: int):
    if flag > 0:
        pred, new = stacked_step(weights, extra, state, inp)
        return np.sum(pred * pred) + np.sum(new)
    return np.sum(state * state) * np.sum(inp)


def bound_after_write(x, n: int):
    """``r`` is the row written just before; the next write is to another
    row, after the next binding."""
    y = np.zeros_like(x)
    r = x[0] * 1.0
    for i in range(n):
        y[i] = np.sin(r) * x[i]
        r = y[i]
    return np.sum(y * y) + np.sum(r * x[0])


def while_rows(x, w):
    """The same in a ``while`` loop, the row read by a helper in the next
    iteration."""
    y = np.zeros_like(x)
    r = w * 1.0
    k = 0
    while k < len(x):
        y[k] = _mix(r, x[k])
        r = y[k]
        k += 1
    return np.sum(r * w) + np.sum(y)


def _mix(u, v):
    return np.tanh(u) * v + u * 0.5


def branch_rows(x, t: float):
    """A row bound in one arm of a branch, read after it."""
    y = np.zeros_like(x)
    r = x[1] * 2.0
    for i in range(len(x)):
        y[i] = x[i] * r
        if t > 0:
            r = y[i]
        else:
            r = x[i] * t
    return np.sum(r ** 2) + np.sum(y)


def written_after_last_read(x):
    """The row's last read comes before a write into it: the gradient must
    not read the row again after that write (the forward pass keeps a copy)."""
    y = np.zeros((2, x.shape[1]))
    r = x[0] * 1.0
    for k in range(len(x)):
        y[0] = x[k] * r
        r = y[0]
    t = np.sum(r * x[1])
    y[0] = x[0] * 3.0
    return t + np.sum(y * y)


def tuple_and_walrus(x):
    y = np.zeros_like(x)
    h, c = x[0] * 1.0, x[1] * 1.0
    for i in range(0, len(x) - 1, 2):
        y[i], y[i + 1] = np.tanh(h + c), c * h
        h, c = y[i], y[i + 1]
    s = np.sum((m := y[0]) * m)
    return np.sum(h * c) + s


# -- a write comes between the binding and a read: refused, or NumPy's value --

def same_row_rewritten(a):
    y = np.zeros_like(a)
    for k in range(len(a)):
        y[k] = a[k] * a[k]
    r = y[0]
    for k in range(2):
        y[0] = r * a[k]
    return np.sum(r * a[1])


def rewritten_next_iteration(a):
    """Bound at the end of an iteration, the row is written at the start of
    the next one and then read."""
    y = np.zeros_like(a)
    r = a[0] * 1.0
    for k in range(len(a)):
        y[0] = np.sin(r) * a[k]
        r = y[0]
        y[0] = y[0] * 2.0
    return np.sum(r) + np.sum(y)


def rewritten_in_while(a):
    y = np.zeros_like(a)
    r = a[0] * 1.0
    k = 0
    while k < 3:
        y[0] = np.sin(r) * a[1]
        r = y[0]
        t = _mix(r, a[1])
        y[0] = a[0] * 2.0
        k += 1
    return np.sum(t) + np.sum(y * y)


def rewritten_in_branch(a, t: float):
    y = np.zeros_like(a)
    for k in range(len(a)):
        y[k] = a[k] * 2.0
    r = y[1]
    if t > 0:
        y[1] = a[0] * a[0]
    return np.sum(r * a[2])


def read_by_helper_after_write(a):
    y = np.zeros_like(a)
    r = a[0] * 1.0
    for k in range(len(a)):
        y[k] = a[k] * 2.0
        r = y[0]
        y[0] = r * 3.0
    return np.sum(_mix(r, a[1]))


def kept_by_helper(a):
    """``u`` is what ``_same`` returns: the row itself."""
    y = np.zeros_like(a)
    u = a[0] * 1.0
    for k in range(len(a)):
        y[0] = a[k] * u
        r = y[0]
        u = _same(r)
        y[0] = u * 3.0
    return np.sum(u * a[1])


def _same(v):
    return v


def tuple_bound(a):
    y = np.zeros_like(a)
    for k in range(2):
        y[k] = a[k] * a[k]
    r, s = y[0], y[1]
    for k in range(2):
        y[0] = r * a[k]
    return np.sum(r * a[1])


def chain_bound(a):
    y = np.zeros_like(a)
    for k in range(2):
        y[k] = a[k] * a[k]
    r = y[0][0:2]
    for k in range(2):
        y[0, 0:2] = r * a[k, 0:2]
    return np.sum(r * a[1, 0:2])


def conditional_bound(a):
    y = np.zeros_like(a)
    for k in range(2):
        y[k] = a[k] * a[k]
    r = y[0] if a[0, 0] > -100.0 else a[1]
    for k in range(2):
        y[0] = r * a[k]
    return np.sum(r * a[1])


def walrus_bound(a):
    y = np.zeros_like(a)
    for k in range(2):
        y[k] = a[k] * a[k]
    t = (r := y[0]) * 1.0
    for k in range(2):
        y[0] = r * a[k]
    return np.sum(r * a[1]) + np.sum(t)


def second_name(a):
    """``z = y``: a second name of the array written into."""
    y = np.zeros_like(a)
    z = y
    for k in range(len(a)):
        y[k] = a[k] * 2.0
    return np.sum(z * a)


def row_of_second_name(a):
    y = np.zeros_like(a)
    r = a[0] * 1.0
    for k in range(len(a)):
        y[k] = a[k] * r
        z = y
        r = z[k]
    return np.sum(r)


def listed(a):
    y = np.zeros_like(a)
    rows = []
    for k in range(len(a)):
        y[0] = a[k] * 2.0
        r = y[0]
        rows.append(r)
    return np.sum(rows[0] * a[0])


def read_by_nested_function(a):
    y = np.zeros_like(a)
    r = a[0] * 1.0

    def scaled():
        return r * 2.0
    for k in range(len(a)):
        y[0] = a[k] * 2.0
        r = y[0]
    return np.sum(scaled())


def rows_iterated(a):
    y = np.zeros_like(a)
    for k in range(len(a)):
        y[k] = a[k] * 2.0
    s = 0.0
    for row in y:
        y[0] = row * 0.5
        s = s + np.sum(row)
    return s


def recurrence_from_copy(a, x):
    """Its gradient module reads ``t3 = y[t2]`` again in the reverse loop (a
    row of an array made from a parameter), with no write between: the module
    read back from its file is differentiated."""
    y = a.copy()
    for i in range(1, len(x)):
        y[i] = y[i - 1] * x[i] + np.sin(y[i])
    return np.sum(y * y)


def swapped_view(a):
    """``np.swapaxes`` and ``np.moveaxis`` give views: the writes show in ``b``
    (these were differentiated as the zeros they were bound to)."""
    y = np.zeros_like(a)
    b = np.swapaxes(y, 0, 1)
    for k in range(len(a)):
        y[k] = a[k] * 2.0
    return np.sum(b * b)


def moved_view(a):
    y = np.zeros_like(a)
    b = np.moveaxis(y, 0, 1)
    for k in range(len(a)):
        y[k] = a[k] * 2.0
    return np.sum(b * b)


def swapped_before_writes(a):
    """A view read before the writes: accepted."""
    y = np.ones_like(a)
    b = np.swapaxes(y, 0, 1)
    s = np.sum(b * a.T)
    for k in range(len(a)):
        y[k] = a[k] * s
    return np.sum(y * y)
