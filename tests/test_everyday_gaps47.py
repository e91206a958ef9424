"""Forms everyday code writes that s2s-ad once refused or checked loosely
(tests/everyday_gaps47_src.py): each gradient against central finite
differences in float64 through `s2s_ad.grad`, `s2s_ad.vjp` and `s2s_ad.jvp`;
what would be wrong is refused, located, by name."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests import everyday_gaps47_src as S
from tests.test_everyday_gaps import _differences, _flat, check

XS = [0.7, -1.3, 0.4, 1.1]


# -- 1. a run-time list slice under checkpoint=True ----------------------------

@pytest.mark.parametrize("f, args, wrt", [
    (S.slice_head, (XS, 3), [0]),
    (S.slice_head, (XS, -1), [0]),
    (S.slice_last, (XS,), [0]),
    (S.slice_built, (0.8, 2), [0]),
    (S.slice_helper, (XS, 2), [0]),
    (S.comprehension_then_loop, (XS,), [0]),
])
def test_run_time_slice_checkpointed(f, args, wrt):
    """`checkpoint=True` checkpoints the loops the code writes and tapes the
    loop a slice or a comprehension stands for (it appends to its own list,
    which a snapshot would not restore): no refusal naming a loop the code
    never wrote."""
    check(f, list(args), wrt)
    expected = [_differences(f, list(args), i) for i in wrt]
    got = s2s_ad.grad(f, wrt=wrt, checkpoint=True)(*args)
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(_flat(g), e, rtol=1e-6, atol=1e-8)


def test_written_loop_still_checkpointed():
    """The loop the code writes after a comprehension is the one kept by
    snapshots."""
    text = " ".join(s2s_ad.gradient_source(S.comprehension_then_loop,
                                           checkpoint=True).split("\n\n")[1].split())
    assert "Loop `for y in ys` (line 47) records 3 values per iteration" in text
    assert text.count("It is checkpointed") == 1
    assert text.index("It is checkpointed") > text.index("Loop `for y in ys`")
