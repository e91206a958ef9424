"""Unsupported Python is refused with file:line:col, the line and a caret."""

import importlib
import itertools
import textwrap

import pytest

import s2s_ad


_serial = itertools.count()


def load(tmp_path, monkeypatch, source: str, name="bad_mod"):
    # A fresh module name each time: Python caches modules (and inspect
    # caches source lines) by name.
    name = f"{name}_{next(_serial)}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return importlib.import_module(name)


def refusal(fn) -> s2s_ad.SourceError:
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.gradient_source(fn)
    return info.value


def assert_points_at(err, line: int, col: int, fragment: str):
    """The message names the line and (1-based) column; the caret sits under
    ``fragment`` in the echoed source line."""
    text = str(err)
    head, src_line, caret = text.splitlines()[:3]
    assert f".py:{line}:{col}: error:" in head and "bad_mod_" in head, head
    assert caret.index("^") - 4 == src_line[4:].index(fragment), text


CASES = [
    ("try", "def f(x):\n    try:\n        y = x\n    except Exception:\n        y = 0.0\n    return y\n",
     2, 5, "try", "`try` is not differentiable"),
    ("with", "def f(x):\n    with open('a') as h:\n        pass\n    return x\n", 2, 5, "with", "`with`"),
    ("yield", "def f(x):\n    y = yield x\n    return y\n", 2, 9, "yield", "generators"),
    ("global", "G = 1.0\ndef f(x):\n    global G\n    return x\n", 3, 5, "global", "`global`"),
    ("lambda in a branch", "def f(x):\n    if x > 0:\n        g = lambda t: t\n    return x\n",
     3, 9, "g = lambda", "inside an `if`"),
    ("attribute", "import math\ndef f(x):\n    math.foo = x\n    return x\n", 3, 5, "math.foo",
     "attribute assignment"),
    ("string", "def f(x):\n    y = 'a'\n    return x * y\n", 3, 12, "x * y",
     "'a' is used where a number is expected"),
    ("unknown call", "import os\ndef f(x):\n    return os.getcwd() * x\n", 3, 12, "os.getcwd",
     "not supported"),
    ("eval", "def f(x):\n    return eval('x')\n", 2, 12, "eval", "not supported"),
    ("nested tuple return", "def f(x):\n    return (x, (x, x))\n", 2, 12, "(x, (x, x))",
     "nested tuples"),
    ("no return", "def f(x):\n    y = x\n", 1, 1, "def", "must end with `return"),
    ("undefined", "def f(x):\n    return x * q\n", 2, 16, "q", "not defined"),
    ("shift", "def f(x):\n    return x << 1\n", 2, 12, "x << 1", "`<<`"),
    ("star args", "def f(*xs):\n    return 1.0\n", 1, 8, "xs", "`*args`"),
    ("in numbers", "def f(x):\n    return 1.0 * (x in (0.5, 1.0))\n", 2, 19, "x in",
     "`in` is decided while lowering"),
    ("keyword call", "import math\ndef f(x):\n    return math.log(x, base=2.0)\n", 3, 12, "math.log",
     "keyword arguments"),
]


@pytest.mark.parametrize("name, source, line, col, fragment, message", CASES,
                         ids=[c[0] for c in CASES])
def test_refusals_are_located(tmp_path, monkeypatch, name, source, line, col, fragment, message):
    mod = load(tmp_path, monkeypatch, source, name="bad_mod")
    err = refusal(mod.f)
    assert message in str(err)
    assert (err.line, err.col + 1) == (line, col), str(err)
    assert_points_at(err, line, col, fragment)


def test_caret_counts_characters_not_bytes(tmp_path, monkeypatch):
    mod = load(tmp_path, monkeypatch, "def f(θ):\n    return θ * 'θθ'\n", name="bad_mod")
    err = refusal(mod.f)
    src_line, caret = str(err).splitlines()[1:3]
    assert src_line[caret.index("^")] == "'"


def test_indented_function_reports_file_columns(tmp_path, monkeypatch):
    mod = load(tmp_path, monkeypatch, "class K:\n    @staticmethod\n    def f(x):\n"
               "        return x * 'a'\n", name="bad_mod")
    err = refusal(mod.K.f)
    assert (err.line, err.col) == (4, 19)


def test_not_a_function():
    with pytest.raises(s2s_ad.SourceError, match="not a Python function"):
        s2s_ad.gradient_source(abs)


SPRING = """\
class Spring:
    def __init__(self, k):
        self.k = k

    @classmethod
    def unit(cls, x):
        return 0.5 * x * x

    def energy(self, x):
        return 0.5 * self.k * x * x
"""


@pytest.mark.parametrize("entry", [
    lambda s2s_ad, m: s2s_ad.grad(m.Spring.energy),
    lambda s2s_ad, m: s2s_ad.gradient_source(m.Spring.energy),
    lambda s2s_ad, m: s2s_ad.vjp(m.Spring.energy, 2.0, 3.0),
], ids=["grad", "gradient_source", "vjp"])
def test_method_taken_from_its_class_is_refused_at_its_def(tmp_path, monkeypatch, entry):
    # Bound methods are differentiated (tests/test_methods.py); without an
    # object, `self.k` has nothing to read.
    mod = load(tmp_path, monkeypatch, SPRING, name="spring_mod")
    with pytest.raises(s2s_ad.SourceError) as info:
        entry(s2s_ad, mod)
    err = info.value
    assert err.file.endswith(".py") and (err.line, err.col) == (9, 4)
    text = str(err)
    assert f"{err.file}:9:5: error: Spring.energy is a method taken from its class" in text
    assert text.splitlines()[1:] == ["        def energy(self, x):", "        ^"]


def test_lambda_target(tmp_path, monkeypatch):
    # a lambda is read as the def it stands for, named after its name
    mod = load(tmp_path, monkeypatch, "f = lambda x: x * x\n", name="lam_mod")
    assert "def grad_f(x, *, dout=1.0):" in s2s_ad.gradient_source(mod.f)
    assert s2s_ad.grad(mod.f)(1.5) == 3.0


def test_lambda_without_a_file():
    g = eval("lambda x: x * x")  # no file holds its text
    with pytest.raises(s2s_ad.SourceError, match="cannot read the source"):
        s2s_ad.gradient_source(g)
