"""Arbitrary valid Python: s2s-ad differentiates it correctly or refuses it
with a located SourceError, never anything else.

A corpus of real-looking functions (``BASES``) is crossed with statements of
every kind Python has (``SNIPPETS``: containers, comprehensions, control
flow, strings, calls of every shape, classes, imports...), inserted at each
position of the body; module-level oddities (decorators, closures, methods,
``functools.partial``) are added whole. For each of the few hundred programs:

* a ``SourceError`` must carry the file and a line inside the function (or,
  for a target without readable source, at least a message); other errors
  s2s-ad raises on purpose (``S2SError``: a tuple result needs ``output=``)
  must say why;
* an accepted program must, wherever the original evaluates to a finite
  float, agree with central finite differences (tests/fuzz.fd_agrees);
* any other exception escaping s2s-ad (KeyError, AttributeError,
  AssertionError, RecursionError, TypeError...) is a bug.
"""

from __future__ import annotations

import math
import os
import re

import pytest

import s2s_ad
from tests.fuzz import evaluate, fd_agrees
from tests.modules import import_source
from tests.soak import breadth

HEADER = """import math
import functools
import random
import numpy as np

K = 0.5
NAMES = ["a", "b"]
TABLE = {"a": 1.0}


def helper(t):
    return t * t


class Box:
    scale = 2.0

    def method(self, t):
        return t * self.scale


"""

BASES = [
    "z = x * y + math.sin(x)\n    return z * z",
    "r = math.sqrt(x * x + y * y + 1.0)\n    return r / (1.0 + y * y)",
    "a = math.exp(-x * x)\n    b = a * math.cos(y)\n    return a + b * K",
    "s = 0.0\n    s += x\n    s *= y\n    s -= math.tanh(x)\n    return s",
    "u, v = x + y, x - y\n    u, v = v, u\n    return u * v",
    "p: float = x ** 2\n    q = abs(y) + max(x, y, 0.25)\n    return p * q",
    "z = math.hypot(x, y + 2.0)\n    w = math.atan2(y, z)\n    return z * w",
    "t = x\n    t = t * t\n    t = t * t\n    return t - y",
    "return math.log1p(x * x) * math.erf(y)",
    "c = math.pi * x\n    d = math.e ** y\n    return c / d",
]

SNIPPETS = [
    "xs = [x, y]", "xs = (x, y)", "d = {'a': x}", "s = {x, y}", "xs = [x] * 3",
    "xs = [t * 2 for t in (x, y)]", "g = sum(t for t in (x, y))", "d = {k: x for k in 'ab'}",
    "s = {t for t in (x,)}", "n = len(NAMES)", "v = TABLE['a'] * x", "v = NAMES[0]",
    "v = (x, y)[0]", "v = [x, y][1:]", "v = f'{x}'", "v = 'a' + 'b'", "v = b'x'",
    "v = None", "v = True", "v = ...", "v = 1j * x", "v = x if y > 0 else y",
    "v = x and y", "v = not x", "v = ~3", "v = x @ y", "v = x << 2", "v = x & 1",
    "v = 0 < x < 1", "v = x is None", "v = x in (1.0, 2.0)", "v = (w := x * 2)",
    "v = lambda t: t", "v = helper(x)", "v = Box().method(x)", "v = Box.scale * x",
    "v = math.sin(x=x)", "v = max([x, y])", "v = max(*(x, y))", "v = min(x, y, key=abs)",
    "v = random.random()", "v = np.sin(x)", "v = np.float64(x)", "v = math.factorial(3)",
    "v = math.isclose(x, y)", "v = round(x, 2)", "v = divmod(x, 2.0)", "v = complex(x)",
    "v = int('3')", "v = print(x)", "v = str(x)", "v = x.real", "v = x.conjugate()",
    "v = undefined_name * 2", "v = K.real", "v = functools.reduce(max, [x, y])",
    "print(x)", "helper(x)", "x", "3", "...", "NAMES.append(x)",
    "assert x > -10", "del K", "import os", "from math import sin",
    "global K", "pass", "x = x", "x += 0.0", "x **= 1", "x //= 1.0", "x %= 7.0", "x @= y",
    "x |= 1", "a = b = x", "a, *b = x, y, 1.0", "(a, b) = (x, y)", "[a, b] = x, y",
    "x[0] = 1.0", "x.attr = 1.0", "a, b = x", "a, b = x, y, 1.0",
    "if x > 0:\n        x = x * 2.0", "if x > 0:\n        x = x * 2.0\n    else:\n        x = -x",
    "for i in range(3):\n        x = x * 1.5", "for t in (x, y):\n        x = x + t",
    "while x > 100.0:\n        x = x / 2.0", "for i in range(2):\n        if i:\n            break",
    "try:\n        x = x * 2.0\n    except Exception:\n        pass",
    "with open(__file__) as fh:\n        pass", "def inner(t):\n        return t",
    "class Local:\n        pass", "raise ValueError('no')", "return x",
    "match x:\n        case 1.0:\n            x = 2.0\n        case _:\n            pass",
    "async def co():\n        pass", "x = yield x", "lst = [1, 2]\n    lst[0] = x",
    "x = float(x)", "x = int(x)", "x = -x", "x = +x", "x = pow(x, 2)", "x = pow(x, 2, 3)",
    "x = math.fsum([x, y])", "x = math.prod((x, y))", "x = math.dist((x,), (y,))",
    "x = math.gamma(x + 3.0)", "x = math.lgamma(x + 3.0)", "x = math.ldexp(x, 2)",
    "x = math.frexp(x)[0]", "x = math.modf(x)[0]", "x = math.remainder(x, 2.0)",
    "x = math.nextafter(x, 1.0)", "x = math.ulp(x)", "x = math.comb(4, 2) * x",
    "x = math.inf * 0.0 + x", "x = -math.inf", "x = math.nan", "x = 1e308 * 10",
]

