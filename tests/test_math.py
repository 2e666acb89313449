"""Tests for labml_site.typeset.math: TeX → MathML at build time, validated, and laid out by Chromium."""

from __future__ import annotations

import html
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labml_site.typeset.math import MATHML_NS, MathError, tex_to_mathml, validate_mathml

REPO = Path(__file__).resolve().parent.parent
MATH_CSS = REPO / "labml_site" / "theme" / "static" / "math.css"
FONT = REPO / "labml_site" / "theme" / "static" / "fonts" / "latinmodern-math.woff2"
NS = f"{{{MATHML_NS}}}"

# Every construct the design notes require, plus formulas typical of annotated DL tutorials.
SUPPORTED = [
    r"\mathop{softmax}\Bigg(\frac{Q K^\top}{\sqrt{d_k}}\Bigg)V",
    r"\mathrm{Attention}(Q, K, V)",
    r"PE_{p,2i} = \sin\Bigg(\frac{p}{10000^{\frac{2i}{d_{model}}}}\Bigg)",
    r"S_{ijbh} = \sum_d Q_{ibhd} K_{jbhd}",
    r"\underset{seq}{softmax}",
    r"\mathop{Attention}",
    r"\Bigg( x \Bigg)",
    r"\bigg( x \bigg)",
    r"\Big\vert x \Big\vert",
    r"\frac{a}{b}",
    r"\sqrt{d_k}",
    r"\frac{QK^\top}{\sqrt{d_k}}",
    r"K^\top",
    r"\sum_d x_d",
    r"\text{if } x > 0",
    r"\mathbf{x} + \mathbf{W}_q",
    r"\mathcal{L}",
    r"\operatorname{softmax}(x)",
    r"X \in \mathbb{R}^{n \times d}",
    r"a \cdot b \odot c",
    r"\infty",
    r"\log p(x) + \exp(x) + \sin x + \cos x",
    r"\color{red}{x} + y",
    r"\begin{align}a &= b \\ c &= d\end{align}",
    r"\begin{align*}a &= b + c \\ d &= e\end{align*}",
    r"x = \begin{aligned}a &= b \\ c &= d\end{aligned}",
    r"\begin{matrix}1 & 2 \\ 3 & 4\end{matrix}",
    r"\begin{pmatrix}1 & 2 \\ 3 & 4\end{pmatrix}",
    r"\begin{bmatrix}1 & 2 \\ 3 & 4\end{bmatrix}",
    r"f(x) = \begin{cases}1 & x > 0 \\ 0 & \text{otherwise}\end{cases}",
    r"\begin{array}{cc}a & b \\ c & d\end{array}",
    r"\mathbb{E}_{x \sim p}\left[\log p(x)\right]",
    r"\operatorname{arg\,max}_x f(x)",
    r"\sigma(x) = \frac{1}{1 + e^{-x}}",
    r"\| x \|_2^2",
    r"\left\langle q, k \right\rangle",
    r"\hat{y} = \mathrm{LayerNorm}(x + \mathrm{Sublayer}(x))",
    r"\boxed{x} + \cancel{y}",
]


def parse(markup: str) -> ElementTree.Element:
    return ElementTree.fromstring(markup)


def local(element: ElementTree.Element) -> str:
    return element.tag.replace(NS, "")


def find_all(markup: str, name: str) -> list[ElementTree.Element]:
    return list(parse(markup).iter(NS + name))


def presentation(markup: str) -> ElementTree.Element:
    return parse(markup).find(f"{NS}semantics")[0]


def annotation_text(markup: str) -> str:
    return parse(markup).find(f"{NS}semantics/{NS}annotation").text or ""


# ------------------------------------------------------------------------------------------------
# Every supported construct converts to valid MathML carrying its TeX


@pytest.mark.parametrize("tex", SUPPORTED)
@pytest.mark.parametrize("display", [True, False])
def test_supported_construct_converts_to_valid_mathml(tex: str, display: bool) -> None:
    markup = tex_to_mathml(tex, display)
    assert validate_mathml(markup, expected_tex=tex) == []
    assert annotation_text(markup) == tex
    root = parse(markup)
    assert local(root) == "math"
    assert root.get("display") == ("block" if display else "inline")
    # No TeX command may leak into the rendered part as text.
    rendered = "".join(presentation(markup).itertext())
    assert not re.search(r"\\[A-Za-z]", rendered), rendered


def test_mathop_yields_text_only_token_elements() -> None:
    markup = tex_to_mathml(r"\mathop{softmax}\Bigg(\frac{Q K^\top}{\sqrt{d_k}}\Bigg)V", True)
    for name in ("mi", "mo", "mn", "mtext"):
        for element in find_all(markup, name):
            assert len(element) == 0, f"<{name}> holds elements"
    names = [e.text for e in find_all(markup, "mi")]
    assert "softmax" in names  # one name, not seven letters
    assert "s" not in names


