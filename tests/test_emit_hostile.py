"""User text in the generated module: hostile file names and source lines
must give a module that compiles and holds exactly the expected statements
(a docstring and the gradient function), and importing it runs nothing else."""

import ast
import math

import pytest

import s2s_ad
from oracle import close, fd_gradient
from s2s_ad import cli
from s2s_ad.frontend import source

PAYLOAD = 'e""";open("{marker}", "w").close();""".py'
NAMES = [PAYLOAD, "a\\N.py", "a\\N{{BULLET}}b.py", "line\nbreak.py", "tab\there\r.py",
         "q'\"x\\.py", "trailing\\.py", "end\".py"]
SOURCE = '''def f(x, y):
    # a comment with """ and \\N{{x}} and \\x00 in it """; __import__("os")
    z = x * y  # """ {marker} \\N
    for i in range(3):  # loop """ \\
        z = z * math.sin(x)
    return z
'''


def _write(tmp_path, name, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the payload writes ./pwned
    marker = tmp_path / "pwned"
    path = tmp_path / name.format(marker="pwned")
    path.write_text("import math\n\n\n" + SOURCE.format(marker="pwned"))
    return path, marker


def _assert_only_the_gradient(text: str, names=("grad_f",)):
    tree = ast.parse(text)
    compile(tree, "<generated>", "exec")
    body = tree.body
    assert isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    assert isinstance(body[0].value.value, str)
    rest = [s for s in body[1:] if not isinstance(s, ast.Import)]
    assert [type(s) for s in rest] == [ast.FunctionDef] * len(names)
    assert [s.name for s in rest] == list(names)
    # no statement anywhere outside the functions calls or evaluates anything
    for s in body[1:]:
        if isinstance(s, ast.Import):
            assert [a.name for a in s.names] == ["math"]
    return tree


@pytest.mark.parametrize("name", NAMES, ids=range(len(NAMES)))
def test_hostile_file_name_through_grad(tmp_path, name, monkeypatch):
    path, marker = _write(tmp_path, name, monkeypatch)
    fn = source.load_target(f"{path}:f")
    text = s2s_ad.gradient_source(fn)
    tree = _assert_only_the_gradient(text)
    assert f"{path.name}:4," in tree.body[0].value.value  # the docstring names the file as it is
    df = s2s_ad.grad(fn, wrt=None)
    assert not marker.exists()
    got = df(0.7, 1.3)
    want = fd_gradient(lambda x, y: x * y * math.sin(x) ** 3, [0.7, 1.3], [0, 1])
    assert all(close(g, w) for g, w in zip(got, want))


@pytest.mark.parametrize("name", NAMES, ids=range(len(NAMES)))
def test_hostile_file_name_through_cli(tmp_path, name, monkeypatch, capsys):
    path, marker = _write(tmp_path, name, monkeypatch)
    out = tmp_path / "out_grad.py"
    assert cli.main(["grad", f"{path}:f", "-o", str(out)]) == 0
    text = out.read_text()
    _assert_only_the_gradient(text)
    namespace = {}
    exec(compile(text, str(out), "exec"), namespace)
    assert not marker.exists()
    assert "grad_f" in namespace


def test_hostile_names_in_comments_stay_comments():
    from s2s_ad.emit.module import docstring_text, one_line
    for text in ['a\nb = 1', 'x\r__import__("os")', "\x0b\x0c\u2028\u2029\x85", '"""', "\\N"]:
        line = one_line(text)
        assert "\n" not in line and "\r" not in line
        assert ast.parse(f"# {line}\n").body == []
        doc = docstring_text(text, keep_lines=True)
        tree = ast.parse(f'"""{doc}"""\n')
        assert len(tree.body) == 1 and isinstance(tree.body[0].value, ast.Constant)
        # line breaks stay line breaks; everything else reads back as written
        assert tree.body[0].value.value.replace("\n", "") == text.replace("\n", "")