MODULE_LEVEL = {
    "decorated_cache": "@functools.lru_cache\ndef f(x, y):\n    return x * y\n",
    "decorated_wraps": ("def deco(fn):\n    @functools.wraps(fn)\n    def wrapper(*a):\n"
                        "        return fn(*a)\n    return wrapper\n\n\n@deco\ndef f(x, y):\n"
                        "    return x * y\n"),
    "closure": ("def make(z):\n    def f(x, y):\n        return x * y * z\n    return f\n\n\n"
                "f = make(2.0)\n"),
    "closure_written": ("def make():\n    z = 1.0\n\n    def f(x, y):\n        nonlocal z\n"
                        "        z = x\n        return x * y\n    return f\n\n\nf = make()\n"),
    "method": "class A:\n    def f(self, x, y):\n        return x * y\n\n\nf = A().f\n",
    "static": "class A:\n    @staticmethod\n    def f(x, y):\n        return x * y\n\n\nf = A.f\n",
    "partial": "def g(x, y, z):\n    return x * y * z\n\n\nf = functools.partial(g, z=2.0)\n",
    "lambda": "f = lambda x, y: x * y\n",
    "builtin": "f = math.atan2\n",
    "class_target": "class f:\n    pass\n",
    "generator": "def f(x, y):\n    yield x * y\n",
    "async": "async def f(x, y):\n    return x * y\n",
    "varargs": "def f(x, *ys):\n    return x\n",
    "kwargs": "def f(x, y, **kw):\n    return x * y\n",
    "posonly": "def f(x, y, /):\n    return x * y\n",
    "string_default": "def f(x, y='a'):\n    return x\n",
    "none_default": "def f(x, y=None):\n    return x\n",
    "annotations": "def f(x: float, y: 'float' = 1.0) -> float:\n    return x * y\n",
    "recursive": "def f(x, y):\n    return f(x, y) if x > 10.0 else x * y\n",
    "no_return": "def f(x, y):\n    z = x * y\n",
    "bare_return": "def f(x, y):\n    return\n",
    "tuple_return": "def f(x, y):\n    return x, y\n",
    "return_in_middle": "def f(x, y):\n    return x\n    y = 2.0\n",
    "empty_docstring_only": "def f(x, y):\n    'doc'\n    return 1.0\n",
    "exec_defined": "exec('def f(x, y):\\n    return x * y')\n",
    "one_liner": "def f(x, y): return x * y\n",
    "semicolons": "def f(x, y): z = x * y; return z * z\n",
    "continuation": "def f(x, y):\n    z = (x *\n         y)\n    return z \\\n        + x\n",
    "deep_nesting": "def f(x, y):\n    return " + "(" * 60 + "x" + " + y)" * 60 + "\n",
    "long_chain": "def f(x, y):\n" + "    x = x * 1.0001 + y\n" * 400 + "    return x\n",
    "unicode_names": "def f(x, y):\n    θ = x * y\n    φ_1 = θ * θ\n    return φ_1\n",
    "shadowed_builtin": "def f(x, y):\n    abs = x * y\n    return abs\n",
    "shadowed_abs_call": "def f(x, y):\n    abs = 2.0\n    return abs(x)\n",
    "global_function_shadowing_math": "sin = helper\n\n\ndef f(x, y):\n    return sin(x) * y\n",
    "module_attr_chain": "def f(x, y):\n    return math.sin.__call__(x) * y\n",
    "numpy_scalar_default": "def f(x, y=np.float64(1.0)):\n    return x * y\n",
    "bool_default": "def f(x, y=True):\n    return x * y\n",
}


