"""`s2s-ad explain`: the reverse sweep beside the forward ops and local derivatives.

The explained lines are compared with the generated module itself (same
statements, same order), and each stated local derivative is checked against
sympy.diff of the forward op it names.
"""

from __future__ import annotations

import math
import os
import re

import pytest
import sympy

import s2s_ad
from s2s_ad.cli import main
from s2s_ad.emit import fuse
from seed_ggml import f as seed

import calls_loops_src
import calls_src
import cf_programs
import graph_src
from graph_src import returns_tuple, shared_temp, temporaries, twice_item
import gaussian_nll
import logistic_map
import structures_src
import tied_weights

SEED_FILE = "examples/seed_ggml.py:f"


def section(text: str, title: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(title) + 1
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return [line.strip() for line in lines[start:end]]


def test_seed_reverse_sweep_lines():
    text = s2s_ad.explain(seed, wrt=("a", "x"))
    rows = [re.split(r"\s{2,}", line) for line in section(text, "reverse sweep")]
    assert rows == [
        ["dy = 1.0", "seed: ∂y/∂y = 1, y is the result"],
        ["da = dy * b", "← y = a * b, ∂y/∂a = b", "line 10"],
        ["db = dy * a", "← y = a * b, ∂y/∂b = a", "line 10"],
        ["dx = db * x", "← b = x * x, ∂b/∂x = x (left operand)", "line 9"],
        ["dx += db * x", "← b = x * x, ∂b/∂x = x (right operand)", "line 9"],
    ]


def test_seed_adjoints_list_the_uses_they_sum():
    text = s2s_ad.explain(seed, wrt=("a", "x"))
    title = "adjoints (each sums one contribution per use of its value)"
    rows = {r[0]: r[1:] for r in (re.split(r"\s{2,}", line) for line in section(text, title))}
    assert rows["dx"] == ["sums 2 uses: b = x * x (line 9, left operand); "
                          "b = x * x (line 9, right operand)"]
    assert rows["da"] == ["y = a * b (line 10)"]
    assert rows["dy"] == ["seed"]
    assert text.rstrip().endswith("gradient: ∂y/∂a = da, ∂y/∂x = dx")


def test_docs_show_the_real_explanations():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "docs", "graphs.md"), encoding="utf-8") as f:
        page = f.read()
    assert s2s_ad.explain(seed, wrt=("a", "x")) in page, "regenerate docs/graphs.md's seed block"
    nll = s2s_ad.explain(gaussian_nll.nll, wrt=("mu", "log_sigma"))
    twice = s2s_ad.explain(calls_src.twice_clip)
    tied = s2s_ad.explain(tied_weights.tied)
    loop = s2s_ad.explain(logistic_map.logistic, wrt=("x", "r"))
    assert loop[loop.index("reverse sweep"):].rstrip("\n") in page, \
        "regenerate docs/graphs.md's loop block"
    real = s2s_ad.explain(seed, wrt=("a", "x")) + nll + twice + tied + loop
    shown, inside = [], False
    for line in page.splitlines():
        if line.startswith("```"):
            inside = not inside
        elif inside and "←" in line:
            shown.append(line)
    assert len(shown) >= 14
    assert [line for line in shown if line not in real] == []


def test_seed_golden(golden):
    golden("explain_seed.txt", s2s_ad.explain(seed, wrt=("a", "x")))


@pytest.mark.parametrize("fn, output", [
    (seed, None), (temporaries, None), (shared_temp, None), (calls_src.nested, None),
    (calls_src.same_arg, None), (calls_src.imported, None), (twice_item, None),
    (structures_src.use_split, None), (returns_tuple, 0), (returns_tuple, 2),
])
def test_explained_lines_are_the_generated_reverse_sweep(fn, output):
    """Every statement of the generated reverse sweep, in order, and nothing else
    (as the transform makes it: one statement per local derivative, before
    s2s_ad/emit/fuse.py writes temporaries inside their readers)."""
    with fuse.disabled():
        generated = s2s_ad.gradient_source(fn, None, output=output)
    body = generated.split("# reverse sweep\n", 1)[1].split("\n    return ", 1)[0]
    code = [line.split("#")[0].strip() for line in body.splitlines() if line.strip()]
    explained = [re.split(r"\s{2,}", line)[0]
                 for line in section(s2s_ad.explain(fn, output=output), "reverse sweep")]
    assert [line for line in explained
            if not line.startswith("(no code") and " = 1.0" not in line] == code


