"""Work at a helper's boundary, and in a loop, that the gradient does not
need, left out: ``x.shape`` written in the source stays an attribute read.
Every gradient against central differences."""

import numpy as np

import s2s_ad
from array_oracle import assert_gradients, make_function, rand

RNG = np.random.default_rng(4848)


def _section(text: str, name: str) -> str:
    """The text of generated function ``name``."""
    part = text[text.index(f"def {name}("):]
    return part[:part.index("\ndef ", 1)] if "\ndef " in part[1:] else part



def test_shape_attribute_read_as_written():
    f = make_function("def f(x, y):\n    n = x.shape[0]\n    m = np.shape(y)[0]\n"
                      "    return np.sum(x * x) * n + np.sum(y) * m\n")
    args = [rand(RNG, (3, 2)), rand(RNG, (4,))]
    assert_gradients(f, args, [0, 1])
    text = _section(s2s_ad.gradient_source(f, wrt=[0, 1]), "grad_f")
    assert "n = x.shape[0]" in text and "np.shape(x)" not in text, text
    # np.shape written in the source stays np.shape (it also reads lists)
    assert "m = np.shape(y)[0]" in text, text
