"""The command line, run as a user runs it: in a subprocess."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = os.path.join(ROOT, "examples", "seed_ggml.py")


def run(*args, cwd=ROOT):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "s2s_ad", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_grad_prints_the_module():
    r = run("grad", "examples/seed_ggml.py:f", "--wrt", "a,x")
    assert r.returncode == 0, r.stderr
    assert "def grad_f(a, x, *, dy=1.0):" in r.stdout
    assert "dx = 2.0 * (db * x)" in r.stdout


@pytest.mark.parametrize("target", ["examples/seed_ggml.py:f", "examples/seed_ggml.py.f",
                                    "examples.seed_ggml.f"])
def test_target_forms(target):
    r = run("ir", target)
    assert r.returncode == 0, r.stderr
    assert "b = mul x x" in r.stdout


def test_written_module_imports_and_is_right(tmp_path):
    out = tmp_path / "grad_f.py"
    r = run("grad", "examples/seed_ggml.py:f", "-o", str(out))
    assert r.returncode == 0, r.stderr
    code = ("import grad_f; da, dx = grad_f.grad_f(3.0, 2.0); "
            "assert abs(da - 4.0) < 1e-12 and abs(dx - 12.0) < 1e-12, (da, dx); "
            "import sys; assert 's2s_ad' not in sys.modules; print('ok')")
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                       text=True, env={"PATH": os.environ.get("PATH", "")})
    assert p.stdout.strip() == "ok", p.stderr


def test_check_proves_and_exits_zero():
    r = run("check", "examples/seed_ggml.py:f")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("PROVED")
    assert "proved" in r.stdout


def test_check_exits_one_on_a_mismatch(tmp_path):
    # A rule made wrong on purpose (through a user module that patches the
    # table before the check runs) must be caught by the sympy comparison.
    (tmp_path / "wrong.py").write_text(
        "import math\nfrom s2s_ad.rules import RULES, Rule\n"
        "RULES['math.sin'] = Rule('math.sin', 'math.sin(x)', ('math.sin(x)',))\n\n"
        "def f(x):\n    return math.sin(x) * x\n")
    r = run("check", str(tmp_path / "wrong.py") + ":f")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "MISMATCH" in r.stdout


def test_source_error_is_located_without_traceback(tmp_path):
    (tmp_path / "bad.py").write_text("def f(x):\n    return x << 1\n")
    r = run("grad", str(tmp_path / "bad.py") + ":f")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    first, line, caret = r.stderr.splitlines()[:3]
    assert first.endswith("bad.py:2:12: error: the operator `<<` is not supported on scalars")
    assert line.strip() == "return x << 1" and caret.strip() == "^"


@pytest.mark.parametrize("target, message", [
    ("examples/nope.py:f", "no such file"),
    ("examples/seed_ggml.py:nope", "has no function 'nope'"),
    ("no_such_module.f", "cannot import module"),
])
def test_bad_targets(target, message):
    r = run("grad", target)
    assert r.returncode == 2
    assert message in r.stderr and "Traceback" not in r.stderr


def test_failed_output_leaves_no_file(tmp_path):
    (tmp_path / "bad.py").write_text("def f(x):\n    return x << 1\n")
    out = tmp_path / "grad_bad.py"
    r = run("grad", str(tmp_path / "bad.py") + ":f", "-o", str(out))
    assert r.returncode == 2
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.py"]


def test_output_over_the_source_is_refused(tmp_path):
    src = tmp_path / "mine.py"
    text = "def f(x):\n    return x * x\n"
    src.write_text(text)
    r = run("grad", str(src) + ":f", "-o", str(src))
    assert r.returncode == 2
    assert src.read_text() == text


def test_wrt_by_index_and_unknown_name():
    r = run("grad", "examples/seed_ggml.py:f", "--wrt", "1")
    assert r.returncode == 0 and "return dx" in r.stdout
    r = run("grad", "examples/seed_ggml.py:f", "--wrt", "q")
    assert r.returncode == 2 and "no parameter 'q'" in r.stderr