def test_mathop_with_structure_becomes_a_row_not_a_token() -> None:
    markup = tex_to_mathml(r"\mathop{\mathrm{x}^2}", False)
    assert all(len(e) == 0 for e in find_all(markup, "mo"))
    assert find_all(markup, "msup")


def test_mathop_of_a_symbol_stays_an_operator() -> None:
    markup = tex_to_mathml(r"\mathop{\sum}_i x_i", False)
    assert [e.text for e in find_all(markup, "mo")] == ["\u2211"]


def test_big_delimiters_stretch_and_resolve_commands() -> None:
    markup = tex_to_mathml(r"\Bigg( \Big\vert \big\{ \Big\| x \Bigg.", True)
    delimiters = [e for e in find_all(markup, "mo") if e.get("minsize")]
    assert [e.text or "" for e in delimiters] == ["(", "|", "{", "\u2016", ""]
    assert all(e.get("stretchy") == "true" for e in delimiters)
    assert delimiters[0].get("minsize") == "2.470em"


def test_fraction_root_and_scripts_have_the_right_shape() -> None:
    markup = tex_to_mathml(r"\frac{QK^\top}{\sqrt{d_k}}", True)
    fraction = find_all(markup, "mfrac")[0]
    assert len(fraction) == 2
    assert find_all(markup, "msqrt")
    top = find_all(markup, "msup")[0]
    assert top[1].text == "\u22a4"  # ⊤


def test_sum_limits_under_in_display_and_as_subscript_inline() -> None:
    assert find_all(tex_to_mathml(r"\sum_d x", True), "munder")
    assert find_all(tex_to_mathml(r"\sum_d x", False), "msub")


def test_font_commands_become_unicode_math_letters() -> None:
    # Chromium ignores mathvariant other than "normal", so styles must be in the characters.
    markup = tex_to_mathml(r"\mathbf{x} \mathbf{Wq} \mathcal{L} \mathbb{R} \boldsymbol{\alpha}", False)
    texts = [e.text for e in find_all(markup, "mi")]
    assert "\U0001d431" in texts  # bold x
    assert "\U0001d416" in texts and "\U0001d42a" in texts  # bold W, bold q
    assert "\u2112" in texts  # script L
    assert "\u211d" in texts  # double-struck R
    assert "\U0001d736" in texts  # bold italic alpha
    assert all(e.get("mathvariant") in (None, "normal") for e in find_all(markup, "mi"))


def test_upright_names_and_letters() -> None:
    markup = tex_to_mathml(r"\mathrm{Attention} \mathrm{d}x \Sigma", False)
    mis = {e.text: e.get("mathvariant") for e in find_all(markup, "mi")}
    assert mis["Attention"] is None  # one multi-letter <mi>: upright by default
    assert mis["d"] == "normal"
    assert mis["\u03a3"] == "normal"  # capital Greek is upright in TeX
    assert mis["x"] is None


def test_operatorname_is_an_upright_name_with_function_spacing() -> None:
    markup = tex_to_mathml(r"\operatorname{softmax}(x) + \sin x", False)
    row = presentation(markup)
    tags = [(local(e), e.text) for e in row]
    assert ("mi", "softmax") in tags
    softmax = tags.index(("mi", "softmax"))
    assert tags[softmax + 1] == ("mo", "(")  # no space before a parenthesis
    sin = tags.index(("mi", "sin"))
    assert tags[sin + 1][0] == "mspace"  # thin space before a bare argument
    assert tags[sin + 2] == ("mi", "x")


def test_operatorname_with_non_letters_is_kept_whole() -> None:
    markup = tex_to_mathml(r"\operatorname{arg\,max}_x f", False)
    assert [e.text for e in find_all(markup, "mi")][0] == "arg\u2009max"


def test_text_and_functions() -> None:
    markup = tex_to_mathml(r"\log \exp \sin \cos \text{if}", False)
    assert [e.text for e in find_all(markup, "mi")] == ["log", "exp", "sin", "cos"]
    assert [e.text for e in find_all(markup, "mtext")] == ["if"]


def test_symbols() -> None:
    markup = tex_to_mathml(r"a \cdot b \odot c \in \infty \sim d", False)
    assert [e.text for e in find_all(markup, "mo")] == ["\u00b7", "\u2299", "\u2208", "\u223c"]
    assert "\u221e" in [e.text for e in find_all(markup, "mi")]  # ∞ is ordinary, not an operator


def test_color_is_a_style_and_a_bad_colour_is_refused() -> None:
    styles = find_all(tex_to_mathml(r"\color{red}{x}", False), "mstyle")
    assert styles and styles[0].get("mathcolor") == "red"
    with pytest.raises(MathError, match="colour"):
        tex_to_mathml(r'\color{red" onclick="x}{y}', False)


# ------------------------------------------------------------------------------------------------
# Environments


