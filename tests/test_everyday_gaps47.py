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


# -- 2. b[i][j] = v on a local 2-D array at int parameters ---------------------

X4 = [0.3, -0.8, 1.2, 0.5]


@pytest.mark.parametrize("f, args", [
    (S.chained_write, (np.array(X4), 2, 1)),
    (S.chained_write, (np.array(X4), 1, 2)),
    (S.chained_write, (np.array(X4), -1, 0)),
    (S.chained_write_loop, (np.array(X4), 1)),
    (S.chained_write_helper, (np.array(X4), 0, 2)),
    (S.chained_write_helper, (np.array(X4), 1, 1)),
])
def test_chained_write_at_parameters(f, args):
    """`b[i][j] = v` is `b[i, j] = v` for an array `b` made here: `b[i]` is a
    view, so the write changes `b`'s element; `i`, `j` unannotated
    parameters checked to be ints where the code runs."""
    check(f, list(args), [0])


@pytest.mark.parametrize("i", [2.0, np.array([1, 1]), True])
def test_chained_write_index_not_int(i):
    """An integer array as `i` could write a position twice (NumPy keeps the
    last write; `b[i][j]` would even write a copy), a float is no index:
    TypeError by name where the code runs, never a gradient."""
    with pytest.raises(TypeError, match="`i` indexes `b` in an assignment"):
        s2s_ad.grad(S.chained_write)(np.array(X4), i, 1)


def test_chained_write_no_gradient_for_index():
    with pytest.raises(s2s_ad.SourceError, match="used as an integer"):
        s2s_ad.grad(S.chained_write, wrt=1)(np.array(X4), 2, 1)


def test_list_of_lists_keeps_shared_rows():
    """A list of lists keeps Python's row sharing: `b = [row, row]` written
    at `b[1][0]` changes `b[0][0]` too."""
    check(S.rows_shared, [0.9, 2], [0])
    assert s2s_ad.grad(S.rows_shared)(0.9, 2) == pytest.approx(2 * 0.9 * (3.0 + 1.0 + 7.0))


def test_list_of_lists_at_parameters_refused():
    """A list of lists written at int parameters is refused at the index."""
    with pytest.raises(s2s_ad.SourceError, match="indices must be integer constants") as e:
        s2s_ad.grad(S.rows_at_param)(0.9, 1, 1)
    assert "b[i][j] = x * x" in str(e.value)
