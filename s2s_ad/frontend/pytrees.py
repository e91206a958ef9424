"""Pytree parameters: dicts, lists, tuples, NamedTuples and dataclasses.

Contract: a parameter that receives a nested structure of numbers or arrays
(``params["W1"]``, ``p.w``, ``layers[0].W``) is lowered for that structure,
as a list parameter of a given length is: the caller's value decides a
*spec* (:func:`spec_of`, hashable: which keys, fields, classes and lengths),
the generated code reads each leaf into a name of its own on entry
(``p_w = p.w``) and returns the gradient as a value of the same structure
(a dict for a dict, an instance of the same dataclass or NamedTuple class,
built by ``type(p)(w=dp_w, ...)``). No registration is needed: a dataclass
is read through :func:`dataclasses.fields`, a NamedTuple through
``_fields``. One generated module serves every value of that structure;
another structure gets its own (cached, like lengths).

While lowering, the structure is a :class:`StaticObject` (dataclass,
NamedTuple) or the structures of :mod:`s2s_ad.frontend.structures`
(``StaticDict``, ``StaticList``, tuple), whose leaves are parameter values.

Spec grammar (``("tree", node)`` in ``lengths``)::

    node := "leaf"                                  a number or an array
          | ("dict", ((key, node), ...))            str keys, in the dict's order
          | ("list" | "tuple", (node, ...))
          | ("object", cls, ((field, node), ...))   dataclass or NamedTuple
          | ("static", value)                       a string, None or bool in it

A static leaf (``layer.act == "tanh"``, ``cfg.use_bias``) is a constant of
the code generated for that value, as a static parameter is: it selects
code and has no adjoint; the gradient's structure holds the argument's own
value there (``type(p)(w=dp_w, act=p.act)``).
"""

from __future__ import annotations

import ast
import numbers

from s2s_ad import ir
from s2s_ad.frontend import param_uses, structures
from s2s_ad.frontend.numpy import ATTRIBUTES
from s2s_ad.frontend.specs import (_fields, _is_array, array_paths, captured_spec,  # noqa: F401
                                   is_static_spec,
                                   number_list, spec_of)
from s2s_ad.frontend.structures import StaticObject


def leaf_paths(spec, base: str) -> list[str]:
    """The expression reading each leaf of a structure of spec ``spec`` held by
    ``base``, in the order of its leaves (``p.w``, ``params['W1']``,
    ``layers[0].b``): code in a generated module, and the leaf's readable name
    in a check's report."""
    if spec == "leaf":
        return [base]
    if is_static_spec(spec):
        return []
    if spec[0] == "dict":
        return [e for key, sub in spec[1] for e in leaf_paths(sub, f"{base}[{key!r}]")]
    if spec[0] in ("list", "tuple"):
        return [e for i, sub in enumerate(spec[1]) for e in leaf_paths(sub, f"{base}[{i}]")]
    return [e for field, sub in spec[2] for e in leaf_paths(sub, f"{base}.{field}")]


def holds_array(value) -> bool:
    if _is_array(value):
        return True
    names = _fields(value)
    if names is not None:
        return any(holds_array(getattr(value, n)) for n in names)
    if isinstance(value, dict):
        return any(holds_array(v) for v in value.values())
    if type(value) in (list, tuple):
        return any(holds_array(v) for v in value)
    return False


def is_flat(spec) -> bool:
    """A list or tuple of leaves (a list parameter of a given length)."""
    return isinstance(spec, tuple) and spec[0] in ("list", "tuple") \
        and all(s == "leaf" for s in spec[1])


def tree_param(lo, node: ast.arg, name: str, spec, default, has_default: bool,
               kwonly: bool) -> ir.Param:
    """A parameter receiving a structure of spec ``spec``: one value per leaf
    (named after its path, ``p_w``, ``layers_0_W``), bound as the structure."""
    if has_default:
        raise lo.src.error(node, f"parameter {node.arg!r} receives a structure; it cannot "
                           "have a default value")
    kind_of = structures.leaf_kinds(lo, node.arg)
    leaves: list[ir.Value] = []

    def build(s, path: str, at: str):
        if is_static_spec(s):
            return ir.Const(s[1]), s
        if s == "leaf":
            v = ir.Value(lo.namer.fresh(path), kind_of(at), None)
            leaves.append(v)
            return v, ("leaf", v)
        if s[0] == "dict":
            out, tree = structures.StaticDict(), []
            for key, sub in s[1]:
                item, t = build(sub, f"{path}_{_ident(key)}", f"{at}[{key!r}]")
                out.items[key] = item
                tree.append((key, t))
            return out, ("dict", tuple(tree))
        if s[0] in ("list", "tuple"):
            pairs = [build(sub, f"{path}_{i}", f"{at}[{i}]") for i, sub in enumerate(s[1])]
            items = [p[0] for p in pairs]
            out = structures.StaticList(items) if s[0] == "list" else tuple(items)
            return out, (s[0], tuple(p[1] for p in pairs))
        _, cls, fs = s
        out, tree = StaticObject(cls), []
        for fname, sub in fs:
            item, t = build(sub, f"{path}_{fname}", f"{at}.{fname}")
            out.items[fname] = item
            tree.append((fname, t))
        return out, ("object", cls, tuple(tree))

    bound, tree = build(spec, node.arg, node.arg)
    value = ir.Value(name, "tree", node.arg)
    lo.env[node.arg] = bound
    return ir.Param(value, default, has_default, kwonly, leaves, tree)


def _ident(key: str) -> str:
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in key)
    return out if out and not out[0].isdigit() else f"k{out}"


def attribute(lo, node: ast.Attribute):
    """``p.w`` on a structure parameter (or an item of one): the field's
    value. None when ``node`` is not an attribute of a structure."""
    base_node = node.value
    root = base_node
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        root = root.value
    if not isinstance(root, ast.Name) or root.id not in lo.env:
        return None
    bound = lo.env[root.id]
    structures.failed_call(lo, bound)
    if not (structures.is_structure(bound) or isinstance(bound, StaticObject)):
        op = lo.defs.get(id(bound)) if isinstance(bound, ir.Value) else None
        if isinstance(base_node, ast.Name) and op is not None and not _array_attribute(
                node.attr) and op.prim in ("getitem", "array.getitem"):
            bound = op.args[0]  # `for layer in layers: layer.W`: layers is the structure
        if isinstance(bound, ir.Value) and bound.kind in ("float", "array") \
                and any(p.value is bound for p in getattr(lo, "params_so_far", ())) \
                and not _array_attribute(node.attr):
            # p.w on a parameter lowered as a number: lower it for its structure
            raise param_uses.SequenceParameter(bound.var, *param_uses.where(lo, node, (
                f"parameter {bound.var!r} is used as a structure (`{ast.unparse(node)}`); "
                "call the gradient with the value (a dataclass, NamedTuple or dict), which "
                "generates the code for its structure")))
        return None
    base = lo.expr(base_node)
    if isinstance(base, StaticObject):
        if node.attr not in base.items:
            raise lo.src.error(node, f"`{ast.unparse(base_node)}` ({base.cls.__name__}) has "
                               f"no field {node.attr!r}")
        return base.items[node.attr]
    return None


def _array_attribute(attr: str) -> bool:
    # and the attributes every Python number has: `x.real` reads a number
    return attr in ATTRIBUTES or attr in ("real", "imag", "numerator", "denominator",
                                          "conjugate")
