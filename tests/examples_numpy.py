"""Arguments for the NumPy examples (shared by tests and benchmarks)."""

import numpy as np


def mlp_args(rng, batch, n_in, hidden, n_out):
    return [rng.normal(0, 0.5, (n_in, hidden)), rng.normal(0, 0.1, hidden),
            rng.normal(0, 0.5, (hidden, n_out)), rng.normal(0, 0.1, n_out),
            rng.normal(size=(batch, n_in)), rng.normal(size=(batch, n_out))]
