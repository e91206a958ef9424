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