@pytest.mark.parametrize(
    "tex,rows,cells",
    [
        (r"\begin{align}a &= b \\ c &= d\end{align}", 2, 2),
        (r"\begin{align*}a &= b \\ c &= d \\ e &= f\end{align*}", 3, 2),
        (r"\begin{aligned}a &= b \\ c &= d\end{aligned}", 2, 2),
        (r"\begin{matrix}1 & 2 & 3 \\ 4 & 5 & 6\end{matrix}", 2, 3),
        (r"\begin{pmatrix}1 & 2 \\ 3 & 4\end{pmatrix}", 2, 2),
        (r"\begin{bmatrix}1 \\ 2 \\ 3\end{bmatrix}", 3, 1),
        (r"\begin{cases}1 & x > 0 \\ 0 & \text{else}\end{cases}", 2, 2),
        (r"\begin{array}{lcr}a & b & c \\ d & e & f\end{array}", 2, 3),
    ],
)
def test_environments_produce_tables(tex: str, rows: int, cells: int) -> None:
    markup = tex_to_mathml(tex, True)
    assert validate_mathml(markup, expected_tex=tex) == []
    table = find_all(markup, "mtable")
    assert len(table) == 1
    table_rows = table[0].findall(NS + "mtr")
    assert len(table_rows) == rows
    assert all(len(row.findall(NS + "mtd")) == cells for row in table_rows)


def test_align_is_unnumbered_and_styled_as_align() -> None:
    markup = tex_to_mathml(r"\begin{align}a &= b \\ c &= d\end{align}", True)
    assert "(1)" not in markup
    table = find_all(markup, "mtable")[0]
    assert table.get("class") == "tex-align"
    assert [td.get("columnalign") for td in table.iter(NS + "mtd")][:2] == ["right", "left"]


def test_matrix_delimiters() -> None:
    assert [e.text for e in find_all(tex_to_mathml(r"\begin{pmatrix}1\end{pmatrix}", True), "mo")] == ["(", ")"]
    assert [e.text for e in find_all(tex_to_mathml(r"\begin{bmatrix}1\end{bmatrix}", True), "mo")] == ["[", "]"]
    assert [e.text for e in find_all(tex_to_mathml(r"\begin{cases}1\end{cases}", True), "mo")] == ["{"]


# ------------------------------------------------------------------------------------------------
# Escaping


def test_special_characters_are_escaped_in_text_and_annotation() -> None:
    tex = r"a < b \text{ x < y & z } \& c > d"
    markup = tex_to_mathml(tex, False)
    assert validate_mathml(markup, expected_tex=tex) == []
    assert "<annotation encoding=\"application/x-tex\">a &lt; b \\text{ x &lt; y &amp; z } \\&amp; c &gt; d</annotation>" in markup
    assert [e.text for e in find_all(markup, "mtext")] == ["\u00a0x < y & z\u00a0"]
    assert "&lt;" in markup.split("<annotation")[0]  # the operator < is escaped too
    assert annotation_text(markup) == tex


def test_annotation_round_trips_through_an_html_parser() -> None:
    tex = r"\begin{align}a &= b \\ c &< d\end{align}"
    markup = tex_to_mathml(tex, True)
    raw = markup.split('encoding="application/x-tex">')[1].split("</annotation>")[0]
    assert html.unescape(raw) == tex


def test_text_escapes_are_resolved() -> None:
    markup = tex_to_mathml(r"\text{50\% of \$5 \& \#1}", False)
    assert [e.text for e in find_all(markup, "mtext")] == ["50% of $5 & #1"]


# ------------------------------------------------------------------------------------------------
# Errors: never garbage, always a message that names the problem


@pytest.mark.parametrize("command", [r"\foo", r"\softmax", r"\R"])
def test_unknown_command_is_refused_by_name(command: str) -> None:
    with pytest.raises(MathError) as error:
        tex_to_mathml(f"x + {command}{{y}}", True)
    assert command in str(error.value)
    assert "unknown command" in str(error.value)
    assert error.value.column == 5


def test_command_inside_text_is_refused() -> None:
    with pytest.raises(MathError, match=r"\\alpha inside \\text"):
        tex_to_mathml(r"\text{angle \alpha}", False)


@pytest.mark.parametrize(
    "tex,column",
    [(r"{a", 1), (r"a}", 2), (r"\frac{a}{b", 9), (r"\frac{a}}{b}", 9), (r"x_{i", 3)],
)
def test_unbalanced_braces_are_refused_with_the_column(tex: str, column: int) -> None:
    with pytest.raises(MathError, match="unbalanced braces") as error:
        tex_to_mathml(tex, False)
    assert error.value.column == column


