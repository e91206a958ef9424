"""The docs stay true: pages generated from code are equal to the code."""

import os

from s2s_ad.rules import markdown_table

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_rules_page_lists_the_table():
    with open(os.path.join(ROOT, "docs", "rules.md"), encoding="utf-8") as f:
        page = f.read()
    assert markdown_table() in page, "docs/rules.md is out of date: regenerate its table with " \
        "s2s_ad.rules.markdown_table()"


def test_readme_starts_with_the_two_setup_commands():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    commands = [line for line in lines[:6] if line.startswith("python3 -m venv")]
    assert len(commands) == 2
    assert "s2s-ad grad" in commands[0] and "pytest" in commands[1]
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as f:
        ci = f.read()
    assert "pip install --quiet '.[test]'" in ci and "python -m pytest" in ci


def test_readme_python_example_is_true(tmp_path):
    """The README's Python API block runs as written, and every line of the
    form ``expr  # literal ...`` evaluates to that literal (checked here
    against the derivative of f(a, x) = a·x² worked by hand: ∂/∂a = x²,
    ∂/∂x = 2ax)."""
    import ast
    import re
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    block = text.split("## Python API", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    import runpy
    example = tmp_path / "readme_example.py"  # a file, so that s2s-ad can read f's source
    example.write_text(block, encoding="utf-8")
    namespace = runpy.run_path(str(example))
    f = namespace["f"]
    a, x = 3.0, 2.0
    assert (f(a, x), x * x, 2 * a * x) == (12.0, 4.0, 12.0)  # the hand-worked values
    claims = 0
    for line in block.splitlines():
        code, sep, comment = line.partition("#")
        m = re.match(r"\s*(\([^—]*\)|-?[0-9.]+)", comment)
        if not sep or not m or "=" in code:
            continue
        assert eval(code, namespace) == ast.literal_eval(m.group(1)), line
        claims += 1
    assert claims >= 2


def test_numpy_page_names_every_numpy_rule():
    """docs/numpy.md's "What is supported" table names each NumPy function
    of the rule table (``np.exp log ...`` lists share one ``np.``)."""
    import re
    from s2s_ad.rules.numpy import NUMPY_RULES
    from s2s_ad.rules.numpy_more import NUMPY_MORE_RULES
    with open(os.path.join(ROOT, "docs", "numpy.md"), encoding="utf-8") as f:
        page = f.read()
    table = page.split("## What is supported", 1)[1].split("\n## ", 1)[0]
    named = set()
    for code in re.findall(r"`([^`]*)`", table):
        words = code.split()
        if words and words[0].startswith("np."):
            named.add(re.split(r"[(/\s]", words[0])[0])
            named.update(f"np.{w}" for w in words[1:] if re.fullmatch(r"[a-z_0-9]+", w))
        for m in re.findall(r"np\.[a-z_.0-9]*[a-z_0-9]", code):
            named.add(m)
    named.update(re.findall(r"scipy\.(?:special|linalg)\.[a-z_0-9]+", table))
    missing = {r.prim for r in NUMPY_RULES + NUMPY_MORE_RULES
               if r.prim.startswith(("np.", "scipy."))} - named
    assert not missing, f"docs/numpy.md does not list {sorted(missing)}"
