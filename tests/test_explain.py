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
from seed_ggml import f as seed

import calls_src
import gaussian_nll
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
    assert rows["x"] == ["dx = db * x + db * x", "sums 2 uses: b = x * x (line 9, left operand); "
                                                 "b = x * x (line 9, right operand)"]
    assert rows["a"] == ["da = dy * b", "from its one use: y = a * b (line 10)"]
    assert rows["y"] == ["dy = 1.0", "seed: y is the result"]
    assert text.rstrip().endswith("gradient: ∂y/∂a = da, ∂y/∂x = dx")


def test_docs_show_the_real_explanations():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "docs", "graphs.md"), encoding="utf-8") as f:
        page = f.read()
    assert s2s_ad.explain(seed, wrt=("a", "x")) in page, "regenerate docs/graphs.md's seed block"
    nll = s2s_ad.explain(gaussian_nll.nll, wrt=("mu", "log_sigma"))
    twice = s2s_ad.explain(calls_src.twice_sq)
    tied = s2s_ad.explain(tied_weights.tied)
    real = s2s_ad.explain(seed, wrt=("a", "x")) + nll + twice + tied
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


def temporaries(a, b, c):
    t = math.sin(a * b) + c * 2.0
    return t * t + a / c


def shared_temp(a, b, c):
    y = a * b + c
    return y


def split(x, y):
    return x * y, x + y


def twice_item(x, y):
    t = split(x, y)
    a = t[0]
    b = t[0] * 2.0
    return a * b + t[1]


def returns_tuple(x, y):
    loss = (x - y) ** 2
    reg = 0.1 * x * x
    return loss + reg, loss, reg


@pytest.mark.parametrize("fn, output", [
    (seed, None), (temporaries, None), (shared_temp, None), (calls_src.nested, None),
    (calls_src.same_arg, None), (calls_src.imported, None), (twice_item, None),
    (structures_src.use_split, None), (returns_tuple, 0), (returns_tuple, 2),
])
def test_explained_lines_are_the_generated_reverse_sweep(fn, output):
    """Every statement of the generated reverse sweep, in order, and nothing else."""
    generated = s2s_ad.gradient_source(fn, None, output=output)
    body = generated.split("# reverse sweep\n", 1)[1].split("\n    return ", 1)[0]
    code = [line.split("#")[0].strip() for line in body.splitlines() if line.strip()]
    explained = [re.split(r"\s{2,}", line)[0]
                 for line in section(s2s_ad.explain(fn, output=output), "reverse sweep")]
    assert [line for line in explained
            if not line.startswith("(no code") and " = 1.0" not in line] == code


def test_a_tuple_item_read_twice_sums_its_reads():
    text = s2s_ad.explain(twice_item)
    assert re.search(r"\(no code: t\[0\]'s adjoint is dt_0\) +← t_0 = t\[0\], ∂t_0/∂t\[0\] = 1", text)
    assert re.search(r"dt_0_1 = dt_0 \+ da +← a = t\[0\], ∂a/∂t\[0\] = 1, item 0 read again", text)
    assert re.search(r"dx, dy = split_bwd\(t_tape, \(dt_0_1, dt_1\)\) +← t = split\(x, y\)", text)
    assert re.search(r"  t\[0\] +dt_0_1 = dt_0 \+ da +sums 2 uses: t_0 = t\[0\] \(line \d+\); "
                     r"a = t\[0\]", text)


@pytest.mark.parametrize("fn", [seed, temporaries, shared_temp])
def test_stated_local_derivatives_match_sympy(fn):
    """`← out = EXPR, ∂out/∂v = P` claims dEXPR/dv = P; sympy checks each claim.
    Where an op reads v twice (left and right operand), the claims are per
    operand and their sum is the derivative."""
    text = s2s_ad.explain(fn)
    claims = re.findall(r"← (\w+) = (.+?), ∂\1/∂(\w+) = (.+?)(?: \((?:left|right) operand\))?  ",
                        text + "  ")
    assert len(claims) >= 4
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


def test_shared_adjoint_is_said_to_have_no_code():
    text = s2s_ad.explain(shared_temp)
    assert "(no code: t1's adjoint is dy)  ← y = t1 + c, ∂y/∂t1 = 1" in text
    assert "t1  dy (shared, no code)  from its one use: y = t1 + c (line" in text


def test_sums_parenthesise_conditional_contributions():
    def with_max(a, b):
        return max(a, b) * a

    text = s2s_ad.explain(with_max)
    assert "da = dout * t1 + (dt1 if a >= b else 0.0)  sums 2 uses: out = t1 * a (line" in text
    assert re.search(r"  b  +db = 0\.0 if a >= b else dt1  +from its one use: t1 = max\(a, b\)",
                     text)


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
    assert ("dx = cube_plus_bwd(…)[0] + cube_plus_bwd(…)[1] + cube_plus_bwd(…)[2]  sums 3 uses"
            in text)


def test_an_array_result_shapes_its_seed_first():
    text = s2s_ad.explain(tied_weights.sigmoid)
    rows = [re.split(r"\s{2,}", line) for line in section(text, "reverse sweep")]
    assert rows[:3] == [
        ["dout = 1.0", "seed: ∂out/∂out = 1, out is the result"],
        ["dout = dout * np.ones_like(out)", "the seed takes the result's shape"],
        ["dt3 = dout * (-out / t3)", "← out = 1 / t3, ∂out/∂t3 = -out / t3", "line 12"]]
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
