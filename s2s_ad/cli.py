"""The ``s2s-ad`` command.

    s2s-ad grad  TARGET [--wrt a,x] [--value] [--output K] [--array x] [--static mode=l1]
                        [--like params=EXAMPLE] [--checkpoint [--snapshots K]] [-o FILE]
                                                       print or write the gradient module
    s2s-ad jvp   TARGET [--wrt a,x] [--length xs=N] [--array x] [--like params=EXAMPLE]
                        [-o FILE]
                                                       print or write the forward-mode module
    s2s-ad hessian TARGET [--wrt a,x] [--length xs=N] [--array x] [--like params=EXAMPLE]
                   [-o FILE]
                                                       print or write the Hessian module
    s2s-ad check TARGET [--wrt a,x] [--args n=5] [--at x=0.3] [--explore 16] [--mode forward]
                        [--order 2] [--like params=EXAMPLE]
                                                       prove it against sympy, path by path
                        [--shape W=3x4,x=4]            NumPy code: check against finite differences
    s2s-ad ir    TARGET                                    print the SSA graph
    s2s-ad graph TARGET [--backward] [--wrt a,x] [--output K] [--length xs=N] [-o out.png]
                                                       draw it (Graphviz DOT)
    s2s-ad explain TARGET [--wrt a,x] [--output K] [--length xs=N]   the reverse sweep, line by line

TARGET is ``path/to/file.py:fn``, ``path/to/file.py.fn`` or ``pkg.mod.fn``.
Exit codes: 0 success (proved or agrees), 1 mismatch, 2 usage or input error (or undecided).
"""

from __future__ import annotations

import argparse
import os
import sys

from s2s_ad import api, graph, ir
from s2s_ad.emit import loader
from s2s_ad.frontend import source
from s2s_ad.hessian_module import hessian_module
from s2s_ad._version import __version__
from s2s_ad.errors import S2SError, SourceError


