"""A hand-written gradient of examples/gradbench/lstm.py's ``lstm_objective``
with respect to ``main_params`` and ``extra_params``: the same forward
operations, keeping each cell's gate activations, its input row and
tanh of its new cell, then the reverse sweep written out once per cell (the
adjoints of the four gates concatenated into one row, as the gates were
sliced from one)."""

import numpy as np


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm_objective_grad(main_params, extra_params, state, sequence):
    w, w2 = main_params, extra_params
    b = state.shape[1]
    steps = sequence.shape[0] - 1
    layers = range(0, state.shape[0], 2)
    total_count = 0
    kept = []  # per step: (inp, last hidden, exp(ypred), its sum + 2, cells)
    for t in range(steps):
        inp = sequence[t]
        x = inp * w2[0]
        new_state = np.zeros_like(state)
        cells = []
        for i in layers:
            hidden, cell = state[i], state[i + 1]
            xh = np.concatenate((x, hidden, x, hidden))
            gates = xh * w[i] + w[i + 1]
            forget = _sigmoid(gates[0:b])
            ingate = _sigmoid(gates[b:2 * b])
            outgate = _sigmoid(gates[2 * b:3 * b])
            change = np.tanh(gates[3 * b:])
            cell_1 = cell * forget + ingate * change
            tc = np.tanh(cell_1)
            hidden_1 = outgate * tc
            cells.append((xh, cell, forget, ingate, outgate, change, tc))
            new_state[i] = hidden_1
            new_state[i + 1] = cell_1
            x = hidden_1
        ypred = x * w2[1] + w2[2]
        e = np.exp(ypred)
        s = np.sum(e) + 2
        kept.append((inp, x, e, s, cells))
        total_count += sequence[t + 1].shape[0]
        state = new_state
    dtotal = -1.0 / total_count
    dw = np.zeros_like(w)
    dw2 = np.zeros_like(w2)
    dstate = np.zeros_like(state)
    for t in reversed(range(steps)):
        inp, x, e, s, cells = kept[t]
        dynorm = dtotal * sequence[t + 1]
        dypred = dynorm - np.sum(dynorm) * (e / s)
        dw2[1] += dypred * x
        dw2[2] += dypred
        dx = dypred * w2[1]
        for i in reversed(layers):
            xh, cell, forget, ingate, outgate, change, tc = cells[i // 2]
            dh = dx + dstate[i]
            dc = dstate[i + 1] + dh * outgate * (1.0 - tc * tc)
            dgates = np.concatenate((dc * cell * forget * (1.0 - forget),
                                     dc * change * ingate * (1.0 - ingate),
                                     dh * tc * outgate * (1.0 - outgate),
                                     dc * ingate * (1.0 - change * change)))
            dw[i] += dgates * xh
            dw[i + 1] += dgates
            dxh = dgates * w[i]
            dstate[i] = dxh[b:2 * b] + dxh[3 * b:]
            dstate[i + 1] = dc * forget
            dx = dxh[0:b] + dxh[2 * b:3 * b]
        dw2[0] += dx * inp
    return dw, dw2
