"""The generated module: golden text for review, imports, names."""

import ast
import importlib

import pytest

import corpus_scalar
import s2s_ad

EXAMPLES = [("seed_ggml", "f", ("a", "x")), ("black_scholes", "call_price", ("s", "sigma")),
            ("gaussian_nll", "nll", ("mu", "log_sigma")), ("rosenbrock", "rosenbrock4", None),
            ("pendulum", "energy_after_step", ("theta", "omega", "damping"))]


@pytest.mark.parametrize("module, name, wrt", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_examples_golden(golden, module, name, wrt):
    fn = getattr(importlib.import_module(module), name)
    golden(f"{module}.grad.py", s2s_ad.gradient_source(fn, wrt))


def test_seed_reads_like_the_design():
    text = s2s_ad.gradient_source(importlib.import_module("seed_ggml").f, ("a", "x"))
    body = [line.split("#")[0].strip() for line in text.splitlines() if line.startswith("    ")]
    # x's two equal contributions (one per operand of x * x) doubled: exact
    assert body == ["", "b = x * x", "", "da = dy * b", "db = dy * a", "dx = 2.0 * (db * x)",
                    "return da, dx"]
    assert "def grad_f(a, x, *, dy=1.0):" in text
    assert "examples/seed_ggml.py:8" in text and s2s_ad.__version__ in text


def test_imports_only_what_the_code_needs():
    for f in corpus_scalar.CASES:
        tree = ast.parse(s2s_ad.gradient_source(f))
        imported = {a.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                    for a in node.names}
        assert imported <= {"math"}, f.__name__
        uses_math = any(isinstance(n, ast.Name) and n.id == "math" for n in ast.walk(tree))
        assert ("math" in imported) == uses_math, f.__name__


def test_generated_source_is_deterministic():
    f = corpus_scalar.black_scholes_call
    assert s2s_ad.gradient_source(f) == s2s_ad.gradient_source(f)


def test_every_reverse_statement_is_commented_with_line_and_derivative():
    text = s2s_ad.gradient_source(corpus_scalar.gaussian_nll)
    sweep = text.split("# reverse sweep")[1].splitlines()[1:-1]
    assert sweep
    for line in sweep:
        code, _, comment = line.partition("#")
        assert comment.strip().startswith("line "), line
        assert "∂" in comment and "=" in comment, line


def test_user_names_that_look_generated(tmp_path, monkeypatch):
    from oracle import close, fd_gradient
    src = tmp_path / "adversarial.py"
    src.write_text(
        "import math\n\n"
        "def grad_f(dx, dy, t1, math_1=0.5):\n"
        "    dout = dx * dy\n"
        "    t2 = math.sin(dout) + t1\n"
        "    out = t2 * dx\n"
        "    ddx = out + math_1 * dout\n"
        "    return ddx * ddx\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("adversarial")
    df = s2s_ad.grad(mod.grad_f, wrt=None)
    args = [0.3, 0.8, -0.4, 0.5]
    got = df(*args)
    want = fd_gradient(mod.grad_f, args, [0, 1, 2, 3])
    assert all(close(g, w) for g, w in zip(got, want)), (got, want)


def test_a_local_called_math_does_not_shadow_the_module(tmp_path, monkeypatch):
    from oracle import close, central_difference
    src = tmp_path / "shadow.py"
    src.write_text("import math\n\ndef f(x):\n    y = math.sin(x)\n    math_ = y\n    return math.exp(y) * math_\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("shadow")
    assert close(s2s_ad.grad(mod.f)(0.7), central_difference(mod.f, [0.7], 0))