@pytest.mark.parametrize(
    "tex,fragment",
    [
        (r"\left( x", r"\left without a matching \right"),
        (r"x \right)", r"\right without a matching \left"),
        (r"{\left( x} \right)", r"unclosed \left"),
        (r"\left x \right)", "must be followed by a delimiter"),
        (r"\Bigg x", "must be followed by a delimiter"),
        (r"\begin{matrix} a \end{pmatrix}", r"\end{pmatrix} does not match"),
        (r"\begin{matrix} a", r"without \end{matrix}"),
        (r"\begin{tabular}{c} a \end{tabular}", "unsupported environment tabular"),
        (r"a & b", "outside a table environment"),
        (r"a \\ b", "outside a table environment"),
        (r"\text{a{b}c}", r"braces inside \text"),
        (r"5 % of x", r"write \% for a percent sign"),
        (r"\frac{a}", "missing an argument"),
        (r"x^", "nothing after it"),
        (r"x_a_b", "double subscript"),
        (r"\newcommand{\R}{\mathbb{R}} \R", "macro definitions"),
        (r"\href{javascript:alert(1)}{x}", "links are not allowed"),
        (r"\style{color:red}{x}", "raw CSS"),
        (r"\label{eq:1} x", "labels are not supported"),
        (r"   ", "empty formula"),
        ("x\\", "stray backslash"),
        (r"\@", "stray backslash"),
        (r"a $ b", r"unescaped $"),
        (r"#1", r"unescaped #"),
        (r"\unicode{x41}", "type the character itself"),
    ],
)
def test_malformed_input_raises_math_error(tex: str, fragment: str) -> None:
    with pytest.raises(MathError) as error:
        tex_to_mathml(tex, True)
    assert fragment in str(error.value)


def test_other_types_are_a_programming_error() -> None:
    with pytest.raises(TypeError):
        tex_to_mathml(b"x", True)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------
# Cache


def test_cache_returns_identical_output_and_is_hit() -> None:
    tex = r"\frac{\alpha_{cache}}{\beta}"
    tex_to_mathml.cache_clear()
    first = tex_to_mathml(tex, True)
    info = tex_to_mathml.cache_info()
    assert (info.hits, info.misses) == (0, 1)
    second = tex_to_mathml(tex, True)
    assert second is first
    assert tex_to_mathml.cache_info().hits == 1
    inline = tex_to_mathml(tex, False)  # a different key: converted, not served from the block entry
    assert tex_to_mathml.cache_info().misses == 2
    assert inline != first and 'display="inline"' in inline


# ------------------------------------------------------------------------------------------------
# The validator itself must catch what it claims to


def _wrap(presentation_markup: str, tex: str = "x") -> str:
    return (
        f'<math xmlns="{MATHML_NS}" display="block"><semantics>{presentation_markup}'
        f'<annotation encoding="application/x-tex">{tex}</annotation></semantics></math>'
    )


@pytest.mark.parametrize(
    "markup,fragment",
    [
        (_wrap("<mrow><mi>x</mi></mrow>") + "<", "not well-formed"),
        (_wrap("<mrow><mo><mrow><mi>s</mi></mrow></mo></mrow>"), "may hold text only"),
        (_wrap("<mrow><div>x</div></mrow>"), "not a MathML element"),
        (_wrap("<mfrac><mi>a</mi></mfrac>"), "children instead of 2"),
        (_wrap('<mrow href="javascript:x"><mi>x</mi></mrow>'), "'href'"),
        (_wrap('<mrow onclick="x()"><mi>x</mi></mrow>'), "'onclick'"),
        (_wrap("<mtable><mtd><mi>x</mi></mtd></mtable>"), "only <mtr>"),
        (_wrap("<mrow>bare</mrow>"), "bare text"),
        (_wrap("<mrow><mi>x</mi></mrow>", tex="y"), "original TeX"),
        (f'<math xmlns="{MATHML_NS}" display="block"><mrow><mi>x</mi></mrow></math>', "<semantics>"),
        (f'<math xmlns="{MATHML_NS}" display="wide"><semantics><mi>x</mi>'
         '<annotation encoding="application/x-tex">x</annotation></semantics></math>', "display"),
        ("<math><semantics><mi>x</mi><annotation encoding=\"application/x-tex\">x</annotation>"
         "</semantics></math>", "MathML namespace"),
    ],
)
def test_validator_reports_invalid_mathml(markup: str, fragment: str) -> None:
    problems = validate_mathml(markup, expected_tex="x")
    assert any(fragment in p for p in problems), problems


def test_validator_accepts_minimal_valid_mathml() -> None:
    assert validate_mathml(_wrap("<mrow><mi>x</mi></mrow>"), expected_tex="x") == []


# ------------------------------------------------------------------------------------------------
# Property: any input is either refused with MathError or converted to valid MathML

_PIECES = [
    "x", "y", "2", "+", "=", "<", "&", " ", "{", "}", "^", "_", "(", ")", "[", "|", "'",
    r"\frac", r"\sqrt", r"\left(", r"\right)", r"\Bigg(", r"\big\vert", r"\text{a&b}", r"\\",
    r"\begin{aligned}", r"\end{aligned}", r"\begin{pmatrix}", r"\end{pmatrix}", r"\sum", r"\mathop{f}",
    r"\mathbf{x}", r"\mathrm{d}", r"\operatorname{g}", r"\alpha", r"\sin", r"\foo", r"\top", r"\over",
    r"\underset", r"\color{red}", r"\cdot", r"\infty", r"\mathop{\mathrm{h}}", r"\limits", r"\%",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=12), st.booleans())