def test_a_tuple_item_read_twice_sums_its_reads():
    text = s2s_ad.explain(twice_item)
    assert re.search(r"  t_0 = t\[0\] +line 35: t\[0\]", text)  # read once, at the call
    assert re.search(r"dx, dy = split_bwd\(t_tape, \(dt_0, dout\)\) +← t = split\(x, y\)", text)
    assert re.search(r"  dt_0 +sums 2 uses: t1 = t_0 \* b \(line 38\); b = t_0 \* 2\.0 "
                     r"\(line 37\)", text)


@pytest.mark.parametrize("fn, claims", [(seed, 4), (temporaries, 4), (shared_temp, 3)])
def test_stated_local_derivatives_match_sympy(fn, claims):
    """`← out = EXPR, ∂out/∂v = P` claims dEXPR/dv = P; sympy checks each claim.
    Where an op reads v twice (left and right operand), the claims are per
    operand and their sum is the derivative. (A temporary whose adjoint is
    its consumer's, ``t1`` of ``y = t1 + c``, has no statement to explain.)"""
    _check_claims(s2s_ad.explain(fn), claims)


def _check_claims(text: str, at_least: int) -> None:
    claims = re.findall(r"← (\w+) = (.+?), ∂\1/∂(\w+) = (.+?)(?: \((?:left|right) operand\))?  ",
                        text + "  ")
    assert len(claims) >= at_least
    ns = {"math": sympy}
    summed: dict = {}
    for out, expr, var, partial in claims:
        names = set(re.findall(r"\b[a-z_]\w*\b", expr + " " + partial)) - {"math", "sin", "cos"}
        symbols = {n: sympy.Symbol(n) for n in names}
        key = (out, expr, var)
        want = sympy.diff(eval(expr, ns, dict(symbols)), symbols[var])
        symbols[out] = eval(expr, ns, dict(symbols))  # a partial may read the op's result
        summed[key] = summed.get(key, 0) + eval(partial, ns, dict(symbols))
        summed[key + ("want",)] = want
    for key in [k for k in summed if len(k) == 3]:
        assert sympy.simplify(summed[key] - summed[key + ("want",)]) == 0, key


def test_conditional_contributions_are_explained():
    def with_max(a, b):
        return max(a, b) * a

    text = s2s_ad.explain(with_max)
    assert re.search(r"da \+= dt1 if a >= b else 0\.0 +← t1 = max\(a, b\), "
                     r"∂t1/∂a = 1\.0 if a >= b else 0\.0", text)
    assert re.search(r"  da +sums 2 uses: out = t1 \* a \(line \d+\); t1 = max\(a, b\)", text)
    assert re.search(r"  db +t1 = max\(a, b\) \(line \d+\)", text)


def test_calls_explain_the_backward_pass_and_each_added_use():
    text = s2s_ad.explain(calls_src.same_arg)
    rows = [re.split(r"\s{2,}", line) for line in section(text, "reverse sweep")]
    assert rows[1:] == [
        ["dx, dx_1, dx_2 = cube_plus_bwd(out_tape, dout)",
         "← out = cube_plus(x, x, x), dout · ∂cube_plus/∂(x, k, shift), by cube_plus's backward pass",
         "line 27"],
        ["dx = dx + dx_1", "← out = cube_plus(x, x, x), another use of x (parameter k)", "line 27"],
        ["dx = dx + dx_2", "← out = cube_plus(x, x, x), another use of x (parameter shift)", "line 27"],
    ]
    assert re.search(r"  dx +sums 3 uses: out = cube_plus\(x, x, x\) \(line 27, parameter x\); "
                     r"out = cube_plus\(x, x, x\) \(line 27, parameter k\); "
                     r"out = cube_plus\(x, x, x\) \(line 27, parameter shift\)", text)


def test_an_array_result_shapes_its_seed_first():
    text = s2s_ad.explain(tied_weights.sigmoid)
    rows = [re.split(r"\s{2,}", line) for line in section(text, "reverse sweep")]
    assert rows[:3] == [
        ["dout = 1.0", "seed: ∂out/∂out = 1, out is the result"],
        ["dout = dout * np.ones_like(out)", "the seed takes the result's shape"],
        ["dt3 = dout * (out / t3)",  # the -1 of np.exp(-x)'s argument takes the sign
         "← out = 1 / t3, ∂out/∂t3: -out / t3 (negated: a later ∂ = -1 takes the sign)",
         "line 12"]]
    dot = s2s_ad.graph_dot(tied_weights.sigmoid, backward=True)
    assert "the seed takes the result's shape" in dot


