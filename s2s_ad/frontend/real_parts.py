"""The parts of a real number or array: ``x.real``, ``x.imag``, ``x.conjugate()``.

Contract: :func:`attribute` lowers ``x.real`` and ``x.imag``, :func:`call`
lowers ``x.conjugate()`` and NumPy's ``np.real(x)``, ``np.imag(x)``,
``np.conj(x)``, ``np.conjugate(x)``, where ``x`` is a number or an array
(a structure's field named ``real`` is :mod:`s2s_ad.frontend.pytrees`'s).
s2s-ad differentiates real code, where these are exact:

* ``x.real``, ``np.real(x)`` and ``x.conjugate()`` are ``x`` (of a real
  array NumPy returns the array itself);
* ``x.imag``, ``np.imag(x)`` are ``0.0`` of a number (``0`` of an int) and
  ``np.zeros_like(x)`` of an array (its dtype), with no derivative (NumPy's
  is read-only: a write into it, which NumPy refuses, is refused, located:
  :func:`refuse_read_only`, :func:`refuse_part_write`);
* ``np.conj(x)``, ``np.conjugate(x)`` are ``x`` of a number and a new array
  equal to ``x`` (``np.copy``) of an array, as NumPy's ufunc makes one.

A complex value has no such reading (its real part is not a complex
differentiable function of it), so the generated code checks, where it
runs, that ``x`` is not complex, and raises ``TypeError`` naming the
expression otherwise (a ``check`` op, :mod:`s2s_ad.frontend.runtime_checks`).
The value kept is ``x`` itself: the gradient is that of the code without
the attribute. :func:`read_back` reads the check a generated module makes
as the same op, so the module is differentiated again (``hessian``,
``hvp``, the gradient of a ``grad -o`` file).

Before → after, for ``y = x.real * x.imag + x.conjugate()``::

    t1 = is_complex x
    check t1 raises TypeError
    (x.real is x, x.imag is 0.0, x.conjugate() is x)
    y = add (mul x 0.0) x
"""

from __future__ import annotations

import ast
import builtins

import numpy

from s2s_ad import ir
from s2s_ad.frontend.runtime_checks import raise_unless

__all__ = ["attribute", "call", "read_back", "refuse_part_write", "refuse_read_only"]

_IS_COMPLEX = "isinstance({x}, complex) or getattr(getattr({x}, 'dtype', None), 'kind', '') == 'c'"
"""The text of rule ``is_complex`` (rules/numpy.py), as ``ast.unparse`` prints it."""

_NUMPY = {numpy.real: "real", numpy.imag: "imag", numpy.conj: "conj", numpy.conjugate: "conj"}
"""NumPy's functions of the same parts, by the attribute or method each reads."""


def attribute(lo, node: ast.Attribute, var: str | None, hint: str | None):
    """``x.real`` / ``x.imag`` of a number or an array; None for any other
    attribute (``x`` is then not lowered here)."""
    if node.attr not in ("real", "imag") or lo.is_global_path(node.value):
        return None
    return _part(lo, node.attr, node.value, node, var, hint)


def call(lo, node: ast.Call, var: str | None, hint: str | None):
    """``x.conjugate()``, ``np.real(x)``, ``np.imag(x)``, ``np.conj(x)``,
    ``np.conjugate(x)``; None for any other call."""
    f = node.func
    if isinstance(f, ast.Attribute) and f.attr == "conjugate" and not node.args \
            and not node.keywords and not lo.is_global_path(f.value):
        return _part(lo, "conjugate", f.value, node, var, hint)
    if not (isinstance(f, (ast.Name, ast.Attribute)) and lo.is_global_path(f)
            and len(node.args) == 1 and not node.keywords
            and not isinstance(node.args[0], ast.Starred)):
        return None
    if isinstance(f, ast.Name) and (f.id in lo.env or hasattr(builtins, f.id)):
        return None
    try:
        part = _NUMPY.get(lo.resolve(f))
    except TypeError:  # (an object NumPy's functions cannot be looked up by)
        return None
    return None if part is None else _part(lo, part, node.args[0], node, var, hint)


