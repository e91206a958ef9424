"""Scalar rules: Python operators, builtins and the ``math`` module.

Conventions at points where a derivative does not exist:

* ``abs(x)``, ``math.fabs(x)``: ``copysign(1, x)``, so ``+1`` at ``+0.0`` and
  ``-1`` at ``-0.0`` (a valid subgradient either way).
* ``max(x, y)``: the whole adjoint goes to ``x`` when ``x >= y`` (Python's
  ``max`` returns its first argument at a tie); ``min(x, y)`` likewise when
  ``x <= y``.
* ``x % y`` (``x - y*floor(x/y)``): ``1`` and ``-floor(x/y)``; ``x // y``,
  ``round``, ``floor``, ``ceil``, ``trunc`` and comparisons: zero.
* Where a derivative is infinite (``sqrt`` at 0, ``asin`` at 1), the partial's
  division by zero raises ``ZeroDivisionError`` in Python floats, as the
  formula would; ``x ** 0`` and ``0 ** y``, whose derivatives exist, have
  guarded partials (docs/numerics.md).
"""

from __future__ import annotations

from . import Rule

SCALAR_HELPERS = {
    "s2s_digamma": '''
def s2s_digamma(x):
    """psi(x) = d/dx ln Gamma(x), the derivative of math.lgamma (relative
    error below 1e-14): psi(x) = psi(x + 1) - 1/x up to x >= 10, then the
    asymptotic series; below 1/2, psi(x) = psi(1 - x) - pi/tan(pi x)."""
    if x <= 0.0 and x == math.floor(x):
        return math.nan  # a pole of Gamma
    if x < 0.5:
        return s2s_digamma(1.0 - x) - math.pi / math.tan(math.pi * x)
    acc = 0.0
    while x < 10.0:
        acc -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (
        1.0 / 132 - f * (691.0 / 32760 - f / 12.0))))))
    return acc + math.log(x) - 0.5 / x - series
''',
}
"""Functions a rule's partial calls that no module provides: the generated
module defines each one it uses, under this name."""

INT_FUNCTIONS = (("factorial", "x"), ("comb", "x, y"), ("perm", "x, y"), ("gcd", "x, y"),
                 ("lcm", "x, y"), ("isqrt", "x"))
"""``math`` functions of ints: their result an int, a count of the code's."""
INTS = ((0, 12), (0, 12))
"""The sampling domain of a function of ints: ints in these ranges."""

POS = (0.2, 3.0)
UNIT = (-0.9, 0.9)
ANY = (-2.0, 2.0)

