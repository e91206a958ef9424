"""A function whose result is a bool or an int has no gradient: grad refuses
it, located at the op that makes the result, instead of returning 0.0."""

import pytest

import s2s_ad
from oracle import close, fd_gradient
from s2s_ad.errors import SourceError


def compare(x):
    return x > 1.0


def rounded(x):
    return round(x)


def truncated(x):
    return int(x * 2.0)


def int_constant(x):
    return 3


def short_circuit(x):
    y = x * 2.0
    return y > 1.0 and x < 3.0


@pytest.mark.parametrize("fn, what, text", [
    (compare, "a bool", "x > 1.0"), (rounded, "an int", "round(x)"),
    (truncated, "an int", "int(x * 2.0)"), (int_constant, "an int", None),
    (short_circuit, "a bool", None)])
def test_integer_result_is_refused_located(fn, what, text):
    with pytest.raises(SourceError) as info:
        s2s_ad.grad(fn)
    err = info.value
    assert f"{fn.__name__} returns {what}, which has no gradient" in err.message
    assert err.file.endswith("test_integer_results.py") and err.line > 0
    if text is not None:
        assert err.source_line.strip() == f"return {text}"
    with pytest.raises(SourceError):
        s2s_ad.check(fn)


def test_float_of_a_rounded_value_and_float_constants_still_differentiate():
    def g(x):
        return float(round(x)) + x * 3.0

    def h(x):
        return 3.0

    for fn, want in [(g, fd_gradient(lambda x: x * 3.0, [0.7], [0])[0]), (h, 0.0)]:
        assert close(s2s_ad.grad(fn)(0.7), want)
