"""The command line on bad input: a one-line message on stderr (a located
SourceError keeps its file:line:col, line and caret), exit code 2, and no
partial or clobbered output file. Run as a user would, in a subprocess."""

import os
import subprocess
import sys

import pytest

from tests.soak import soak

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TARGET = """import math


class C:
    pass


sin = math.sin


def f(x):
    return math.sin(x) * x


def refused(x):
    try:
        y = x
    finally:
        pass
    return y
"""


def run(args, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "s2s_ad", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "tgt.py").write_text(TARGET)
    (tmp_path / "broken.py").write_text("def f(x):\n    return x +* 2\n")
    (tmp_path / "raises.py").write_text("raise RuntimeError('no import')\n\n\ndef f(x):\n"
                                        "    return x\n")
    return tmp_path


def one_line_error(proc, *needles):
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("s2s-ad: error: "), lines[0]
    assert "Traceback" not in proc.stderr
    for n in needles:
        assert n in lines[0], lines[0]


@pytest.mark.parametrize("target, needles", [
    ("nosuchmodule.f", ["nosuchmodule", "cannot import"]),
    ("nosuch.py:f", ["no such file", "nosuch.py"]),
    ("tgt.py:g", ["no function 'g'"]),
    ("tgt.py:C", ["'C' is a type", "not a Python function"]),
    ("tgt.py:sin", ["'sin' is a builtin", "not a Python function"]),
    ("tgt.py:math", ["'math' is a module"]),
    ("raises.py:f", ["importing it raised RuntimeError"]),
    ("justaname", ["expected file.py:function"]),
])
def test_bad_target(folder, target, needles):
    one_line_error(run(["grad", target], folder), *needles)


@pytest.mark.parametrize("command", ["check", "ir", "explain"])
def test_bad_target_in_other_commands(folder, command):
    one_line_error(run([command, "tgt.py:C"], folder), "'C' is a type")


def test_syntax_error_in_target_is_located(folder):
    proc = run(["grad", "broken.py:f"], folder)
    assert proc.returncode == 2 and proc.stdout == ""
    head, shown, caret = proc.stderr.splitlines()
    assert head.startswith("broken.py:2:") and "cannot parse" in head
    assert shown.strip() == "return x +* 2"
    assert shown[caret.index("^")] == "*"


def test_refusal_keeps_location_and_caret(folder):
    proc = run(["grad", "tgt.py:refused"], folder)
    assert proc.returncode == 2 and proc.stdout == ""
    head, shown, caret = proc.stderr.splitlines()
    assert head.startswith("tgt.py:16:5: error: `try`")
    assert shown[caret.index("^"):].startswith("try")


def test_unknown_wrt(folder):
    one_line_error(run(["grad", "tgt.py:f", "--wrt", "q"], folder), "no parameter 'q'")


def test_missing_output_folder(folder):
    proc = run(["grad", "tgt.py:f", "-o", "nowhere/out.py"], folder)
    one_line_error(proc, "cannot write nowhere/out.py", "No such file or directory")
    assert not (folder / "nowhere").exists()


def test_output_is_a_directory(folder):
    (folder / "outdir").mkdir()
    one_line_error(run(["grad", "tgt.py:f", "-o", "outdir"], folder), "cannot write outdir")
    assert os.listdir(folder / "outdir") == []


def test_output_under_a_file(folder):
    one_line_error(run(["grad", "tgt.py:f", "-o", "tgt.py/out.py"], folder), "Not a directory")
    assert (folder / "tgt.py").read_text() == TARGET


# ("./tgt.py", "./helpers.py": the same path spelled another way, with --soak; the symbolic
# and the hard link stay in the default run)
@pytest.mark.parametrize("output", ["tgt.py", soak("./tgt.py"), "link.py", "hard.py"])
def test_output_is_the_source_file(folder, output):
    os.symlink(folder / "tgt.py", folder / "link.py")
    os.link(folder / "tgt.py", folder / "hard.py")
    before = sorted(os.listdir(folder))
    one_line_error(run(["grad", "tgt.py:f", "-o", output], folder), "source file", "refusing")
    assert (folder / "tgt.py").read_text() == TARGET
    assert sorted(os.listdir(folder)) == before


HELPERS = "def sq(u):\n    return u * u\n"
MAIN = "from helpers import sq\n\n\ndef f(x):\n    return sq(x) * x\n"


@pytest.mark.parametrize("output", ["helpers.py", soak("./helpers.py"), "main.py"])
def test_output_is_a_called_helpers_source_file(folder, output):
    (folder / "helpers.py").write_text(HELPERS)
    (folder / "main.py").write_text(MAIN)
    proc = run(["grad", "main.py:f", "-o", output], folder)
    one_line_error(proc, f"-o {output} is the source", "refusing")
    assert (folder / "helpers.py").read_text() == HELPERS
    assert (folder / "main.py").read_text() == MAIN
    assert not [n for n in os.listdir(folder) if n.startswith(".s2s-ad-")]
    proc = run(["grad", "main.py:f", "-o", "out.py"], folder)  # another file is fine
    assert proc.returncode == 0, proc.stderr
    # sq is inlined: its lines are in out.py, named after it and its file
    assert "sq in helpers.py: u * u" in (folder / "out.py").read_text()


def test_output_is_read_only(folder):
    out = folder / "out.py"
    out.write_text("# keep me\n")
    out.chmod(0o444)
    one_line_error(run(["grad", "tgt.py:f", "-o", "out.py"], folder), "read-only", "refusing")
    assert out.read_text() == "# keep me\n"
    assert oct(out.stat().st_mode & 0o777) == oct(0o444)