def _wrt(text: str | None):
    """``--wrt`` as the API's ``wrt``: one name or index (``x``, ``0``) is one
    parameter, so the gradient is one value, as with ``grad(f, wrt="x")``;
    several (``a,x``) or a trailing comma (``x,``) are a tuple, as with
    ``wrt=("x",)``."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",") if p.strip()]
    names = tuple(int(p) if p.lstrip("-").isdigit() else p for p in parts)
    if len(names) == 1 and "," not in text:
        return names[0]
    return names


def _assignments(items: list[str] | None, what: str) -> dict:
    out = {}
    for item in items or []:
        for part in item.split(","):
            name, eq, value = part.partition("=")
            if not eq:
                raise S2SError(f"{what} expects name=value, got {part!r}")
            try:
                out[name.strip()] = int(value) if value.strip().lstrip("-").isdigit() else float(value)
            except ValueError:
                raise S2SError(f"{what} {name}: {value!r} is not a number") from None
            if what == "--length" and not (isinstance(out[name.strip()], int)
                                           and out[name.strip()] > 0):
                raise S2SError(f"--length {name.strip()}: {value!r} is not a positive whole "
                               "number (e.g. --length xs=3)")
    return out


def _statics(items: list[str] | None) -> dict | None:
    """``--static mode=l1,reduce=None,flag=True`` → {"mode": "l1", "reduce": None,
    "flag": True}: the strings, None and bools the code is generated for
    (parameters not named keep their defaults)."""
    if not items:
        return None
    out = {}
    for item in items:
        for part in item.split(","):
            name, eq, value = part.partition("=")
            if not eq or not name.strip():
                raise S2SError(f"--static expects name=value (like mode=l1), got {part!r}")
            value = value.strip()
            if value in ("None", "True", "False"):
                out[name.strip()] = {"None": None, "True": True, "False": False}[value]
            elif len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                out[name.strip()] = value[1:-1]
            else:
                out[name.strip()] = value
    return out


def _likes(items: list[str] | None, fn, lengths: dict | None) -> tuple:
    """``--like params=EXAMPLE`` → lengths ``{"params": ("tree", spec)}``: the
    code is generated for the structure (keys, fields, classes, lengths) of
    ``EXAMPLE``, a module-level value of the target's module (``A.b`` reads
    an attribute of one); and the parameters whose example holds an array,
    with the paths of its array leaves (``params['W']``: those leaves are
    arrays, the others numbers, as when ``s2s_ad.grad`` is called with it)."""
    if not items:
        return lengths, ()
    holding: list[str] = []
    from s2s_ad.frontend import pytrees
    out = dict(lengths or {})
    for item in items:
        for part in item.split(","):
            name, eq, path = part.partition("=")
            name, path = name.strip(), path.strip()
            if not eq or not name or not path:
                raise S2SError(f"--like expects name=VALUE (like params=EXAMPLE), got {part!r}")
            head, *rest = path.split(".")
            if head not in fn.__globals__:
                raise S2SError(f"--like {name}: {head!r} is not defined in the module of "
                               f"{fn.__name__}")
            value = fn.__globals__[head]
            for attr in rest:
                if not hasattr(value, attr):
                    raise S2SError(f"--like {name}: {path!r} has no attribute {attr!r}")
                value = getattr(value, attr)
            spec = pytrees.spec_of(value)
            if spec is None or spec == "leaf":
                raise S2SError(f"--like {name}: {path} is not a dict, list, tuple, NamedTuple "
                               "or dataclass of numbers and arrays")
            out[name] = ("tree", spec)
            if pytrees.holds_array(value):
                # its array leaves, by path: the others are numbers, as for grad's call
                holding += [name, *pytrees.array_paths(value, name)]
    return out, tuple(holding)


def _shapes(items: list[str] | None) -> dict | None:
    """``--shape W=3x4,x=4`` → {"W": (3, 4), "x": (4,)}."""
    if not items:
        return None
    from s2s_ad.verify_arrays import parse_shape
    out = {}
    for item in items:
        for part in item.split(","):
            name, eq, shape = part.partition("=")
            if not eq:
                raise S2SError(f"--shape expects name=shape (like W=3x4), got {part!r}")
            out[name.strip()] = parse_shape(shape)
    return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="s2s-ad", description="Source-to-source reverse-mode "
                                "automatic differentiation for Python.")
    p.add_argument("--version", action="version", version=f"s2s-ad {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    g = sub.add_parser("grad", help="generate the gradient module")
    g.add_argument("target")
    g.add_argument("--wrt", help="comma-separated parameter names or indices (default: all); "
                   "one name returns one gradient, several or a trailing comma (x,) a tuple")
    g.add_argument("--value", action="store_true",
                   help="generate value_and_grad_FN, returning (value, gradient)")
    g.add_argument("-o", "--out", dest="file", metavar="FILE", help="write the module to FILE")
    g.add_argument("--output", type=int, metavar="K",
                   help="for a function returning a tuple or list: the item to differentiate")
    g.add_argument("--length", action="append", metavar="NAME=N",
                   help="length of a list parameter (e.g. xs=3); its gradient is a list")
    g.add_argument("--like", action="append", metavar="NAME=VALUE",
                   help="a module-level value (of the target's module) whose structure a "
                   "dict, list, tuple, NamedTuple or dataclass parameter has (e.g. "
                   "params=EXAMPLE); its gradient has that structure")
    g.add_argument("--static", action="append", metavar="NAME=VALUE",
                   help="a static argument (a string, None, True or False) the code is "
                        "generated for, e.g. mode=l1 (default: each such parameter's default)")
    g.add_argument("--checkpoint", action="store_true",
                   help="checkpoint every loop inside no other loop: snapshots of its carried "
                        "values instead of a tape of every iteration (docs/checkpointing.md)")
    g.add_argument("--snapshots", type=int, metavar="K",
                   help="with --checkpoint: at most K snapshots per loop (default 100)")
    _array_option(g)

    j = sub.add_parser("jvp", help="generate the forward-mode (Jacobian-vector product) module")
    j.add_argument("target")
    j.add_argument("--wrt", help="comma-separated parameter names or indices that get a tangent "
                   "(default: all)")
    j.add_argument("-o", "--out", dest="file", metavar="FILE", help="write the module to FILE")
    j.add_argument("--length", action="append", metavar="NAME=N",
                   help="length of a list parameter (e.g. xs=3); its tangent is a list")
    j.add_argument("--static", action="append", metavar="NAME=VALUE",
                   help="a static argument (a string, None, True or False), e.g. mode=l1")
    j.add_argument("--like", action="append", metavar="NAME=VALUE",
                   help="a module-level value (of the target's module) whose structure a "
                   "dict, list, tuple, NamedTuple or dataclass parameter has (e.g. "
                   "params=EXAMPLE); its tangent has that structure")
    _array_option(j)

    h = sub.add_parser("hessian", help="generate the Hessian module: the Hessian-vector product "
                       "(gradient of the forward-mode module) and the Hessian")
    h.add_argument("target")
    h.add_argument("--wrt", help="comma-separated parameter names or indices (default: all)")
    h.add_argument("-o", "--out", dest="file", metavar="FILE", help="write the module to FILE")
    h.add_argument("--length", action="append", metavar="NAME=N",
                   help="length of a list parameter (e.g. xs=3)")
    h.add_argument("--like", action="append", metavar="NAME=VALUE",
                   help="a module-level value (of the target's module) whose structure a "
                   "dict, list, tuple, NamedTuple or dataclass parameter has (e.g. "
                   "params=EXAMPLE); its Hessian is that structure nested in itself")
    _array_option(h)

    c = sub.add_parser("check", help="prove the generated gradient against sympy")
    c.add_argument("target")
    c.add_argument("--wrt", help="comma-separated parameter names or indices (default: all)")
    c.add_argument("--args", action="append", metavar="NAME=VALUE",
                   help="concrete values for parameters that stay numbers (e.g. n=5)")
    c.add_argument("--at", action="append", metavar="NAME=VALUE",
                   help="sample point that decides comparisons (default 0.5, 0.7, ...)")
    c.add_argument("--explore", type=int, default=16, metavar="N",
                   help="random points that also decide comparisons; each distinct path "
                        "found is proved on its own (default 16; 0: the sample point only)")
    c.add_argument("--points", type=int, default=8, help="points for the numeric fallback")
    c.add_argument("--timeout", type=float, default=20.0, metavar="SECONDS",
                   help="wall-clock budget of the whole check; symbolic work gets half, "
                        "then finite differences (default 20; 0 for no limit)")
    c.add_argument("--output", type=int, metavar="K",
                   help="for a function returning a tuple or list: the item to check")
    c.add_argument("--length", action="append", metavar="NAME=N",
                   help="length of a list parameter (e.g. xs=3)")
    c.add_argument("--like", action="append", metavar="NAME=VALUE",
                   help="check for the structure of VALUE, a module-level dict, list, tuple, "
                   "NamedTuple or dataclass of numbers (e.g. params=EXAMPLE): one symbol per "
                   "leaf, named by its path (params['w'], p.b)")
    c.add_argument("--order", type=int, choices=(1, 2), default=1,
                   help="1: the gradient (default); 2: second derivatives (the Hessian of "
                        "s2s_ad.hvp, forward over reverse) against sympy.diff")
    c.add_argument("--mode", choices=("reverse", "forward"), default="reverse",
                   help="check the gradient (reverse, the default) or the forward-mode module")
    c.add_argument("--shape", action="append", metavar="NAME=SHAPE",
                   help="shape of an array parameter of a NumPy function (e.g. W=3x4,x=4): "
                   "such functions get a numeric check against finite differences")

    i = sub.add_parser("ir", help="print the SSA graph")
    i.add_argument("target")
    _array_option(i)

    d = sub.add_parser("graph", help="draw the forward graph, or forward and backward (DOT, SVG, PNG)")
    d.add_argument("target")
    d.add_argument("--wrt", help="with --backward: comma-separated parameter names or indices "
                   "(default: all)")
    d.add_argument("--backward", action="store_true",
                   help="draw the reverse sweep too, one node per local derivative")
    d.add_argument("-o", "--out", dest="file", metavar="FILE",
                   help="write FILE: .dot as it is, .svg/.png/.pdf rendered by Graphviz `dot` "
                   "(default: DOT to stdout)")
    d.add_argument("--output", type=int, metavar="K",
                   help="with --backward, for a function returning a tuple or list: the item "
                   "to differentiate")
    d.add_argument("--length", action="append", metavar="NAME=N",
                   help="length of a list parameter (e.g. xs=3): one leaf per item")
    _array_option(d)

    e = sub.add_parser("explain", help="the reverse sweep line by line, with the local derivative "
                       "each line applies")
    e.add_argument("target")
    e.add_argument("--wrt", help="comma-separated parameter names or indices (default: all)")
    e.add_argument("--output", type=int, metavar="K",
                   help="for a function returning a tuple or list: the item to differentiate")
    e.add_argument("--length", action="append", metavar="NAME=N",
                   help="length of a list parameter (e.g. xs=3)")
    _array_option(e)
    return p


def _array_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--array", action="append", metavar="NAME",
                   help="comma-separated parameters that receive NumPy arrays: the code is "
                        "generated for arrays there even if the function never names NumPy "
                        "(which is otherwise generated for numbers)")


def _arrays(items: list[str] | None) -> tuple[str, ...]:
    return tuple(n.strip() for item in items or [] for n in item.split(",") if n.strip())


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        fn = source.load_target(args.target)
        if args.command == "grad":
            lengths, holding = _likes(args.like, fn, _assignments(args.length, "--length")
                                      or None)
            text, files = api.gradient_module(
                fn, _wrt(args.wrt), with_value=args.value, output=args.output,
                lengths=lengths, arrays=_arrays(args.array) + holding,
                statics=_statics(args.static),
                checkpoint=_checkpoint(args))
            _deliver(text, args.file, fn, loader.write, files)
            return 0
        if args.command == "jvp":
            lengths, holding = _likes(args.like, fn, _assignments(args.length, "--length")
                                      or None)
            text, files = api.jvp_module(
                fn, _wrt(args.wrt), lengths=lengths, arrays=_arrays(args.array) + holding,
                statics=_statics(args.static))
            _deliver(text, args.file, fn, loader.write, files)
            return 0
        if args.command == "hessian":
            lengths, holding = _likes(args.like, fn, _assignments(args.length, "--length")
                                      or None)
            text, files = hessian_module(fn, _wrt(args.wrt), lengths=lengths,
                                         arrays=_arrays(args.array) + holding)
            _deliver(text, args.file, fn, loader.write, files)
            return 0
        if args.command == "check":
            lengths, holding = _likes(args.like, fn, _assignments(args.length, "--length")
                                      or None)
            if holding:
                raise S2SError(f"--like {holding[0]}=...: the example holds NumPy arrays; check "
                               "proves structures of numbers only (sympy cannot run NumPy code)")
            from s2s_ad.verify import check  # imports sympy: only this command needs it
            verdict = check(fn, _wrt(args.wrt), args=_assignments(args.args, "--args"),
                            at=_assignments(args.at, "--at"), points=args.points,
                            timeout=args.timeout or None,
                            output=args.output,
                            lengths=lengths,
                            shapes=_shapes(args.shape), mode=args.mode,
                            explore=args.explore, order=args.order)
            print(verdict)
            return {"proved": 0, "agrees": 0, "mismatch": 1}.get(verdict.status, 2)
        if args.command == "ir":
            sys.stdout.write(ir.format_function(api.lower(fn, arrays=_arrays(args.array))))
            return 0
        if args.command == "graph":
            if (args.wrt is not None or args.output is not None) and not args.backward:
                raise S2SError("--wrt and --output choose what the reverse sweep "
                               "differentiates; add --backward to draw it")
            text = api.graph_dot(fn, _wrt(args.wrt), backward=args.backward, output=args.output,
                                 lengths=_assignments(args.length, "--length") or None,
                                 arrays=_arrays(args.array))
            _deliver(text, args.file, fn, graph.render)
            return 0
        if args.command == "explain":
            sys.stdout.write(api.explain(fn, _wrt(args.wrt), output=args.output,
                                         lengths=_assignments(args.length, "--length") or None,
                                         arrays=_arrays(args.array)))
            return 0
    except BrokenPipeError:
        # stdout closed early (`s2s-ad grad ... | head`): not an error of ours;
        # point stdout at devnull so the interpreter's final flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except SourceError as exc:
        # Located errors keep the compiler form (file:line:col, line, caret).
        print(exc if exc.line > 0 else f"s2s-ad: {exc}", file=sys.stderr)
        return 2
    except (S2SError, OSError) as exc:
        print(f"s2s-ad: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - never a traceback; 1 means a mismatch only
        # Most often the function itself fails on the input given (shapes
        # that do not fit, a value it cannot take); S2S_AD_TRACEBACK=1 shows where.
        if os.environ.get("S2S_AD_TRACEBACK"):
            raise
        first = str(exc).splitlines()[0] if str(exc) else ""
        print(f"s2s-ad: error: {args.target}: {type(exc).__name__}: {first} (does the input "
              "fit the function? check --shape/--args/--length; S2S_AD_TRACEBACK=1 shows "
              "where)", file=sys.stderr)
        return 2
    return 2


def _checkpoint(args):
    """``checkpoint=`` from ``--checkpoint [--snapshots K]``."""
    if args.snapshots is not None:
        if not args.checkpoint:
            raise S2SError("--snapshots K sets the budget of --checkpoint; add --checkpoint")
        if args.snapshots < 1:
            raise S2SError(f"--snapshots {args.snapshots}: a loop keeps at least 1 snapshot "
                           "(the state it starts from)")
        return args.snapshots
    return True if args.checkpoint else None


def _deliver(text: str, path: str | None, fn, write, sources: list[str] = ()) -> None:
    """Print ``text``, or ``write(text, path)`` — never over ``fn``'s own
    source, any of ``sources`` (the files the text was generated from), or a
    read-only file."""
    if not path:
        sys.stdout.write(text)
        return
    _refuse_overwriting_source(path, fn, sources)
    try:
        write(text, path)
    except OSError as exc:
        # The error may name a temporary file; name the user's path.
        raise S2SError(f"cannot write {path}: {exc.strerror or exc}") from None
    print(f"wrote {path}", file=sys.stderr)


def _refuse_overwriting_source(output: str, fn, sources: list[str] = ()) -> None:
    if not os.path.exists(output):
        return
    own = fn.__code__.co_filename
    for src_file in [own, *sources]:
        if os.path.exists(src_file) and os.path.samefile(output, src_file):
            what = f"the source file of {fn.__name__}" if os.path.samefile(src_file, own) else \
                f"the source of a function {fn.__name__} calls"
            raise S2SError(f"-o {output} is {what}; refusing to overwrite it "
                           "(choose another file)")
    # Checked on the mode bits, not os.access: the file is replaced, not
    # opened, so only its read-only mark says the user wants it kept.
    if not os.stat(output).st_mode & 0o222:
        raise S2SError(f"-o {output} is read-only; refusing to overwrite it "
                       "(choose another file, or make it writable)")


if __name__ == "__main__":
    sys.exit(main())