def test_inactive_parameter_has_a_zero_gradient():
    def f(x, n):
        return x * 2.0 + n // 2

    text = s2s_ad.explain(f)
    assert text.rstrip().endswith("gradient: ∂out/∂x = dx, ∂out/∂n = 0.0")


def test_cli_explain(capsys):
    assert main(["explain", SEED_FILE, "--wrt", "x"]) == 0
    out = capsys.readouterr().out
    assert out == s2s_ad.explain(seed, wrt=("x",))
    assert "dx += db * x" in out and "da" not in out


def test_cli_explain_bad_wrt(capsys):
    assert main(["explain", SEED_FILE, "--wrt", "z"]) == 2
    assert "no parameter 'z'" in capsys.readouterr().err


# -- loops and branches -------------------------------------------------------------

def rows_of(text: str, title: str) -> list[list[str]]:
    return [re.split(r"\s{2,}", line) for line in section(text, title)]


def test_a_loop_is_explained_with_its_reverse_header_pops_and_carried_adjoint():
    text = s2s_ad.explain(graph_src.power, wrt="x")
    assert rows_of(text, "reverse sweep") == [
        ["ds = 1.0", "seed: ∂s/∂s = 1, s is the result"],
        ["dx = 0.0", "starts at 0: the reverse of the loop at line 51 adds to it"],
        ["for i in reversed(range(n)):", "reverse of `for i in range(n)` (line 51): the same "
         "iterations, last first; each reads the tape slots its forward iteration wrote"],
        ["s = s_tape[i]", "s as this iteration computed it: read from s_tape"],
        ["dx += ds * s", "← s_1 = s * x, ∂s_1/∂x = s", "line 52"],
        ["ds = ds * x", "← s_1 = s * x, ∂s_1/∂s = x", "line 52"],
    ]
    # the sweep's lines are indented as the code nests them
    assert "\n    s = s_tape[i]" in text and "\n  for i in reversed(range(n)):" in text
    adjoints = {r[0]: r[1:] for r in rows_of(text, "adjoints (each sums one contribution per "
                                                    "use of its value)")}
    assert adjoints["ds"] == ["from seed; from s_1 = s * x (line 52)",
                              "carried through line 51: each reverse iteration reads it and "
                              "sets it for the iteration before"]
    assert adjoints["dx"] == ["s_1 = s * x (line 52)",
                              "kept across the iterations of line 51: each adds to it"]
    assert "each iteration pushes s onto the tape" in section(text, "forward pass")[1]


def test_a_branch_is_explained_with_the_recorded_decision():
    text = s2s_ad.explain(graph_src.clipped)
    rows = rows_of(text, "reverse sweep")
    assert ["if t1:", "the decision the forward pass took at line 64 (if x > y), kept in t1"] \
        in rows
    assert ["else:"] in rows
    assert ["dy += dz_2 * y", "← t2 = y * y, ∂t2/∂y = y (right operand)", "line 67"] in rows
    adjoints = {r[0]: r[1:] for r in rows_of(text, "adjoints (each sums one contribution per "
                                                    "use of its value)")}
    assert adjoints["dx"] == ["sums 3 uses: out = z_2 * x (line 68); z = x * y (line 65); "
                              "z_1 = x + t2 (line 67)"]
    assert text.rstrip().endswith("gradient: ∂out/∂x = dx, ∂out/∂y = dy")


def test_a_branch_inside_a_loop_recomputes_its_decision_and_carries_adjoints():
    text = s2s_ad.explain(graph_src.damped)
    rows = rows_of(text, "reverse sweep")
    assert ["t1 = v > 1.0", "t1 = v > 1.0 recomputed (cheaper than taping it)", "line 74"] in rows
    assert ["dv = dv_1", "adjoints carried to the previous iteration (the loop at line 73)"] in rows
    assert ["dx += dv", "after the loop at line 73: v started as x"] in rows
    assert "    if t1:" in text  # inside the reverse loop
    assert re.search(r"\n  dk +v_1 = v \* k \(line 75\) +kept across the iterations of line 73",
                     text)


