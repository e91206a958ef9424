"""Every refusal names the construct, the file, the line and the column, with
a caret under the right character (counted in characters, not UTF-8 bytes).

Each case is a module; the expected position is where ``at`` first occurs on
the first line containing ``line``. The modules are imported without being
left in ``sys.modules``, which once made messages show the wrong line (the
function's own lines indexed by the file's line numbers).
"""

import os

import pytest

import s2s_ad
from tests.modules import import_source

CASES = {
    "yield_statement": ("def f(x):\n    yield x\n", "yield x", "yield x", "generators (`yield`)"),
    "yield_expression": ("def f(x):\n    y = yield x\n    return y\n", "y = yield", "yield x",
                         "generators (`yield`)"),
    "yield_from": ("def f(x):\n    y = yield from x\n    return y\n", "yield from", "yield from",
                   "`yield from`"),
    "async_def": ("async def f(x):\n    return x\n", "async def", "async def", "async function"),
    "try": ("def f(x):\n    try:\n        y = x\n    except ValueError:\n        y = 0.0\n"
            "    return y\n", "try:", "try", "`try`"),
    "with": ("def f(x):\n    with open('a') as fh:\n        y = x\n    return y\n", "with", "with",
             "`with`"),
    "global_write": ("K = 1.0\n\n\ndef f(x):\n    global K\n    K = x\n    return x\n",
                     "global K", "global", "`global`"),
    "eval": ("def f(x):\n    return x * eval('x')\n", "eval", "eval", "`eval`"),
    "exec_statement": ("def f(x):\n    exec('y = 1')\n    return x\n", "exec", "exec", "`exec(...)`"),
    "exec_value": ("def f(x):\n    y = exec('y = 1')\n    return x\n", "exec", "exec", "`exec`"),
    "subscript_write": ("def f(x):\n    x[0] = 1.0\n    return x\n", "x[0] = 1.0", "x[0]",
                        "`x[0]` changes the argument `x` in place"),
    "subscript_augmented": ("def f(x):\n    x[0] += 1.0\n    return x\n", "x[0]", "x[0]",
                            "`x[0]` mutates a value in place"),
    "method_mutation": ("def f(xs, y):\n    xs.append(y)\n    return y\n", "append", "xs.append",
                        "`xs.append(y)` changes the argument `xs` in place"),
    "method_call_for_effect": ("import math\n\n\ndef f(x):\n    math.sin(x)\n    return x\n",
                               "math.sin", "math.sin", "`math.sin(...)` is called for its side "
                               "effect"),
    "attribute_write": ("def f(x):\n    x.grad = 1.0\n    return 1.0\n", "x.grad", "x.grad",
                        "attribute assignment (`x.grad = ...`)"),
    "attribute_augmented": ("def f(x):\n    x.grad += 1.0\n    return 1.0\n", "x.grad", "x.grad",
                            "attribute assignment (`x.grad = ...`)"),
    "library_call": ("import random\n\n\ndef f(x):\n    return random.gauss(x, 1.0)\n", "gauss",
                     "random.gauss", "`random.gauss`"),
    "os_call": ("import os\n\n\ndef f(x):\n    y = x * 2.0\n    return y + os.getpid()\n", "getpid",
                "os.getpid", "`os.getpid`"),
    "lambda_in_an_arm": ("def f(x):\n    if x > 0.0:\n        g = lambda t: t\n    return x\n",
                         "g = lambda", "g = lambda", "inside an `if`"),
    "theta_before_error": ("def f(θ, x):\n    y = θ * 2.0; z = eval('x')\n    return y\n",
                           "eval", "eval", "`eval`"),
    "two_non_ascii_names_before_error": ("def f(x):\n    ψθ = x; y = ψθ; z = eval('x')\n"
                                         "    return y\n", "eval", "eval", "`eval`"),
    # code an earlier pass rewrote is quoted as written (`c.pop()`, not the name it is read as)
    "pop_quoted_as_written": ("import math\n\n\ndef f(x, n):\n    c = []\n    for i in range(n):\n"
                              "        c.append(x * i)\n    s = 0.0\n    while c:\n"
                              "        s = s + math.fsum(c.pop())\n    return s\n",
                              "math.fsum(c.pop())", "c.pop()", "`c.pop()` is a number"),
    "pop_inside_quoted_as_written": ("def f(x, n):\n    c = []\n    for i in range(n):\n"
                                     "        c.append(x * i)\n    s = 0.0\n    while c:\n"
                                     "        s = s + range(c.pop())[0]\n    return s\n",
                                     "range(c.pop())", "range", "`range(c.pop())` is a range"),
    "tab_indent": ("def f(x):\n\ty = x\n\ttry:\n\t\tpass\n\tfinally:\n\t\tpass\n\treturn y\n",
                   "try", "try", "`try`"),
}


def _nonlocal_source():
    return ("def outer():\n    z = 1.0\n\n    def f(x):\n        nonlocal z\n        z = x\n"
            "        return x\n    return f\n\n\nf = outer()\n")


CASES["nonlocal_write"] = (_nonlocal_source(), "nonlocal z", "nonlocal", "`nonlocal`")


@pytest.mark.parametrize("case", sorted(CASES))
def test_refusal_is_located(case, tmp_path):
    text, line_has, at, construct = CASES[case]
    module = import_source(tmp_path, text, f"refusal_{case}")
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(module.f)
    err = info.value
    lines = text.splitlines()
    lineno = next(i for i, line in enumerate(lines, 1) if line_has in line)
    col = lines[lineno - 1].index(at)  # characters, θ counts as one
    assert construct in err.message, err.message
    assert os.path.basename(err.file) == f"refusal_{case}.py"
    assert (err.line, err.col) == (lineno, col), str(err)
    head, shown, caret = str(err).splitlines()
    assert head.startswith(f"{err.file}:{lineno}:{col + 1}: error: ")
    # The caret sits under the first character of the construct in the
    # printed line (tabs are shown as one space, so columns still match).
    shown_line = shown[4:]
    assert caret[4:] == " " * col + "^"
    assert shown_line[col:].startswith(at)


def test_column_counts_characters_not_bytes(tmp_path):
    text = "def f(θ, x):\n    y = θ * 2.0; z = eval('x')\n    return y\n"
    module = import_source(tmp_path, text, "refusal_bytes")
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(module.f)
    line = text.splitlines()[1]
    assert info.value.col == line.index("eval")
    assert info.value.col != line.encode("utf-8").index(b"eval")


@pytest.mark.parametrize("body, at", [
    ("    xs[0] = xs[0] * 2.0\n    return xs[0] + xs[1]\n", "xs[0] ="),
    ("    xs.append(xs[0] * 2.0)\n    return xs[1]\n", "xs.append"),
    ("    ys = xs\n    return ys[0] + xs[1]\n", None),
    ("    xs = [xs[0], xs[1]]\n    xs[0] = xs[0] * 2.0\n    xs.append(1.0)\n"
     "    return xs[0] + xs[2]\n", None),
])
def test_mutating_a_list_argument_is_refused(body, at, tmp_path):
    text = "def f(xs):\n" + body
    module = import_source(tmp_path, text, "refusal_list_argument")
    if at is None:  # a local rebinding is not the caller's list: differentiated
        assert s2s_ad.grad(module.f)([1.0, 2.0]) is not None
        return
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(module.f)([1.0, 2.0])
    lines = text.splitlines()
    lineno = next(i for i, line in enumerate(lines, 1) if at in line)
    assert (info.value.line, info.value.col) == (lineno, lines[lineno - 1].index(at[:2]))
    assert "changes the argument `xs` in place" in info.value.message
