"""benchmarks/workloads_overhead.py builds its rows from s2s-ad's internals
(the hvp product's gradient and tangent names): each row's two contenders,
the call through the API and the generated function it ends in, run and
give the same result, so a change inside s2s-ad that the benchmark reads
shows here rather than when the benchmark is next run."""

import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _flat(value):
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _flat(v)]
    return [np.asarray(value, dtype=float)]


def test_every_overhead_row_runs_and_both_contenders_agree():
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        import workloads_overhead
        rows = workloads_overhead._rows()
    finally:
        sys.path.remove(os.path.join(ROOT, "benchmarks"))
    assert len(rows) >= 9
    for label, api, direct in rows:
        if label.startswith("vjp"):  # (value, pullback) against the forward pass alone
            api(), direct()
            continue
        got, want = _flat(api()), _flat(direct())
        assert len(got) == len(want), label
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, err_msg=label)