def test_any_input_is_refused_or_valid(pieces: list[str], display: bool) -> None:
    tex = "".join(pieces)
    try:
        markup = tex_to_mathml(tex, display)
    except MathError as error:
        assert str(error)  # refused with a message
        return
    assert validate_mathml(markup, expected_tex=tex) == []
    rendered = "".join(presentation(markup).itertext())
    assert not re.search(r"\\[A-Za-z]", rendered), (tex, rendered)


# ------------------------------------------------------------------------------------------------
# Speed-ups that must not change anything: tex_to_mathml tokenises once with its own tokenizer,
# feeds latex2mathml's internals, and validates the tree it built instead of re-parsing its output.


def _tutorial_formulas() -> list[str]:
    from labml_site.read.prose import section_blocks
    from labml_site.read.sections import parse_source

    formulas: list[str] = []
    for path in sorted((REPO / "source").rglob("*.py")):
        for section in parse_source(path.read_text(encoding="utf-8"), str(path)).sections:
            for block in section_blocks(section):
                formulas += [p.text for p in block.placeholders if p.kind in ("math", "display_math", "env")]
    return formulas


TUTORIAL_FORMULAS = _tutorial_formulas()
# Inputs that take the tokenizer's special cases: comments, units, fonts, \verb, \operatorname,
# \begin with spaces, text arguments, fractions of digits, and malformed input.
TOKENIZER_EDGES = [
    r"x % comment", "x %", "x %\n y", r"\text{%a} b", r"\text{5 mm}", r"\hspace{2 em}", r"\mathbb{R}",
    r"\mathbf{xy}", r"\mathrm{ d}", r"\mathring{a}", r"\verb|a b|", r"\verb", r"x \verbatim y", r"\verb|x",
    r"\operatorname {ab}", r"\operatorname*{f}", r"\operatornamewithlimits{g}", r"\begin {matrix} a \end {matrix}",
    r"\frac12", r"\dfrac 3.", r"x_2^3", r".5 + 1.25", "-3pt", r"\text{\begin x}", r"\underbar{}", r"\color{}",
    r"\\ \{ \} \, \; \! \  \| \% \& \#", "\\", "a\\", "\u00e9 \U0001d400 \u2207", r"\left( x \right.",
]


def _reference_tokens(tex: str) -> list[str]:
    """latex2mathml's own tokens; up to the failure where it fails (a bare \verb raises IndexError)."""
    from latex2mathml.tokenizer import tokenize

    tokens: list[str] = []
    try:
        for token in tokenize(tex):
            tokens.append(token)
    except IndexError:
        assert tokens[-1] == r"\verb"
    return tokens


@pytest.mark.parametrize("tex", TUTORIAL_FORMULAS + SUPPORTED + TOKENIZER_EDGES)
def test_tokenizer_yields_latex2mathmls_tokens(tex: str) -> None:
    from labml_site.typeset.math import _prepare, _tokenize

    assert _tokenize(tex) == _reference_tokens(tex)
    assert _tokenize(_prepare(tex)) == _reference_tokens(_prepare(tex))


_TEX_CHARACTERS = st.sampled_from(list("aZ09 .,_^{}[]()|&%$#-+*/<>!'~\\\n\t") + _PIECES + ["\u00e9", "pt", "em", "mm"])


@settings(max_examples=500, deadline=None)
@given(st.lists(_TEX_CHARACTERS, max_size=20))
def test_tokenizer_matches_latex2mathml_on_any_text(pieces: list[str]) -> None:
    from labml_site.typeset.math import _tokenize

    tex = "".join(pieces)
    assert _tokenize(tex) == _reference_tokens(tex)


def _converted_both_ways(tex: str, mode: str) -> tuple[str, str]:
    from latex2mathml.converter import Converter

    from labml_site.typeset.math import _convert, _prepare, _tokenize

    prepared = _prepare(tex)
    ours = ElementTree.tostring(_convert(_tokenize(prepared), mode), encoding="unicode")
    theirs = ElementTree.tostring(Converter(display=mode).convert_to_element(prepared), encoding="unicode")
    return ours, theirs


@pytest.mark.parametrize("tex", TUTORIAL_FORMULAS + SUPPORTED)
@pytest.mark.parametrize("mode", ["block", "inline"])
def test_converting_tokens_equals_converting_the_string(tex: str, mode: str) -> None:
    ours, theirs = _converted_both_ways(tex, mode)
    assert ours == theirs


def test_tokenised_once() -> None:
    from unittest import mock

    import latex2mathml.tokenizer
    import latex2mathml.walker

    tex_to_mathml.cache_clear()
    with mock.patch.object(latex2mathml.walker, "tokenize", wraps=latex2mathml.tokenizer.tokenize) as spy:
        tex_to_mathml(r"\frac{a_{once}}{b}", True)
    assert spy.call_count == 0  # latex2mathml's walker gets our token list, not the string


