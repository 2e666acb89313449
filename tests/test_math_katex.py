"""The KaTeX-documented function set (tests/data/katex_functions.tsv, made from KaTeX's
docs/supported.md by tests/data/make_katex_functions.py) converts to valid MathML: at least 95 %."""
from __future__ import annotations

import pytest

from katex_coverage import converts, coverage, entries

GOAL = 0.95


def test_the_list_is_katexs_whole_set() -> None:
    names = {name for name, _ in entries()}
    assert len(names) > 900
    for name in (r"\frac", r"\begin{align}", r"\begin{gather}", r"\begin{alignat}", r"\begin{dcases}",
                 r"\begin{rcases}", r"\begin{subarray}", r"\tag", r"\newcommand",
                 r"\Alpha", r"\Bra", r"\Braket", r"\arg", r"\color", r"\operatorname"):
        assert name in names, name


def test_at_least_95_percent_of_katexs_set_converts() -> None:
    done, total, missing = coverage()
    assert done / total >= GOAL, f"{done}/{total} = {done / total:.1%}; not converting: {' '.join(missing)}"


@pytest.mark.parametrize("name", [
    r"\arg", r"\Alpha", r"\Omicron", r"\Bra", r"\Ket", r"\Braket", r"\Set", r"\gets", r"\impliedby", r"\lrArr",
    r"\begin{gather}", r"\begin{alignat}", r"\begin{dcases}", r"\begin{rcases}", r"\begin{subarray}",
    r"\begin{smallmatrix}", r"\begin{split}", r"\tag", r"\newcommand", r"\def", r"\color", r"\textcolor",
    r"\'", r"\~", r'\"', r"\H", r"\v", r"\substack", r"\widetilde", r"\kern", r"\hspace",
])
def test_commands_the_old_converter_lacked_convert(name: str) -> None:
    example = dict(entries())[name]
    assert converts(name, example), (name, example)