SCALAR_RULES = [
    # Python operators
    Rule("add", "x + y", ("1", "1"), "num", "∂/∂x = 1, ∂/∂y = 1"),
    Rule("sub", "x - y", ("1", "-1"), "num", "∂/∂x = 1, ∂/∂y = -1"),
    Rule("mul", "x * y", ("y", "x"), "num", "∂/∂x = y, ∂/∂y = x"),
    Rule("div", "x / y", ("1 / y", "-out / y"), "float", "∂/∂x = 1/y, ∂/∂y = -x/y²",
         domain=(ANY, POS)),
    Rule("pow", "x ** y", ("0.0 if y == 0 else y * x ** (y - 1)",
                           "0.0 if x == 0 else out * math.log(x)"), "num",
         "∂/∂x = y·x^(y-1), ∂/∂y = x^y·ln x", "x**0 is 1 even at x = 0, and 0**y is 0 "
         "for y > 0: both partials are 0 there (y·x^(y-1) and ln x would raise)",
         domain=(POS, ANY)),
    Rule("neg", "-x", ("-1",), "num", "∂/∂x = -1"),
    Rule("pos", "+x", ("1",), "num", "∂/∂x = 1"),
    Rule("mod", "x % y", ("1", "-(x // y)"), "num", "∂/∂x = 1, ∂/∂y = -⌊x/y⌋ (x // y: elementwise on arrays too)",
         domain=(ANY, POS)),
    Rule("floordiv", "x // y", (None, None), "num", "zero almost everywhere"),
    # comparisons: boolean results carry no derivative
    Rule("lt", "x < y", (None, None), "bool"),
    Rule("le", "x <= y", (None, None), "bool"),
    Rule("gt", "x > y", (None, None), "bool"),
    Rule("ge", "x >= y", (None, None), "bool"),
    Rule("eq", "x == y", (None, None), "bool"),
    Rule("ne", "x != y", (None, None), "bool"),
    # builtins
    Rule("abs", "abs(x)", ("math.copysign(1.0, x)",), "num", "∂/∂x = sign(x)",
         "copysign(1, x): +1 at +0.0, -1 at -0.0"),
    Rule("max", "max(x, y)", ("1.0 if x >= y else 0.0", "0.0 if x >= y else 1.0"), "num",
         "1 to the larger operand", "at a tie the first operand gets the adjoint"),
    Rule("min", "min(x, y)", ("1.0 if x <= y else 0.0", "0.0 if x <= y else 1.0"), "num",
         "1 to the smaller operand", "at a tie the first operand gets the adjoint"),
    Rule("float", "float(x)", ("1",), "float", "∂/∂x = 1"),
    Rule("int", "int(x)", (None,), "int", "zero almost everywhere"),
    Rule("round", "round(x)", (None,), "int", "zero almost everywhere"),
    Rule("round.digits", "round(x, y)", (None, None), "num", "zero almost everywhere",
         "`round(x, ndigits)`: a float of a float, an int of an int", domain=(ANY, (0, 4))),
    # math module
    Rule("math.sin", "math.sin(x)", ("math.cos(x)",), math="cos x"),
    Rule("math.cos", "math.cos(x)", ("-math.sin(x)",), math="-sin x"),
    Rule("math.tan", "math.tan(x)", ("1 + out * out",), math="1 + tan² x", domain=(UNIT,)),
    Rule("math.asin", "math.asin(x)", ("1 / math.sqrt(1 - x * x)",), math="1/√(1-x²)",
         domain=(UNIT,)),
    Rule("math.acos", "math.acos(x)", ("-1 / math.sqrt(1 - x * x)",), math="-1/√(1-x²)",
         domain=(UNIT,)),
    Rule("math.atan", "math.atan(x)", ("1 / (1 + x * x)",), math="1/(1+x²)"),
    Rule("math.atan2", "math.atan2(x, y)", ("y / (x * x + y * y)", "-x / (x * x + y * y)"),
         math="∂/∂x = y/(x²+y²), ∂/∂y = -x/(x²+y²) for atan2(x, y)", domain=(POS, POS)),
    Rule("math.sinh", "math.sinh(x)", ("math.cosh(x)",), math="cosh x"),
    Rule("math.cosh", "math.cosh(x)", ("math.sinh(x)",), math="sinh x"),
    Rule("math.tanh", "math.tanh(x)", ("1 - out * out",), math="1 - tanh² x"),
    Rule("math.asinh", "math.asinh(x)", ("1 / math.sqrt(x * x + 1)",), math="1/√(x²+1)"),
    Rule("math.acosh", "math.acosh(x)", ("1 / math.sqrt(x * x - 1)",), math="1/√(x²-1)",
         domain=((1.1, 3.0),)),
    Rule("math.atanh", "math.atanh(x)", ("1 / (1 - x * x)",), math="1/(1-x²)", domain=(UNIT,)),
    Rule("math.exp", "math.exp(x)", ("out",), math="eˣ"),
    Rule("math.exp2", "math.exp2(x)", ("out * math.log(2)",), math="2ˣ ln 2"),
    Rule("math.expm1", "math.expm1(x)", ("out + 1",), math="eˣ"),
    Rule("math.log", "math.log(x)", ("1 / x",), math="1/x", domain=(POS,)),
    Rule("math.log_base", "math.log(x, y)", ("1 / (x * math.log(y))", "-out / (y * math.log(y))"),
         math="∂/∂x = 1/(x ln b), ∂/∂b = -log_b x/(b ln b)", domain=(POS, (1.5, 4.0))),
    Rule("math.log2", "math.log2(x)", ("1 / (x * math.log(2))",), math="1/(x ln 2)",
         domain=(POS,)),
    Rule("math.log10", "math.log10(x)", ("1 / (x * math.log(10))",), math="1/(x ln 10)",
         domain=(POS,)),
    Rule("math.log1p", "math.log1p(x)", ("1 / (1 + x)",), math="1/(1+x)", domain=(UNIT,)),
    Rule("math.sqrt", "math.sqrt(x)", ("1 / (2 * out)",), math="1/(2√x)", domain=(POS,)),
    Rule("math.cbrt", "math.cbrt(x)", ("1 / (3 * out * out)",), math="1/(3∛x²)", domain=(POS,)),
    Rule("math.pow", "math.pow(x, y)", ("0.0 if y == 0 else y * math.pow(x, y - 1)",
                                        "0.0 if x == 0 else out * math.log(x)"),
         math="∂/∂x = y·x^(y-1), ∂/∂y = x^y·ln x", notes="as for `**`", domain=(POS, ANY)),
    Rule("math.hypot", "math.hypot(x, y)", ("x / out", "y / out"),
         math="∂/∂x = x/r, ∂/∂y = y/r", domain=(POS, POS)),
    Rule("math.erf", "math.erf(x)", ("2 / math.sqrt(math.pi) * math.exp(-x * x)",),
         math="2/√π e^(-x²)"),
    Rule("math.erfc", "math.erfc(x)", ("-2 / math.sqrt(math.pi) * math.exp(-x * x)",),
         math="-2/√π e^(-x²)"),
    Rule("math.fabs", "math.fabs(x)", ("math.copysign(1.0, x)",), math="sign(x)",
         notes="copysign(1, x): +1 at +0.0, -1 at -0.0"),
    Rule("math.copysign", "math.copysign(x, y)", ("math.copysign(1.0, x) * math.copysign(1.0, y)", None),
         math="∂/∂x = sign(x)·sign(y)"),
    Rule("math.fmod", "math.fmod(x, y)", ("1", "-math.trunc(x / y)"),
         math="∂/∂x = 1, ∂/∂y = -trunc(x/y)", domain=(ANY, POS)),
    Rule("math.degrees", "math.degrees(x)", ("180 / math.pi",), math="180/π"),
    Rule("math.radians", "math.radians(x)", ("math.pi / 180",), math="π/180"),
    Rule("math.lgamma", "math.lgamma(x)", ("s2s_digamma(x)",), math="ψ(x)",
         notes="ψ = Γ'/Γ, computed by the module's s2s_digamma (SCALAR_HELPERS); also "
         "d/dx ln|Γ(x)| for negative x", domain=(POS,)),
    Rule("math.gamma", "math.gamma(x)", ("out * s2s_digamma(x)",), math="Γ(x)ψ(x)",
         domain=(POS,)),
    Rule("math.floor", "math.floor(x)", (None,), "int", "zero almost everywhere"),
    Rule("math.ceil", "math.ceil(x)", (None,), "int", "zero almost everywhere"),
    Rule("math.trunc", "math.trunc(x)", (None,), "int", "zero almost everywhere"),
    # functions of ints (a float raises TypeError, as Python's): counts, no derivative
    *(Rule(f"math.{name}", f"math.{name}({args})", (None,) * (args.count(",") + 1), "int",
           "ints only", domain=INTS) for name, args in INT_FUNCTIONS),
]