def _unqualified(markup: str) -> ElementTree.Element:
    root = parse(markup)
    for element in root.iter():
        element.tag = element.tag.replace(NS, "")
    return root


@pytest.mark.parametrize("tex", TUTORIAL_FORMULAS[:200] + SUPPORTED)
def test_tree_check_agrees_with_validating_the_string(tex: str) -> None:
    from labml_site.typeset.math import _tree_problems

    markup = tex_to_mathml(tex, True)
    assert _tree_problems(_unqualified(markup), prefix="") == validate_mathml(markup) == []


# Invalid MathML of every kind the validators know (the tree check and the string validator).
INVALID_MARKUP = [
    _wrap("<mrow><mo><mrow><mi>s</mi></mrow></mo></mrow>"),
    _wrap("<mrow><div>x</div></mrow>"),
    _wrap("<mfrac><mi>a</mi></mfrac>"),
    _wrap("<msub><mi>a</mi></msub>"),
    _wrap('<mrow onclick="x()"><mi>x</mi></mrow>'),
    _wrap("<mtable><mtd><mi>x</mi></mtd></mtable>"),
    _wrap("<mrow>bare</mrow>"),
    _wrap("<mrow><mi>x</mi>tail</mrow>"),
    _wrap('<mrow class="other"><mi>x</mi></mrow>'),
    _wrap('<menclose notation="circle"><mi>x</mi></menclose>'),
    _wrap("<mrow><math><mi>x</mi></math></mrow>"),
]


@pytest.mark.parametrize("markup", INVALID_MARKUP)
def test_tree_check_finds_what_the_string_validator_finds(markup: str) -> None:
    from labml_site.typeset.math import _tree_problems

    assert validate_mathml(markup)
    # Same checks on the tree as built (tags without namespace): never laxer than on the string.
    expected = [problem.replace(NS, "") for problem in validate_mathml(markup)]
    assert _tree_problems(_unqualified(markup), prefix="") == expected


def test_tree_check_refuses_a_namespace_declaration_below_the_root() -> None:
    from labml_site.typeset.math import _tree_problems

    root = _unqualified(_wrap("<mrow><mi>x</mi></mrow>"))
    root.find("semantics/mrow/mi").set("xmlns", "http://www.w3.org/1999/xhtml")
    assert _tree_problems(root, prefix="")


@pytest.mark.parametrize(
    "tex,fragment",
    [
        ("a\rb", "annotation does not hold the original TeX"),  # a parser reads \r as \n
        ("x\x01", "not well-formed XML"),
        (r"\text{a\rb}".replace(r"\r", "\r"), "annotation does not hold the original TeX"),
    ],
)
def test_text_that_does_not_survive_xml_is_refused_as_the_string_validator_words_it(tex: str, fragment: str) -> None:
    with pytest.raises(MathError) as error:
        tex_to_mathml(tex, True)
    assert fragment in str(error.value)


@pytest.mark.parametrize("depth", [500, 990, 1000, 3000])
def test_deep_nesting_is_refused_or_converted_never_a_recursion_error(depth: int) -> None:
    tex = "{" * depth + "x" + "}" * depth
    try:
        markup = tex_to_mathml(tex, True)
    except MathError as error:
        assert "nests too deeply" in str(error)
    else:
        assert validate_mathml(markup, expected_tex=tex) == []


# The fast port of latex2mathml's walker and converter (_walk_fast, _FastConverter) must build what
# latex2mathml builds. Templates put every token latex2mathml names in the positions that matter:
# alone, with arguments, as a script base or script, in a font, a style, a table, a \left … \right.
_PORT_TEMPLATES = [
    ["T"], ["T", "x"], ["T", "{", "x", "}", "{", "y", "}"], [r"\sum", "T", "_", "i"], ["x", "_", "T", "^", "2"],
    ["T", "_", "a", "^", "b"], ["T", "'", "'"], ["{", "T", "}", "^", "{", "x", "}"], [r"\left", "(", "T", r"\right", ")"],
    ["T", "(", "x", "y", ")"], [r"\mathbf", "{", "T", "x", "}"], [r"\rm", "T", "x"], [r"\displaystyle", "T", "x"],
    [r"\begin{matrix}", "T", "&", "x", r"\end{matrix}"], [r"\sqrt", "[", "T", "]", "{", "x", "}"], [r"\frac", "T", "x"],
    ["T", r"\limits", "_", "x"], ["x", "^", r"\prime", "'", "T"], [r"\hat", "T"], [r"\text", "T"], [r"\Big", "T"],
]  # fmt: skip


def _port_tokens() -> list[str]:
    from latex2mathml import commands, converter

    from labml_site.typeset.math import _WALK_KINDS

    return sorted({*_WALK_KINDS, *converter.OPERATORS, *converter.MOVABLE_LIMIT_TEXTS, *commands.CONVERSION_MAP})


