"""A list (or tuple) of numbers given to a parameter of NumPy code is a list:
`xs + ys` joins and `xs * 2` repeats it, as Python does, whatever the code
does with it next. `grad` and `value_and_grad` read it as the array it would
stand for in arithmetic, so a join of two list arguments got the adjoint of
an elementwise sum (`np.sum(np.array(xs + ys) ** 2)` at [1.0], [2.0]: 6.0 and
6.0 where 2.0 and 4.0; `np.array(xs * 2)`: a gradient of four items for a
list of two). A list argument now gets the code generated for its length,
as `vjp` and `jvp` already did; what that code does not take is refused,
located. Each case against central differences."""

import numpy as np
import pytest

import s2s_ad
from s2s_ad.errors import SourceError

H = 1e-6


def joined_squares(xs, ys):
    return np.sum(np.array(xs + ys) ** 2)


def joined_weighted(xs, ys, w):
    return np.sum(np.array(xs + ys) * w)


def repeated(xs, w):
    return np.sum(np.array(xs * 2) * w)


def stacked(xs, w):
    return np.sum(np.array(xs) * w) + np.sum(np.sqrt(np.array(xs)))


def _central(f, args, i):
    """Central differences of f with respect to argument i (a list of numbers
    or a number)."""
    a = args[i]
    if isinstance(a, (list, tuple)):
        out = []
        for k in range(len(a)):
            up, down = list(a), list(a)
            up[k] += H
            down[k] -= H
            hi = list(args); hi[i] = type(a)(up)
            lo = list(args); lo[i] = type(a)(down)
            out.append((f(*hi) - f(*lo)) / (2 * H))
        return out
    hi = list(args); hi[i] = a + H
    lo = list(args); lo[i] = a - H
    return (f(*hi) - f(*lo)) / (2 * H)


def _agree(got, want):
    if isinstance(want, list):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert float(g) == pytest.approx(w, rel=1e-6, abs=1e-7)
    else:
        assert np.allclose(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("xs, ys", [([1.0], [2.0]), ([1.0, -0.5], [2.0, 0.3, 0.7]),
                                    ((0.4, 1.5), (2.0,))])
@pytest.mark.parametrize("how", ["grad", "value_and_grad", "vjp"])
def test_a_join_of_two_list_arguments_is_a_join(xs, ys, how):
    args = (xs, ys)
    if how == "grad":
        got = s2s_ad.grad(joined_squares, wrt=(0, 1))(*args)
    elif how == "value_and_grad":
        value, got = s2s_ad.value_and_grad(joined_squares, wrt=(0, 1))(*args)
        assert value == pytest.approx(joined_squares(*args))
    else:
        value, back = s2s_ad.vjp(joined_squares, *args)
        got = back(1.0)
    for i in range(2):
        _agree(got[i], _central(joined_squares, args, i))


def test_a_join_with_an_array_weight_and_lengths_changing_between_calls():
    g = s2s_ad.grad(joined_weighted, wrt=(0, 1, 2))
    for xs, ys in (([1.0, 2.0], [3.0]), ([0.5], [0.25, -1.0]), ([1.0, 2.0], [3.0])):
        w = np.linspace(0.5, 1.5, len(xs) + len(ys))
        got = g(xs, ys, w)
        for i in range(3):
            _agree(got[i], _central(joined_weighted, (xs, ys, w), i) if i < 2 else
                   np.array(xs + ys))


def test_a_list_argument_read_as_an_array_still_agrees():
    xs, w = [1.0, 2.0, 0.3], 0.7
    dxs, dw = s2s_ad.grad(stacked, wrt=(0, 1))(xs, w)
    _agree(list(dxs), _central(stacked, (xs, w), 0))
    assert dw == pytest.approx(_central(stacked, (xs, w), 1), rel=1e-6)
    # an array argument takes the code generated for arrays, as before
    dxa, dwa = s2s_ad.grad(stacked, wrt=(0, 1))(np.array(xs), w)
    assert isinstance(dxa, np.ndarray)
    _agree(list(dxa), _central(stacked, (xs, w), 0))


def test_a_repeated_list_argument_is_refused_not_a_wrong_gradient():
    xs, w = [1.0, 3.0], np.array([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(SourceError, match=r"test_list_args_numpy\.py:\d+:\d+"):
        s2s_ad.grad(repeated, wrt=(0, 1))(xs, w)


def joined_power(xs, ys, n: int):
    return np.sum(np.array(xs + ys) ** n)


def joined_scaled(xs, ys, c: float):
    return np.sum(np.array(xs + ys) ** 2) * c


@pytest.mark.parametrize("f, last", [(joined_power, 3), (joined_scaled, 0.7)])
def test_a_join_beside_an_annotated_parameter(f, last):
    """The parameters annotated as numbers take another dispatch; a list
    given to one lowered as an array goes to the code for its length there
    too."""
    for xs, ys in (([1.0], [2.0]), ([0.5, 1.5], [-1.0])):
        got = s2s_ad.grad(f, wrt=(0, 1))(xs, ys, last)
        for i in range(2):
            _agree(got[i], _central(f, (xs, ys, last), i))


def made_array_first(xs, w):
    a = np.asarray(xs)
    return np.sum(np.maximum(a, w) ** 2)


def test_the_rewrite_the_docs_give_for_a_list_parameter():
    xs, w = [1.0, 0.2, 3.0], 0.5
    dxs, dw = s2s_ad.grad(made_array_first, wrt=(0, 1))(xs, w)
    _agree(list(dxs), _central(made_array_first, (xs, w), 0))
    assert dw == pytest.approx(_central(made_array_first, (xs, w), 1), rel=1e-6)


def clipped_below(xs, w):
    return np.sum(np.maximum(xs, w))


def test_a_list_argument_refused_in_numpy_code_says_how_to_make_the_array():
    with pytest.raises(SourceError, match=r"np\.asarray"):
        s2s_ad.grad(clipped_below, wrt=(0, 1))([1.0, 0.2], 0.5)
