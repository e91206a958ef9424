"""A stacked LSTM predicting each character of a sequence from the previous
one: the mean cross-entropy over the sequence (GradBench's lstm eval).

``main_params`` holds, for each layer, a row of gate weights then a row of
gate biases (4 b each: forget, input, output gates and the candidate);
``extra_params`` the input scale, output scale and output bias; ``state``
each layer's hidden row then its cell row."""

import numpy as np


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm_model(weight, bias, hidden, cell, inp):
    b = hidden.shape[0]
    gates = np.concatenate((inp, hidden, inp, hidden)) * weight + bias
    forget = sigmoid(gates[0:b])
    ingate = sigmoid(gates[b:2 * b])
    outgate = sigmoid(gates[2 * b:3 * b])
    change = np.tanh(gates[3 * b:])
    cell = cell * forget + ingate * change
    hidden = outgate * np.tanh(cell)
    return hidden, cell


def predict(w, w2, state, x):
    new_state = np.zeros_like(state)
    x = x * w2[0]
    for i in range(0, state.shape[0], 2):
        hidden, cell = lstm_model(w[i], w[i + 1], state[i], state[i + 1], x)
        x = hidden
        new_state[i] = hidden
        new_state[i + 1] = cell
    return x * w2[1] + w2[2], new_state


def lstm_objective(main_params, extra_params, state, sequence):
    total = 0.0
    count = 0
    inp = sequence[0]
    for t in range(sequence.shape[0] - 1):
        ypred, state = predict(main_params, extra_params, state, inp)
        ynorm = ypred - np.log(np.sum(np.exp(ypred)) + 2)
        ygold = sequence[t + 1]
        total += np.sum(ygold * ynorm)
        count += ygold.shape[0]
        inp = ygold
    return -total / count
