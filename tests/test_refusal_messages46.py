"""Refusals that name their real cause: a helper growing the caller's list
is refused for that, not for the caller's read past the old length; a loop
or a line writing into a list another name holds says it writes (not
appends); a helper returning its number parameter unchanged, read as a
list, makes the caller's parameter a list (it was refused as a helper
"returning one number"). Each message keeps its file:line:col, the line and
a caret under the construct."""

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient
from tests.modules import import_source

GROWS = "def h(xs):\n    xs.append(1.0)\n    return xs\n\n\n"


def _refusal(tmp_path, text, name, *args):
    module = import_source(tmp_path, text, name)
    with pytest.raises(s2s_ad.SourceError) as err:
        s2s_ad.grad(module.f)(*args)
    return str(err.value)


def _caret_under(message, at):
    """The caret of ``message`` stands under the first ``at`` of its line."""
    _, quoted, caret = message.splitlines()[:3]
    assert caret.index("^") == quoted.index(at), message


@pytest.mark.parametrize("body, args", [
    # the caller reads past the old length: the helper's append is the cause
    ("def f(a):\n    ys = [a[0], a[1], a[2]]\n    zs = h(ys)\n"
     "    return zs[0] * zs[3] + ys[3]\n", (np.array([1.0, 2.0, 3.0]),)),
    ("def f(a, b, c):\n    ys = [a, b, c]\n    zs = h(ys)\n"
     "    return ys[3] + zs[0] * zs[3]\n", (1.0, 2.0, 3.0)),
    ("def f(a, b, c):\n    ys = [a, b, c]\n    h(ys)\n    return ys[3] * a\n", (1.0, 2.0, 3.0)),
    # without the read past it, the same refusal
    ("def f(a):\n    ys = [a[0], a[1], a[2]]\n    zs = h(ys)\n    return zs[0] * zs[2]\n",
     (np.array([1.0, 2.0, 3.0]),)),
])
def test_helper_growing_the_callers_list(body, args, tmp_path):
    message = _refusal(tmp_path, GROWS + body, "grows_callers_list", *args)
    assert "grows_callers_list.py:2:5: error: `xs.append(1.0)` changes the argument `xs` in " \
        "place, which the caller would see" in message, message
    assert "build a new value instead" in message
    assert "out of range" not in message
    _caret_under(message, "xs.append")


def test_index_past_a_list_no_helper_grew(tmp_path):
    # a helper that only reads the list: the index is out of range, as said
    text = ("def h(xs):\n    return xs[0] * 2.0\n\n\n"
            "def f(a, b, c):\n    ys = [a, b, c]\n    z = h(ys)\n    return z * ys[3]\n")
    message = _refusal(tmp_path, text, "index_past", 1.0, 2.0, 3.0)
    assert "index_past.py:8:19: error: index 3 is out of range for length 3" in message, message
    _caret_under(message, "3]")


@pytest.mark.parametrize("text, xs", [
    ("def h(xs):\n    return xs\n\n\ndef f(xs):\n    zs = h(xs)\n    return zs[0] * zs[1]\n",
     [1.3, -0.7]),
    ("def h(xs):\n    return xs\n\n\ndef f(xs):\n    zs = h(xs)\n"
     "    return zs[0] * zs[1] + zs[-1] ** 2\n", [0.4, 1.1, -2.0]),
    ("def h(xs, k):\n    return xs\n\n\ndef f(xs):\n    a, b = h(xs, 2)\n    return a * b - a\n",
     [0.5, 2.5]),
])
def test_helper_returning_its_parameter_read_as_a_list(text, xs, tmp_path):
    module = import_source(tmp_path, text, "returns_parameter")
    got = np.array(s2s_ad.grad(module.f)(list(xs)), dtype=float)
    assert np.allclose(got, fd_gradient(module.f, [xs], 0), rtol=1e-6, atol=1e-6), got


ALIASED_LOOP = """def f(a, n):
    xs = []
    for i in range(n):
        xs.append(a * i)
    ys = xs
    s = 0.0
    for v in xs:
        ys[0] = v * 2.0
        s = s + v * ys[0]
    return s
"""


def test_loop_writing_through_an_alias_says_it_writes(tmp_path):
    message = _refusal(tmp_path, ALIASED_LOOP, "aliased_loop", 1.5, 3)
    assert "aliased_loop.py:7:5: error: `ys` and `xs` hold the same list, which this loop " \
        "writes into through `ys`" in message, message
    assert "appends" not in message
    assert "drop the assignment that makes them the same list" in message
    _caret_under(message, "for v in xs")


