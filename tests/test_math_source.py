"""Math is the TeX the author wrote, and numbered only when asked.

A docstring is read as written, raw or not (as the original site read it): the TeX of a non-raw
docstring keeps its `\\\\` row breaks, and its keys are the same as a raw docstring's. The
fidelity measure of benchmarks/math_fidelity.py counts rows with a TeX reading of its own; it is
tested here on formulas whose rows are known.
"""
from __future__ import annotations

import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from labml_site.read.prose import section_blocks
from labml_site.read.sections import parse_source
from labml_site.typeset.math import MATHML_NS, tex_to_mathml, typeset_page
from labml_site.typeset.page import analyse

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import math_fidelity  # noqa: E402

NS = f"{{{MATHML_NS}}}"

DOC = '''{prefix}"""
# Rotation

The transformation is,

\\begin{{align}}
R &=
\\begin{{pmatrix}}
\\cos m \\theta & - \\sin m \\theta \\\\
\\sin m \\theta & \\cos m \\theta
\\end{{pmatrix}} \\\\
&= \\{{1, 2\\}}
\\end{{align}}

where $x \\in \\\\{{1, 2\\\\}}$ and $a \\\\ b$ is not a table.
"""
'''


def _placeholders(text: str) -> list[str]:
    parsed = parse_source(text, "p.py")
    return [ph.text for s in parsed.sections for b in section_blocks(s) for ph in b.placeholders]


def _keys(text: str) -> list[str]:
    parsed = parse_source(text, "p.py")
    return [b.key for s in parsed.sections for b in section_blocks(s)]


@pytest.mark.parametrize("prefix", ["", "r", "u", "R"])
def test_a_docstring_gives_the_tex_as_written_raw_or_not(prefix: str) -> None:
    text = DOC.format(prefix=prefix)
    env, inline, _ = _placeholders(text)
    source_env = text[text.index("\\begin{align}"):text.index("\\end{align}") + len("\\end{align}")]
    assert env == source_env  # byte for byte, rows and all
    assert inline == "x \\in \\\\{1, 2\\\\}"


def test_keys_do_not_depend_on_the_docstring_prefix() -> None:
    assert _keys(DOC.format(prefix="")) == _keys(DOC.format(prefix="r"))


def test_the_rows_are_rows_and_the_annotation_is_the_source() -> None:
    text = DOC.format(prefix="")
    page = analyse("p.py", "p.html", text)
    math = [m for b in page.sections[0].blocks for m in b.placeholders if m.startswith("<math")]
    assert not [f for f in page.findings if f.level == "error"]
    align = ElementTree.fromstring(math[0])
    rows = [len(t.findall(NS + "mtr")) for t in align.iter(NS + "mtable")]
    assert rows == [2, 2]  # the align's two rows, the matrix's two
    assert align.find(f"{NS}semantics/{NS}annotation").text == _placeholders(text)[0]
    # a non-raw docstring's \\{…\\} outside environments is \{…\}: the braces are shown
    inline = ElementTree.fromstring(math[1])
    assert [mo.text for mo in inline.iter(NS + "mo")].count("{") == 1


def test_equations_are_numbered_only_when_asked() -> None:
    def numbers(markup: str) -> list[str]:
        return [e.text for e in ElementTree.fromstring(markup).iter(NS + "mtext") if (e.text or "").startswith("(")]

    plain = r"\begin{align} a &= b \\ c &= d \\ \end{align}"
    assert numbers(tex_to_mathml(plain, True)) == []
    for env in ("equation", "align", "gather", "multline", "alignat"):
        args = "{1}" if env == "alignat" else ""
        assert numbers(tex_to_mathml(rf"\begin{{{env}}}{args} a \end{{{env}}}", True)) == [], env
    # a trailing \\ draws no row, numbered or not
    assert numbers(tex_to_mathml(plain, True, numbers=True)) == ["(1)", "(2)"]
    assert tex_to_mathml(plain, True).count("<mtr") == 2
    assert tex_to_mathml(r"\begin{pmatrix} a \\ b \\ \end{pmatrix}", True).count("<mtr") == 2
    # \tag and \label ask; \eqref links to the labelled equation; others on the page stay plain
    page = typeset_page([(plain, True), (r"\begin{equation} e = m \label{e} \end{equation}", True),
                         (r"\eqref{e}", False), (r"x = y \tag{*}", True)])
    assert [numbers(m) for m in page] == [[], ["(1)"], [], ["(*)"]]
    assert '<a href="#eq-e">(1)</a>' in page[2]


