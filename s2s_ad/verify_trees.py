"""Structure parameters in :func:`s2s_ad.check`: one symbol per number leaf.

Contract: a parameter that receives a dict, list, tuple, NamedTuple or
dataclass of numbers (given to ``check`` as ``like={"params": EXAMPLE}``,
``--like params=EXAMPLE`` on the command line) is lowered for the structure
of its example (:func:`s2s_ad.frontend.pytrees.spec_of`), as ``grad`` does.
The check then names each number leaf by the path that reads it
(``params['w']``, ``p.b``, ``layers[0]['W']``): that name is the leaf's
sympy symbol, its key in ``at=`` and the name of its line in the verdict.
The original function and the generated gradient both run on a structure of
the same classes holding those symbols, and each leaf's entry of the
gradient (read out of the structure the gradient returns) is compared with
``sympy.diff`` of the original with respect to that leaf's symbol.

    >>> leaf_names(("dict", (("w", "leaf"), ("b", ("list", ("leaf", "leaf"))))), "params")
    ["params['w']", "params['b'][0]", "params['b'][1]"]
"""

from __future__ import annotations

from s2s_ad.errors import S2SError
from s2s_ad.frontend.pytrees import leaf_paths as leaf_names


def build(spec, leaves: list):
    """A value of ``spec``'s structure (its classes, keys, fields) holding
    ``leaves`` in order."""
    it = iter(leaves)

    def make(s):
        if s == "leaf":
            return next(it)
        if s[0] == "static":  # a string, None or bool: the example's own
            return s[1]
        if s[0] == "dict":
            return {key: make(sub) for key, sub in s[1]}
        if s[0] in ("list", "tuple"):
            items = [make(sub) for sub in s[1]]
            return items if s[0] == "list" else tuple(items)
        _, cls, fields = s
        values = {name: make(sub) for name, sub in fields}
        if isinstance(cls, type) and issubclass(cls, tuple):
            return cls(*values.values())
        return cls(**values)

    return make(spec)


def leaves_of(spec, value) -> list:
    """The leaves of ``value``, read along ``spec`` (a gradient of that
    structure, or an ``at=`` value for a structure parameter)."""
    if spec == "leaf":
        return [value]
    if spec[0] == "static":
        return []
    if spec[0] == "dict":
        return [x for key, sub in spec[1] for x in leaves_of(sub, value[key])]
    if spec[0] in ("list", "tuple"):
        return [x for i, sub in enumerate(spec[1]) for x in leaves_of(sub, value[i])]
    return [x for field, sub in spec[2] for x in leaves_of(sub, getattr(value, field))]


def specs(lengths: dict | None) -> dict:
    """The structure parameters among ``lengths``: name → spec (not a flat
    list of leaves, which stays a list parameter)."""
    from s2s_ad.frontend import pytrees
    return {name: shape[1] for name, shape in (lengths or {}).items()
            if isinstance(shape, tuple) and len(shape) == 2 and shape[0] == "tree"
            and not pytrees.is_flat(shape[1])}


def likes(like: dict | None, lengths: dict | None) -> dict | None:
    """``lengths`` with each ``like`` example's structure added, as
    ``("tree", spec)`` (what ``grad`` derives from the value it is called
    with). Arrays among the leaves are refused: sympy cannot run them."""
    if not like:
        return lengths
    from s2s_ad.frontend import pytrees
    out = dict(lengths or {})
    for name, example in like.items():
        spec = pytrees.spec_of(example)
        if spec is None or spec == "leaf" or isinstance(example, bool):
            raise S2SError(f"like={{{name!r}: ...}} (--like {name}=...): the example is not a "
                           "dict, list, tuple, NamedTuple or dataclass of numbers")
        if pytrees.holds_array(example):
            raise S2SError(f"like={{{name!r}: ...}} (--like {name}=...): the example holds "
                           "NumPy arrays; check proves structures of numbers only (sympy "
                           "cannot run NumPy code); compare the gradient of a structure of "
                           "arrays with central differences (tests/oracle.py)")
        if name in out:
            raise S2SError(f"{name!r} is given both a length and a structure (like=)")
        out[name] = ("tree", spec)
    return out


def expand_at(at: dict | None, trees: dict) -> dict | None:
    """``at`` with the value given for a structure parameter spread over its
    leaves' names (``{"p": P(w=0.3, b=1.0)}`` → ``{"p.w": 0.3, "p.b": 1.0}``)."""
    if not at or not trees:
        return at
    out = {}
    for name, value in at.items():
        if name not in trees:
            out[name] = value
            continue
        try:
            leaves = leaves_of(trees[name], value)
        except (KeyError, IndexError, AttributeError, TypeError):
            raise S2SError(f"at={{{name!r}: ...}}: the value does not have the structure of "
                           f"{name}'s example (like=)") from None
        out.update(zip(leaf_names(trees[name], name), leaves))
    return out