def test_an_early_exit_reverses_only_the_iterations_run():
    text = s2s_ad.explain(graph_src.early_exit)
    (head,) = [r for r in rows_of(text, "reverse sweep") if r[0].startswith("for ")]
    assert head[0] == "for _ in range(n)[:n_i]:"
    assert "up to where it stopped, counted in n_i" in head[1]


def test_a_helper_returning_a_tuple_inside_a_loop():
    text = s2s_ad.explain(graph_src.tuple_in_loop)
    rows = rows_of(text, "reverse sweep")
    assert ["split_1_tape = split_1_tapes[i]",
            "split_1_tape as this iteration computed it: read from split_1_tapes"] in rows
    assert ["dx_1, dt1 = split_bwd(split_1_tape, (dp, dq))",
            "← split_1 = split(x, t1), (dp, dq) · ∂split/∂(x, y), by split's backward pass",
            "line 93"] in rows
    assert ["dx = dx + dx_1", "← split_1 = split(x, t1), another use of x (parameter x)",
            "line 93"] in rows


def test_a_numpy_loop_is_explained():
    text = s2s_ad.explain(graph_src.array_loop)
    rows = rows_of(text, "reverse sweep")
    assert ["dW = np.zeros_like(W)", "starts at 0: the reverse of the loop at line 100 adds to it"
            ] in rows
    assert ["dt1 = dt2 * (1.0 - t2 * t2)", "← t2 = np.tanh(t1), ∂t2/∂t1 = 1.0 - t2 * t2",
            "line 101"] in rows
    # t3 = 0.5 * h is read for its shape only: as h, which has it, not recomputed
    assert ["dt3 = unbroadcast(dx, h)", "← h_1 = t2 + t3, ∂h_1/∂t3 = 1", "line 101"] in rows
    assert not any(r[0].startswith("t3 = ") for r in rows), rows
    assert re.search(r"\n  dW +t1 = W @ h \(line 101\) +kept across the iterations of line 100",
                     text)


def _joined(lines: list[str]) -> list[str]:
    """Lines the printer wrapped, joined back (a continuation is indented deeper
    and follows a line that does not end a header)."""
    out: list[str] = []
    for line in lines:
        depth = len(line) - len(line.lstrip())
        if out and depth > out[-1][0] and not out[-1][1].endswith(":"):
            out[-1] = (out[-1][0], out[-1][1] + line.strip())
        else:
            out.append((depth, line.strip()))
    return out


@pytest.mark.parametrize("fn, lengths", [
    (graph_src.power, None), (graph_src.horner, {"cs": 3}), (graph_src.clipped, None),
    (graph_src.damped, None), (graph_src.early_exit, None), (graph_src.tuple_in_loop, None),
    (graph_src.array_loop, None), (cf_programs.nested_loops, None),
    (cf_programs.two_carried_swap, None), (cf_programs.branch_nested, None),
    (cf_programs.newton_sqrt, None), (calls_loops_src.call_in_while, None),
])
def test_explained_loop_lines_are_the_generated_reverse_sweep(fn, lengths):
    """Every statement of the generated sweep, loop and branch heads included,
    nested as the code nests them, in order, and nothing else (before the
    compact rewrites of s2s_ad/emit/fuse.py)."""
    with fuse.disabled():
        generated = s2s_ad.gradient_source(fn, None, lengths=lengths)
    body = generated.split("# reverse sweep\n", 1)[1].split("\n    return ", 1)[0]
    code = _joined([line.split("  #")[0].rstrip()[4:] for line in body.splitlines()
                    if line.strip()])
    text = s2s_ad.explain(fn, lengths=lengths)
    explained = [(len(line) - len(line.lstrip()), re.split(r"\s{2,}", line.strip())[0])
                 for line in text.splitlines()[text.splitlines().index("reverse sweep") + 1:]
                 if line.strip()]
    explained = explained[:next(i for i, (_, t) in enumerate(explained)
                                if t.startswith("adjoints ("))]
    if re.fullmatch(r"\w+ = 1\.0", explained[0][1]):
        explained = explained[1:]  # the seed: the gradient's keyword argument
    explained = [(d - 2, t) for d, t in explained]
    assert [(d // 2, t.replace(" ", "")) for d, t in explained] == \
        [(d // 4, t.replace(" ", "")) for d, t in code]


@pytest.mark.parametrize("fn", [graph_src.power, graph_src.clipped, graph_src.damped])
def test_stated_local_derivatives_in_loops_match_sympy(fn):
    _check_claims(s2s_ad.explain(fn), 2)