def test_loop_appending_through_an_alias_says_it_appends(tmp_path):
    text = ("def f(a, n):\n    xs = [a]\n    ys = xs\n    for i in range(n):\n"
            "        xs.append(ys[-1] * a)\n    return sum(ys)\n")
    message = _refusal(tmp_path, text, "aliased_append", 1.5, 3)
    assert "aliased_append.py:4:5: error: `xs` and `ys` hold the same list, which this loop " \
        "appends to through `xs`" in message, message
    _caret_under(message, "for i")


def test_line_writing_through_an_alias_names_the_line(tmp_path):
    text = ("def f(xs, a):\n    ys = [0.0] * len(xs)\n    zs = ys\n    zs[0] = a\n"
            "    return sum(ys)\n")
    module = import_source(tmp_path, text, "aliased_line")
    with pytest.raises(s2s_ad.SourceError) as err:
        s2s_ad.grad(module.f, wrt="a")([0.1, 0.2, 0.3], 0.5)
    message = str(err.value)
    assert "aliased_line.py:4:5: error: `zs` and `ys` hold the same list, which this line " \
        "writes into through `zs`" in message, message
    _caret_under(message, "zs[0]")


@pytest.mark.parametrize("body, at, said", [
    # a helper's list, changed in place: it is not "a list" the method lacks
    ("def h(a):\n    return [a, 2.0 * a]\n\n\ndef f(a):\n    ys = h(a)\n    ys.append(a)\n"
     "    return ys[2]\n", "ys.append", "`ys` holds what `h` returned, which s2s-ad reads as it "
     "is and does not change in place: copy it into a list of this function first "
     "(`ys = list(h(...))`)"),
    ("def f(a):\n    t = (a, a)\n    t.append(a)\n    return t[0]\n", "t.append",
     "`t` is a tuple, which has no `append`"),
    ("def f(a):\n    d = {\"x\": a}\n    d.append(a)\n    return d[\"x\"]\n", "d.append",
     "`d` is a dict, which has no `append`"),
    ("def f(a):\n    y = a * 2.0\n    y.append(a)\n    return y\n", "y.append",
     "`y` is a number, which has no `append`"),
    # a name holding a call's tuple is not what "returns" the values
    ("def h(x):\n    return x, x * 2.0\n\n\ndef f(a):\n    z = h(a)\n    return z * 2.0\n",
     "z * 2.0", "`z` holds the 2 values a call returned (a tuple), used here in arithmetic"),
    # a list written into (not appended to) while a dict holds it
    ("def f(a, n):\n    xs = [a, a]\n    d = {\"h\": xs}\n    for i in range(n):\n"
     "        xs[0] = xs[0] * a\n    return xs[0] + d[\"h\"][1]\n", "for i",
     "the list `xs` is written into here and is also an item of `d`"),
    # a checkpointed loop unrolled for a write into a dict, or a structure indexed
    ("def f(a):\n    d = {\"x\": a}\n    for i in range(3):  # s2s-ad: checkpoint\n"
     "        d[\"x\"] = d[\"x\"] * a\n    return d[\"x\"]\n", "for i",
     "this loop writes into a list or dict built before it, so s2s-ad unrolls it"),
    ("def f(a):\n    layers = [(a, a), (a, 2.0 * a)]\n    s = a\n"
     "    for i in range(2):  # s2s-ad: checkpoint\n        s = s * layers[i][0]\n    return s\n",
     "for i", "this loop indexes a list or structure known while lowering by a value it changes"),
    ("def f(a):\n    xs = [a]\n    for i in range(3):  # s2s-ad: checkpoint\n"
     "        xs.append(xs[-1] * a)\n    return xs[3]\n", "for i", "this loop appends to a list"),
])
def test_message_names_what_the_code_does(body, at, said, tmp_path):
    message = _refusal(tmp_path, body, "what_it_does", 1.5, *([3] if "n):" in body else []))
    line = next(k for k, text in enumerate(body.splitlines(), 1) if at in text)
    col = body.splitlines()[line - 1].index(at) + 1
    assert f"what_it_does.py:{line}:{col}: error:" in message, message
    assert said in message, message
    _caret_under(message, at)