def read_back(lo, node: ast.expr, var: str | None = None) -> ir.Value | None:
    """``node`` as an ``is_complex`` op where it is that rule's text: the
    check a generated module makes before ``x.real``, read back (a second
    derivative differentiates that module). None for anything else."""
    if not (isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or)
            and len(node.values) == 2 and isinstance(node.values[0], ast.Call)
            and len(node.values[0].args) == 2):
        return None
    x = node.values[0].args[0]
    if any(lo.src.globals.get(n, getattr(builtins, n)) is not getattr(builtins, n)
           or n in lo.env for n in ("isinstance", "complex", "getattr")):
        return None
    if ast.unparse(node) != _IS_COMPLEX.format(x=ast.unparse(x)):
        return None
    return lo.emit("is_complex", [lo.expr(x)], node, var, hint="is_complex")


def _part(lo, part: str, base: ast.expr, node: ast.expr, var, hint) -> ir.Operand:
    value = lo.expr(base)
    what = ast.unparse(node)
    if isinstance(value, ir.Const) and not isinstance(value.value, bool):
        number = value.value
        return ir.Const(number.real if part != "imag" else number.imag)
    if not (isinstance(value, ir.Value) and value.kind in ("float", "int", "array")):
        raise lo.src.error(base, f"`{what}` reads a part of a number or an array; "
                           f"`{ast.unparse(base)}` is not one")
    checked = lo.__dict__.setdefault("real_checked", {})
    if (id(value), id(lo.ops)) not in checked:  # (once per value in a block: the first runs first)
        checked[id(value), id(lo.ops)] = (value, lo.ops)
        is_complex = lo.emit("is_complex", [value], node, hint="is_complex")
        raise_unless(lo, is_complex, node, f"{what}: of a real value", "TypeError",
                     f"`{what}` (line {node.lineno}): `{ast.unparse(base)}` is complex; s2s-ad "
                     "differentiates real numbers and arrays, where the real part is the value "
                     "itself and the imaginary part 0", negate=False)
    if part in ("real", "conjugate") or part == "conj" and value.kind != "array":
        return value
    if part == "conj":
        return lo.emit("np.copy", [value], node, var, hint=hint)
    if value.kind != "array":
        return ir.Const(0 if value.kind == "int" else 0.0)
    zeros = lo.emit("np.zeros_like", [value], node, var, hint=hint)
    lo.__dict__.setdefault("read_only", {})[id(zeros)] = f"`{what}` (line {node.lineno})"
    return zeros


def refuse_read_only(lo, base: ir.Operand, at: ast.AST, name: str) -> None:
    """Refuse a write into ``base`` (held by ``name``, written at ``at``)
    where it is the imaginary part of a real array, which NumPy makes
    read-only: the code written raises where it runs."""
    why = lo.__dict__.get("read_only", {}).get(id(base))
    if why is not None:
        raise lo.src.error(at, f"`{name}` holds {why}, which NumPy makes read-only for a real "
                           "array (a write into it raises ValueError); write into an array of "
                           "its own (`np.zeros_like(...)`)")


def refuse_part_write(lo, target: ast.Subscript) -> None:
    """Refuse ``y.imag[i] = v`` and ``y.real[i] = v``, located, with what to
    write instead (a real array's imaginary part is read-only in NumPy, its
    real part the array itself)."""
    part = target.value
    if not (isinstance(part, ast.Attribute) and part.attr in ("real", "imag")):
        return
    base = ast.unparse(part.value)
    if part.attr == "imag":
        raise lo.src.error(target, f"`{ast.unparse(part)}` of a real array is read-only in NumPy "
                           "(a write into it raises ValueError); s2s-ad differentiates real "
                           "arrays, whose imaginary part is 0")
    raise lo.src.error(target, f"a write into `{ast.unparse(part)}` is not supported; of a real "
                       f"array it is a write into `{base}` itself: write "
                       f"`{base}[{ast.unparse(target.slice)}] = ...`")