def test_failed_generation_leaves_existing_output_alone(folder):
    (folder / "out.py").write_text("# keep me\n")
    proc = run(["grad", "tgt.py:refused", "-o", "out.py"], folder)
    assert proc.returncode == 2
    assert (folder / "out.py").read_text() == "# keep me\n"
    assert not [n for n in os.listdir(folder) if n.startswith(".s2s-ad-")]


def test_written_file_is_complete_importable_and_not_private(folder):
    proc = run(["grad", "tgt.py:f", "-o", "out.py"], folder)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    text = (folder / "out.py").read_text()
    assert text == run(["grad", "tgt.py:f"], folder).stdout
    namespace = {}
    exec(compile(text, "out.py", "exec"), namespace)
    import math
    x = 0.3
    assert abs(namespace["grad_f"](x) - (math.cos(x) * x + math.sin(x))) < 1e-12
    umask = os.umask(0)
    os.umask(umask)
    assert (folder / "out.py").stat().st_mode & 0o777 == 0o666 & ~umask
    assert not [n for n in os.listdir(folder) if n.startswith(".s2s-ad-")]


def test_source_error_without_location_is_one_line(folder):
    # A function without readable source (exec'd): located nowhere, one line.
    (folder / "nosrc.py").write_text("exec('def f(x):\\n    return x')\n")
    one_line_error(run(["grad", "nosrc.py:f"], folder), "cannot read the source of f")


LOOP = """import math


def f(x, n):
    s = x
    for i in range(n):
        s = math.sin(s) + x
    return s
"""


def test_check_timeout_bounds_the_whole_run(folder):
    import time
    (folder / "loop.py").write_text(LOOP)
    started = time.monotonic()
    proc = run(["check", "loop.py:f", "--wrt", "x", "--args", "n=100000000", "--timeout", "2"],
               folder)
    elapsed = time.monotonic() - started
    one_line_error(proc, "more than its 2 s budget", "--timeout")
    assert elapsed < 12, elapsed  # 2 s of checking plus interpreter start-up on a busy machine


def test_check_of_a_deep_loop_falls_back_to_numbers_not_a_recursion_error(folder):
    # 3,000 steps of one symbolic expression nest deeper than sympy recurses:
    # the check says so and checks numerically instead of a traceback.
    (folder / "loop.py").write_text(LOOP)
    proc = run(["check", "loop.py:f", "--wrt", "x", "--args", "n=3000", "--timeout", "0"], folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr
    assert "nests its expressions deeper than sympy can recurse" in proc.stdout
    assert "not a proof" in proc.stdout and "AGREES" in proc.stdout.upper()


NUMPY_TARGET = """import numpy as np


def mm(W, x):
    return np.sum(W @ x)
"""

# (arguments, words the one-line message must contain: the bad part, the fix)
BAD_INVOCATIONS = [
    (["grad", "tgt.py"], ["tgt.py", "tgt.py:FN"]),
    (["check", "tgt.py"], ["tgt.py:FN"]),
    (["check", "mm.py:mm", "--shape", "W=3x4,x=5"], ["ValueError", "matmul", "--shape"]),
    (["check", "mm.py:mm", "--shape", "q=3"], ["no parameter 'q'", "parameters: W, x"]),
    (["check", "mm.py:mm"], ["--shape W=...,x=..."]),
    (["check", "tgt.py:f", "--args", "q=3"], ["--args q=", "no parameter 'q'"]),
    (["check", "tgt.py:f", "--at", "q=3"], ["--at q=", "no parameter 'q'"]),
    (["check", "tgt.py:f", "--points", "0"], ["points", "positive"]),
    (["check", "tgt.py:f", "--points", "-3"], ["points", "positive"]),  # --soak: as 0
    (["check", "tgt.py:f", "--timeout", "-1"], ["timeout", "0 or more"]),
    (["grad", "tgt.py:f", "--length", "x=0"], ["--length x", "positive"]),
    (["grad", "tgt.py:f", "--length", "x=-2"], ["--length x", "positive"]),  # --soak: as 0
    (["grad", "tgt.py:f", "--wrt", "q"], ["no parameter 'q'"]),  # --soak: test_unknown_wrt's
    (["grad", "tgt.py:nope"], ["no function 'nope'"]),  # --soak: as test_bad_target's tgt.py:g
]


SECOND_SPELLINGS = {("check", "tgt.py:f", "--points", "-3"),
                    ("grad", "tgt.py:f", "--length", "x=-2"),
                    ("grad", "tgt.py:f", "--wrt", "q"), ("grad", "tgt.py:nope")}
"""Run with ``--soak`` (each command line starts an interpreter, about 1 s):
another number refused by the same test and message as the case before it;
``grad tgt.py:f --wrt q``, the very command line of test_unknown_wrt; and
``grad tgt.py:nope``, test_bad_target's ``tgt.py:g`` with another name."""


@pytest.mark.parametrize("argv, needles", [
    (soak if tuple(a) in SECOND_SPELLINGS else pytest.param)(a, n, id=" ".join(a))
    for a, n in BAD_INVOCATIONS])
def test_bad_invocation_is_exit_code_2_and_one_line(folder, argv, needles):
    (folder / "mm.py").write_text(NUMPY_TARGET)
    one_line_error(run(argv, folder), *needles)