def _walked_both_ways(tokens: list[str], block: bool) -> tuple[object, object]:
    """(latex2mathml's nodes or exception type, the port's nodes, "declined" or exception type)."""
    from latex2mathml import walker

    from labml_site.typeset.math import _Unsupported, _walk_fast

    try:
        theirs: object = walker._walk(iter(tokens), block=block, macros={})
    except Exception as error:
        theirs = type(error)
    try:
        ours: object = _walk_fast(iter(tokens), block=block)
    except _Unsupported:
        ours = "declined"
    except Exception as error:
        ours = type(error)
    return theirs, ours


def _converted_nodes(converter_class: type, nodes: list, mode: str) -> object:
    math = ElementTree.Element("math")
    try:
        converter_class(display=mode)._convert_group(iter(nodes), ElementTree.SubElement(math, "mrow"))
    except Exception as error:
        return type(error), str(error)
    return ElementTree.tostring(math, encoding="unicode")


def _assert_port_agrees(tokens: list[str], block: bool) -> bool:
    """The port builds latex2mathml's nodes and elements wherever it succeeds; True if it did."""
    from latex2mathml.converter import Converter

    from labml_site.typeset.math import _FastConverter

    theirs, ours = _walked_both_ways(tokens, block)
    if not isinstance(ours, list):
        return False  # declined or failed: _convert hands the whole formula to latex2mathml
    assert ours == theirs, tokens
    mode = "block" if block else "inline"
    assert _converted_nodes(_FastConverter, ours, mode) == _converted_nodes(Converter, ours, mode), tokens
    return True


def test_port_builds_latex2mathmls_tree_for_every_command_it_knows() -> None:
    ported = 0
    for token in _port_tokens():
        for template in _PORT_TEMPLATES:
            tokens = [token if piece == "T" else piece for piece in template]
            for block in (False, True):
                ported += _assert_port_agrees(tokens, block)
    assert ported > 10_000  # most of them take the port, not the fallback


@pytest.mark.parametrize("tex", TUTORIAL_FORMULAS + SUPPORTED)
def test_port_builds_latex2mathmls_tree_for_the_tutorial(tex: str) -> None:
    from labml_site.typeset.math import _prepare, _tokenize

    tokens = _tokenize(_prepare(tex))
    for block in (False, True):
        ported = _assert_port_agrees(tokens, block)
        # The constructs a tutorial uses are ported (tables and \color are left to latex2mathml).
        assert ported or any(token.startswith((r"\begin", r"\color")) for token in tokens), tex


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_port_tokens() + list("xy12+=()[]&'_^") + ["{", "}"] * 6), max_size=12), st.booleans())
def test_port_agrees_with_latex2mathml_on_any_tokens(tokens: list[str], block: bool) -> None:
    _assert_port_agrees(tokens, block)


def _outcome(convert) -> object:
    try:
        return ElementTree.tostring(convert(), encoding="unicode")
    except Exception as error:
        return type(error), str(error)


@pytest.mark.parametrize("tex", [r"a \over b", r"\color{red} x", r"\not= \hspace{1em}", "x_a_b", r"\frac{a}", r"\sqrt"])
@pytest.mark.parametrize("mode", ["block", "inline"])
def test_declined_or_malformed_formulas_convert_as_latex2mathml_does(tex: str, mode: str) -> None:
    from latex2mathml.converter import Converter

    from labml_site.typeset.math import _convert, _prepare, _tokenize

    prepared = _prepare(tex)
    ours = _outcome(lambda: _convert(_tokenize(prepared), mode))
    assert ours == _outcome(lambda: Converter(display=mode).convert_to_element(prepared))


@pytest.mark.parametrize("tex", TUTORIAL_FORMULAS[:200] + SUPPORTED)
def test_checked_serialisation_is_the_plain_serialisation(tex: str) -> None:
    from labml_site.typeset.math import _serialise_checked

    markup = tex_to_mathml(tex, True)
    # A parsed tree holds the namespace in its tags, not as an xmlns attribute.
    assert _serialise_checked(_unqualified(markup)) == (markup.replace(f' xmlns="{MATHML_NS}"', "", 1), True)


@pytest.mark.parametrize("markup", INVALID_MARKUP)
def test_checked_serialisation_fails_where_the_tree_check_does(markup: str) -> None:
    from labml_site.typeset.math import _serialise_checked, _tree_problems

    tree = _unqualified(markup)
    assert _tree_problems(tree, prefix="")
    assert _serialise_checked(tree)[1] is False


def test_checked_serialisation_refuses_a_namespace_declaration_below_the_root() -> None:
    from labml_site.typeset.math import _serialise_checked

    root = _unqualified(_wrap("<mrow><mi>x</mi></mrow>"))
    root.find("semantics/mrow/mi").set("xmlns", "http://www.w3.org/1999/xhtml")
    assert _serialise_checked(root)[1] is False


