"""What you differentiate: a function, a closure, or a bound method.

Contract: :func:`locate` is :func:`s2s_ad.frontend.source.locate` for the
function given to ``grad``/``vjp``/the CLI, where a bound method is lifted
first (:mod:`s2s_ad.frontend.methods`); :func:`captured_values` gives the
data its gradient takes besides its parameters (a closure's captured
numbers and arrays, the module-level arrays and structures it reads, a
method's ``self`` attributes), read now.
"""

from __future__ import annotations

from s2s_ad.frontend import methods, source


def locate(fn) -> source.Source:
    if methods.is_bound(fn):
        return methods.lift(fn).__s2s_source__
    return source.locate(fn)


def captured_values(fn) -> dict:
    if methods.is_bound(fn):
        return methods.attribute_values(fn)
    return source.captured_values(fn)


def reader(fn):
    """A function of no arguments returning :func:`captured_values` of ``fn``
    as it is when called: which values are data is decided once, here (the
    source is read once), their values are read on every call."""
    if methods.is_bound(fn):
        p = methods.plan(fn)
        obj, names = p.obj, [(f"{p.self_name}_{a}", a) for a in p.data]
        module = list(p.module.items())
        if not module and not p.class_reads:
            return lambda: {key: getattr(obj, a) for key, a in names}

        def now_method() -> dict:
            if p.class_reads and methods.hidden(p):
                methods.plan(fn)  # refused, located, as a gradient asked for now is
            out = {key: getattr(obj, a) for key, a in names}
            try:
                out.update((n, g[n]) for n, g in module)
            except KeyError as exc:
                raise NameError(f"{fn.__qualname__} reads the module-level name "
                                f"{exc.args[0]!r}, which is no longer defined") from None
            return out
        return now_method
    code = getattr(fn, "__code__", None)
    held = source.captured_values(fn)
    cells = [(n, c) for n, c in zip(code.co_freevars, fn.__closure__ or ())
             if n in held] if code is not None else []
    read = [n for n in held if n not in dict(cells)]
    if not read:
        return lambda: {n: c.cell_contents for n, c in cells}
    g = fn.__globals__  # module-level data: read from the module on every call

    def now() -> dict:
        out = {n: c.cell_contents for n, c in cells}
        try:
            out.update((n, g[n]) for n in read)
        except KeyError as exc:
            raise NameError(f"{fn.__qualname__} reads the module-level name {exc.args[0]!r}, "
                            "which is no longer defined") from None
        return out
    return now


def holds(fn):
    """``name -> "captures `name`"`` or ``"reads the module-level `name`"``:
    how ``fn`` holds the data named, for messages."""
    cells = set(getattr(getattr(fn, "__code__", None), "co_freevars", ()))
    g = getattr(fn, "__globals__", {})
    return lambda n: (f"captures `{n}`" if n in cells or n not in g
                      else f"reads the module-level `{n}`")