def _programs():
    out = {}
    for i, base in enumerate(BASES):
        body = base.split("\n    ")
        for j, snippet in enumerate(SNIPPETS):
            # Each snippet at one position per base, rotating, so every
            # position of every base is used somewhere.
            k = (i + j) % len(body)
            lines = body[:k] + [snippet] + body[k:]
            out[f"b{i}_s{j}"] = HEADER + "def f(x, y):\n" + "".join(f"    {ln}\n" for ln in lines)
    for name, text in MODULE_LEVEL.items():
        out[name] = HEADER + text
    return out


PROGRAMS = _programs()
POINTS = [(0.3, 0.7), (-0.6, 1.3)]
EVERY = breadth(3, 1)
"""The default run checks snippet ``j`` in base ``i`` where ``(i - j) % 3 ==
0`` (every snippet, in three or four bases at the positions the rotation
gives, every base with a third of the snippets) and every module-level
oddity; ``--soak`` checks every program."""


def _checked(name: str) -> bool:
    m = re.fullmatch(r"b(\d+)_s(\d+)", name)
    return m is None or (int(m[1]) - int(m[2])) % EVERY == 0


def test_corpus_is_a_few_hundred_programs():
    assert len(PROGRAMS) >= 300


def _check(name: str, text: str, folder) -> str:
    try:
        module = import_source(folder, text, f"corpus_{name}")
    except Exception:
        return "not importable"  # e.g. `x @= y` on floats is fine; syntax is the test's own
    fn = module.f
    try:
        g = s2s_ad.grad(fn, wrt=None)
        try:  # (a gradient whose code depends on the arguments' kinds is made here)
            g(*POINTS[0])
        except s2s_ad.S2SError:
            raise
        except Exception:
            pass  # the program itself may fail there: the points are checked below
    except s2s_ad.SourceError as err:
        if err.line > 0:
            assert os.path.basename(err.file) == f"corpus_{name}.py", str(err)
            assert text.count("\n") >= err.line >= 1, str(err)
            assert err.source_line is not None and err.source_line.strip(), str(err)
        else:
            assert err.message, "an unlocated SourceError must still say why"
        return "refused"
    except s2s_ad.S2SError as err:
        # Deliberate errors about the request, not the source (wrt, output).
        assert str(err)
        return "refused"
    def positional(x, y):
        try:
            return fn(x, y)
        except Exception:  # the original itself fails here: no reference value
            return None

    for point in POINTS:
        args = dict(zip(("x", "y"), point))
        value = evaluate(positional, args)
        if value is None:
            continue
        got = g(*point)
        got = list(got) if isinstance(got, tuple) else [got]
        assert len(got) == 2
        for pname, gv in zip(("x", "y"), got):
            assert isinstance(gv, (int, float)) and math.isfinite(gv), (name, gv)
            verdict = fd_agrees(positional, args, pname, gv, value)
            assert verdict is not False, (name, pname, point, gv, s2s_ad.source_of(g))
    return "differentiated"


def test_arbitrary_python_is_differentiated_or_refused_with_a_location(tmp_path):
    outcomes = {}
    for name, text in PROGRAMS.items():
        if _checked(name):
            outcomes[name] = _check(name, text, tmp_path)
    counts = {k: list(outcomes.values()).count(k) for k in set(outcomes.values())}
    # Both outcomes occur: the corpus is neither all refused nor all accepted.
    assert counts.get("refused", 0) > 50 and counts.get("differentiated", 0) > 20, counts