@pytest.mark.parametrize(
    "tex,column,fragment",
    [
        (r"\{ a", None, None),
        (r"a \\}", 5, "'}' at column 5"),
        (r"\alpha}", 7, "'}' at column 7"),
        ("x \\", 3, "stray backslash at column 3"),
        (r"\$ \# \% x", None, None),
        (r"{\{}", None, None),
        (r"{a \% b", 1, "'{' at column 1"),
    ],
)
def test_source_check_skips_escapes_and_reports_columns(tex: str, column: int | None, fragment: str | None) -> None:
    if fragment is None:
        tex_to_mathml(tex, False)
        return
    with pytest.raises(MathError) as error:
        tex_to_mathml(tex, False)
    assert fragment in str(error.value)
    assert error.value.column == column


# ------------------------------------------------------------------------------------------------
# Assets


def test_font_is_a_woff2_math_font_under_a_megabyte() -> None:
    pytest.importorskip("brotli")  # fontTools needs it to read WOFF2
    TTFont = pytest.importorskip("fontTools.ttLib").TTFont

    assert FONT.stat().st_size < 1_000_000
    font = TTFont(str(FONT))
    assert font.flavor == "woff2"
    assert "MATH" in font  # the table Chromium needs to stretch delimiters
    assert (FONT.parent / "GUST-FONT-LICENSE.txt").read_text().startswith("% This is version 1.0")


def test_css_loads_the_font_by_a_relative_url() -> None:
    css = MATH_CSS.read_text()
    urls = re.findall(r"url\(\"?([^\")]+)\"?\)", css)
    assert urls, "no @font-face url"
    for url in urls:
        assert not re.match(r"^[a-z]+:|^/", url), f"{url} is not relative"
        assert (MATH_CSS.parent / url).is_file()
    assert '"Latin Modern Math"' in css


# ------------------------------------------------------------------------------------------------
# Layout in Chromium (skipped where there is no Chromium)

LAYOUT_FORMULAS = SUPPORTED + [r"\begin{align}a &= b + c \\ de &= f\end{align}"]
LONG = " + ".join([r"\sum_d Q_{ibhd} K_{jbhd}"] * 8)


@pytest.mark.browser
def test_chromium_lays_out_every_formula(tmp_path: Path, browser) -> None:
    blocks = [f'<div class="f">{tex_to_mathml(tex, True)}</div>' for tex in LAYOUT_FORMULAS]
    inline = [f'<p class="f">text {tex_to_mathml(tex, False)} text</p>' for tex in SUPPORTED[:12]]
    bigg = tex_to_mathml(r"\Bigg( x", False).replace("<mo ", '<mo id="bigg" ', 1)
    page = tmp_path / "math.html"
    page.write_text(
        '<!doctype html><html><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width">'
        f'<link rel="stylesheet" href="{MATH_CSS.as_uri()}"></head><body style="margin:8px">'
        '<p><math><mo id="plain">(</mo></math> '
        f"{bigg}</p>"
        f'<div id="long">{tex_to_mathml(LONG, True)}</div>'
        + "".join(blocks + inline)
        + "</body></html>",
        encoding="utf-8",
    )
    tab = browser.new_page(viewport={"width": 360, "height": 800})  # a narrow phone
    try:
        tab.goto(page.as_uri())
        tab.evaluate("document.fonts.ready")
        assert tab.evaluate("document.fonts.check('20px \"Latin Modern Math\"')")
        assert tab.evaluate("[...document.fonts].some(f => f.family.includes('Latin Modern Math') && f.status === 'loaded')")

        sizes = tab.evaluate(
            "[...document.querySelectorAll('math')].map(m => {const r = m.getBoundingClientRect();"
            " return [r.width, r.height, (m.querySelector('annotation') || m).textContent]})"
        )
        assert len(sizes) == len(LAYOUT_FORMULAS) + 12 + 3
        empty = [tex for width, height, tex in sizes if not (width > 0 and height > 0)]
        assert empty == []

        plain = tab.evaluate("document.getElementById('plain').getBoundingClientRect().height")
        bigg = tab.evaluate("document.getElementById('bigg').getBoundingClientRect().height")
        assert bigg > 2 * plain, (bigg, plain)  # \Bigg( stretched (2.47em) via the MATH table

        # A wide formula scrolls inside its own box; the page itself does not get wider.
        long = tab.evaluate(
            "(() => {const m = document.querySelector('#long math'); const r = m.getBoundingClientRect();"
            " const first = m.querySelector('mrow').getBoundingClientRect();"
            " return [m.scrollWidth, m.clientWidth, first.left - r.left, document.documentElement.scrollWidth]})()"
        )
        scroll_width, client_width, start_offset, page_width = long
        assert scroll_width > client_width
        assert start_offset >= 0  # its start is reachable, not cut off by centring
        assert page_width <= 360

        # align: the right-aligned column's cells end where the left-aligned column starts.
        gaps = tab.evaluate(
            "[...document.querySelectorAll('mtable.tex-align mtr')].map(tr => {"
            " const [left, right] = tr.querySelectorAll('mtd');"
            " return right.getBoundingClientRect().left - left.lastElementChild.getBoundingClientRect().right})"
        )
        assert gaps
        assert all(abs(gap) < 1.0 for gap in gaps), str(gaps)
    finally:
        tab.close()