def test_the_front_matter_opts_in_to_numbers() -> None:
    text = '"""\n---\nequation_numbers: true\n---\n# T\n\n\\begin{align}\na &= b \\\\\nc &= d\n\\end{align}\n"""\n'
    page = analyse("p.py", "p.html", text)
    markup = page.sections[0].blocks[-1].placeholders[0]
    assert "(1)" in markup and "(2)" in markup
    wrong = analyse("p.py", "p.html", text.replace("true", "sometimes"))
    assert "(1)" not in wrong.sections[0].blocks[-1].placeholders[0]
    assert [f.line for f in wrong.findings if "equation_numbers" in f.message] == [3]


# ------------------------------------------------------------------------------------------------
# The fidelity measure's own reading of TeX


@pytest.mark.parametrize("tex, rows", [
    (r"\begin{align} a \\ b \\ c \end{align}", [3]),
    (r"\begin{align} a \\ b \\ \end{align}", [2]),  # a trailing \\ is no row
    (r"\begin{align} \begin{pmatrix} 1 \\ 2 \end{pmatrix} \\ b \end{align}", [2, 2]),
    (r"\begin{array}{c|c} a & b \\ \hline \\ c & d \\ \end{array}", [3]),  # \hline \\ is an empty row
    (r"\sum_{\substack{i \\ j}} x", [2]),
    (r"\begin{cases} a & x \\ b & y \end{cases}", [2]),
    (r"a \\ b", []),  # outside a table: no rows
])
def test_the_measure_counts_rows_as_tex_has_them(tex: str, rows: list[int]) -> None:
    assert [len(e.rows) for e in math_fidelity.environments(tex)] == rows


def test_the_measure_finds_tex_that_is_not_the_source() -> None:
    source = "\n".join(math_fidelity.normalised_lines("    # \\begin{align}\n    # a \\\\\n    # b\n    # \\end{align}\n"))
    assert math_fidelity.tex_in_source("\\begin{align}\na \\\\\nb\n\\end{align}", source)
    assert not math_fidelity.tex_in_source("\\begin{align}\na \\\nb\n\\end{align}", source)
    assert math_fidelity.source_environment_rows(source) == (1, 2)


# ------------------------------------------------------------------------------------------------
# Spacing and glyphs (measured against KaTeX in tests/test_math_vs_katex.py)


def test_primes_are_full_size_on_the_base_line() -> None:
    markup = tex_to_mathml(r"t' + w'_{t,t'} + f'''", False)
    assert "<msup>" not in markup and "<msubsup>" not in markup
    assert markup.count('<mo lspace="0" rspace="0">\u2032</mo>') == 3 and "\u2034</mo>" in markup  # t', w', t' in the subscript
    assert "<msub><mrow><mi>w</mi>" in markup  # the subscript stays


def test_operator_names_italic_correction_and_colours() -> None:
    assert '<mo lspace="0.1667em">&#x2061;</mo>' in tex_to_mathml(r"\log{p_\theta}", False)  # logp → log p
    assert '<mo>&#x2061;</mo>' in tex_to_mathml(r"\log(x)", False)  # Op–Open: no space
    f = tex_to_mathml(r"f(x) + \hat{f}", False)
    assert '<mi>f</mi><mspace width="0.108em" class="kern"/><mo' in f and "<mover accent=\"true\"><mi>f</mi><mo" in f
    from labml_site.typeset.math import DARK_BACKGROUND, LIGHT_BACKGROUND, contrast, readable_colour

    for colour in ("90EE90", "FFFF00", "000080", "808080", "FFFFFF", "000000"):
        for dark, background in ((False, LIGHT_BACKGROUND), (True, DARK_BACKGROUND)):
            out = readable_colour(colour, dark)
            assert contrast(tuple(int(out[i:i + 2], 16) for i in (0, 2, 4)), background) >= 3, (colour, dark, out)
