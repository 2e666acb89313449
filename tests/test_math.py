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
    assert "\U0001d460\U0001d45c\U0001d453\U0001d461\U0001d45a\U0001d44e\U0001d465" in names  # one name, in math italic
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
    assert [e.text or "" for e in delimiters] == ["(", "|", "{", "\u2016"]  # \Bigg. draws nothing
    assert delimiters[0].get("minsize") == "2.470em"


def test_sized_delimiter_with_a_script_is_wrapped_to_keep_its_size() -> None:
    # Chromium draws <msup><mo minsize>)</mo>… at normal size; inside an <mrow>, marked stretchy
    # and symmetric, at full size (DESIGN.md).
    for tex in (r"\bigg)^2", r"\Big\Vert_2", r"\Bigg]_{i}^{n}"):
        script = presentation(tex_to_mathml(tex, True))[0]
        assert local(script) in ("msup", "msub", "msubsup")
        base = script[0]
        assert local(base) == "mrow" and local(base[0]) == "mo"
        assert base[0].get("stretchy") == "true" and base[0].get("symmetric") == "true"
        assert base[0].get("minsize")


def test_fraction_root_and_scripts_have_the_right_shape() -> None:
    markup = tex_to_mathml(r"\frac{QK^\top}{\sqrt{d_k}}", True)
    fraction = find_all(markup, "mfrac")[0]
    assert len(fraction) == 2
    assert find_all(markup, "msqrt")
    top = find_all(markup, "msup")[0]
    assert top[1].text == "\u22a4"  # ⊤


def test_limits_under_in_display_and_as_scripts_inline() -> None:
    for tex in (r"\sum_d x", r"\lim_{n \to \infty} a_n", r"\max_x f", r"\arg\min_x f", r"\operatorname*{argmax}_y g"):
        assert find_all(tex_to_mathml(tex, True), "munder"), tex
        inline = tex_to_mathml(tex, False)
        assert find_all(inline, "msub") or all(u.get("movablelimits") != "false" for u in find_all(inline, "munder")), tex
    assert not find_all(tex_to_mathml(r"\operatorname{f}_y g", True), "munder")  # no star: a subscript


def test_font_commands_become_unicode_math_letters() -> None:
    # Chromium ignores mathvariant other than "normal", so styles must be in the characters.
    markup = tex_to_mathml(r"\mathbf{x} \mathbf{Wq} \mathcal{L} \mathbb{R} \boldsymbol{\alpha} \pmb{z}", False)
    texts = "".join(e.text or "" for e in find_all(markup, "mi"))
    assert "\U0001d431" in texts  # bold x
    assert "\U0001d416" in texts and "\U0001d42a" in texts  # bold W, bold q
    assert "\u2112" in texts or "\U0001d4db" in texts  # script L
    assert "\u211d" in texts  # double-struck R
    assert "\U0001d736" in texts  # bold italic alpha
    assert all(e.get("mathvariant") in (None, "normal") for e in find_all(markup, "mi"))


def test_multi_letter_scripts_are_one_identifier_in_italic() -> None:
    row = presentation(tex_to_mathml(r"d_{model} + W^{in}_{k}", False))
    script = row[0]
    assert local(script) == "msub" and local(script[1]) == "mi"
    assert script[1].text == "\U0001d45a\U0001d45c\U0001d451\U0001d452\U0001d459"  # 𝑚𝑜𝑑𝑒𝑙, one name
    both = row[2]
    assert [local(e) for e in both] == ["mi", "mi", "mi"] and both[2].text == "\U0001d456\U0001d45b"


def test_mathop_name_is_italic_as_in_tex_and_operatorname_upright() -> None:
    names = [e.text for e in find_all(tex_to_mathml(r"\mathop{softmax}(x) + \operatorname{relu}(y)", False), "mi")]
    assert "\U0001d460\U0001d45c\U0001d453\U0001d461\U0001d45a\U0001d44e\U0001d465" in names and "relu" in names


def test_upright_names_and_letters() -> None:
    markup = tex_to_mathml(r"\mathrm{Attention} \mathrm{d}x \Sigma", False)
    mis = {e.text: e.get("mathvariant") for e in find_all(markup, "mi")}
    assert mis["Attention"] is None  # one multi-letter <mi>: upright by default
    assert mis["d"] == "normal"
    assert mis["\u03a3"] == "normal"  # capital Greek is upright in TeX
    assert mis["x"] is None


def test_operatorname_is_an_upright_name_with_function_spacing() -> None:
    markup = tex_to_mathml(r"\operatorname{softmax}(x) + \sin x", False)
    names = [e.text for e in find_all(markup, "mi")]
    assert "softmax" in names and "sin" in names
    # the invisible function application operator carries TeX's spacing between name and argument
    assert "\u2061" in [e.text for e in find_all(markup, "mo")]


def test_operatorname_with_non_letters_is_kept_whole() -> None:
    markup = tex_to_mathml(r"\operatorname{arg\,max}_x f", False)
    assert [e.text for e in find_all(markup, "mi")][0].replace("\u2009", " ") == "arg max"


def test_text_and_functions() -> None:
    markup = tex_to_mathml(r"\log \exp \sin \cos \text{if}", False)
    assert [e.text for e in find_all(markup, "mi")] == ["log", "exp", "sin", "cos"]
    assert [e.text for e in find_all(markup, "mtext")] == ["if"]


def test_symbols() -> None:
    markup = tex_to_mathml(r"a \cdot b \odot c \in \infty \sim d", False)
    assert [e.text for e in find_all(markup, "mo")] == ["\u22c5", "\u2299", "\u2208", "\u223c"]
    assert "\u221e" in [e.text for e in find_all(markup, "mi")]  # ∞ is ordinary, not an operator


@pytest.mark.parametrize("tex,colour", [
    (r"\color{red}{x}", "#FF0000"), (r"\textcolor{lightgreen}{x}", "#90EE90"),
    (r"\color{#ff8000} x", "#FF8000"), (r"\textcolor{#abc}{x}", "#AABBCC"), (r"{\color{coral} x}", "#FF7F50"),
])
def test_colours_are_styles(tex: str, colour: str) -> None:
    from labml_site.typeset.math import DARK_BACKGROUND, LIGHT_BACKGROUND, contrast, readable_colour

    styled = [e for e in parse(tex_to_mathml(tex, False)).iter() if "color:" in (e.get("style") or "")]
    light, dark = readable_colour(colour[1:], False), readable_colour(colour[1:], True)
    assert styled and styled[0].get("style") == f"color:#{light};--math-dark:#{dark};"
    rgb = lambda h: tuple(int(h[i:i + 2], 16) for i in (0, 2, 4))  # noqa: E731
    assert contrast(rgb(light), LIGHT_BACKGROUND) >= 3 and contrast(rgb(dark), DARK_BACKGROUND) >= 3
    import colorsys
    hue = lambda h: colorsys.rgb_to_hls(*(c / 255 for c in rgb(h)))[0]  # noqa: E731
    assert abs(hue(light) - hue(colour[1:])) < 0.02 and abs(hue(dark) - hue(colour[1:])) < 0.02  # hue kept


def test_a_bad_colour_is_refused() -> None:
    for tex in (r'\color{red" onclick="x}{y}', r"\color{nosuchcolour}{y}", r"\color{url(x)}{y}"):
        with pytest.raises(MathError):
            tex_to_mathml(tex, False)


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
    # (numbered and aligned environments add cells of their own: the margins and the number)
    assert all(len([td for td in row.findall(NS + "mtd") if len(td) and not td.get("id") and
                    not (len(td) == 1 and local(td[0]) == "mtext" and (td[0].text or "").startswith("("))])
               == cells for row in table_rows), tex


def test_align_is_numbered_only_when_asked() -> None:
    # numbers only when asked: the page's opt-in (`numbers`), or a \tag or \label in the formula
    assert "(1)" not in tex_to_mathml(r"\begin{align}a &= b \\ c &= d\end{align}", True)
    markup = tex_to_mathml(r"\begin{align}a &= b \\ c &= d\end{align}", True, numbers=True)
    assert [e.text for e in find_all(markup, "mtext")] == ["(1)", "(2)"]
    markup = tex_to_mathml(r"\begin{align}a &= b \label{x} \\ c &= d\end{align}", True)
    assert [e.text for e in find_all(markup, "mtext")] == ["(1)", "(2)"]  # as LaTeX numbers it
    assert "(1)" not in tex_to_mathml(r"\begin{align*}a &= b \\ c &= d\end{align*}", True, numbers=True)


def test_matrix_delimiters() -> None:
    def fences(tex: str) -> list[str]:
        return [e.text for e in find_all(tex_to_mathml(tex, True), "mo") if (e.text or "").strip("\u2063")]

    assert fences(r"\begin{pmatrix}1\end{pmatrix}") == ["(", ")"]
    assert fences(r"\begin{bmatrix}1\end{bmatrix}") == ["[", "]"]
    assert fences(r"\begin{cases}1\end{cases}") == ["{"]


# ------------------------------------------------------------------------------------------------
# Escaping


def test_special_characters_are_escaped_in_text_and_annotation() -> None:
    tex = r"a < b \text{ x < y \& z } \& c > d"
    markup = tex_to_mathml(tex, False)
    assert validate_mathml(markup, expected_tex=tex) == []
    assert "<annotation encoding=\"application/x-tex\">a &lt; b \\text{ x &lt; y \\&amp; z } \\&amp; c &gt; d</annotation>" in markup
    assert [e.text for e in find_all(markup, "mtext")][0].replace("\u00a0", " ").strip() == "x < y & z"
    assert "&lt;" in markup.split("<annotation")[0]  # the operator < is escaped too
    assert annotation_text(markup) == tex


def test_annotation_round_trips_through_an_html_parser() -> None:
    tex = r"\begin{align}a &= b \\ c &< d\end{align}"
    markup = tex_to_mathml(tex, True)
    raw = markup.split('encoding="application/x-tex">')[1].split("</annotation>")[0]
    assert html.unescape(raw) == tex


def test_text_escapes_are_resolved() -> None:
    markup = tex_to_mathml(r"\text{50\% of \$5 \& \#1}", False)
    assert "".join(e.text for e in find_all(markup, "mtext")).replace("\u00a0", " ") == "50% of $5 & #1"


# ------------------------------------------------------------------------------------------------
# Errors: never garbage, always a message that names the problem


@pytest.mark.parametrize("command", [r"\foo", r"\softmax", r"\Rbb"])
def test_unknown_command_is_refused_by_name(command: str) -> None:
    with pytest.raises(MathError) as error:
        tex_to_mathml(f"x + {command}{{y}}", True)
    assert command in str(error.value)
    assert "unknown command" in str(error.value)
    assert error.value.column == 5


def test_command_inside_text_is_refused() -> None:
    with pytest.raises(MathError, match=r"not valid in text mode \(at column 13"):
        tex_to_mathml(r"\text{angle \alpha}", False)


@pytest.mark.parametrize(
    "tex,column",
    [(r"{a", 3), (r"a}", 2), (r"\frac{a}{b", 11), (r"\frac{a}}{b}", 9), (r"x_{i", 5)],
)
def test_unbalanced_braces_are_refused_with_the_column(tex: str, column: int) -> None:
    with pytest.raises(MathError, match="closing token") as error:
        tex_to_mathml(tex, False)
    assert error.value.column == column


@pytest.mark.parametrize(
    "tex,fragment",
    [
        (r"\left( x", r'expected closing token "\right"'),
        (r"x \right)", r'unmatched closing token: "\right"'),
        (r"{\left( x} \right)", "closing token"),
        (r"\left x \right)", r'there must be a parenthesis after "\left"'),
        (r"\Bigg x", "there must be a parenthesis after"),
        (r"\begin{matrix} a \end{pmatrix}", "pmatrix"),
        (r"\begin{matrix} a", "reached end of input"),
        (r"\begin{tabular}{c} a \end{tabular}", 'unknown environment "tabular"'),
        (r"a & b", "table-like environment"),
        (r"\frac{a}", "expected argument"),
        (r"x^", "expected argument"),
        (r"x_a_b", "duplicate subscript"),
        (r"\newcommand{\RR}{\RR} \RR", "too many expansions"),
        (r"\def\a{\a\a} \a", "too many expansions"),
        (r"\href{javascript:alert(1)}{x}", r'unknown command "\href"'),
        (r"\style{color:red}{x}", r'unknown command "\style"'),
        (r"\class{x}{y}", r'unknown command "\class"'),
        (r"   ", "empty formula"),
        ("x\\", "unknown command"),
        (r"\@", r'unknown command "\@"'),
        (r"a $ b", 'unexpected "$"'),
        (r"#1", "macro parameter"),
        (r"5 % of x", r"write \% for a percent sign"),
        ("a\x00b", "U+0000"),
        (r"\unicode{x41}", r'unknown command "\unicode"'),
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
    # what the rewrites and markers touch
    r"\label{a}", r"\tag{1}", r"\eqref{a}", r"\newcommand{\q}{", r"\def\r#1{", "#1", r"\q", r"\r", "$",
    r"\text{", r"\colorbox{aqua}{", r"\fcolorbox{red}{blue}{", r"\smash{", r"\mathllap{", r"\rlap{", r"\\{",
    r"\\}", r"\textcolor{coral}{", r"\color{#abc}", r"\pmb{", r"\small", r"\large", r"\kern{1em}",
    r"\substack{", r"\begin{split}", r"\end{split}", r"\begin{smallmatrix}", r"\end{smallmatrix}",
    r"\begin{alignat}{2}", r"\end{alignat}", r"\Bigg.", r"\vec{v}", r"\left|", r"\right|", "\\\n",
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

        # align: the right-aligned cells end where the left-aligned cells after them start, but for
        # the relation's thick space (0.2778em, about 5px here): "a = b" as TeX sets it.
        gaps = tab.evaluate(
            "[...document.querySelectorAll('mtd')].filter(td => (td.getAttribute('style') || '').includes('text-align: right')"
            " && td.nextElementSibling && (td.nextElementSibling.getAttribute('style') || '').includes('text-align: left'))"
            ".map(td => td.nextElementSibling.firstElementChild.getBoundingClientRect().left"
            " - td.lastElementChild.getBoundingClientRect().right)"
        )
        assert gaps
        assert all(3.0 < gap < 7.0 for gap in gaps), str(gaps)
    finally:
        tab.close()


# ------------------------------------------------------------------------------------------------
# Numbering, labels and references


def test_tag_and_label_in_a_display_formula_number_it() -> None:
    markup = tex_to_mathml(r"E = mc^2 \tag{A} \label{energy}", True)
    cells = [e for e in parse(markup).iter(NS + "mtd") if e.get("id")]
    assert [c.get("id") for c in cells] == ["eq-energy"]
    assert [e.text for e in find_all(markup, "mtext")] == ["(A)"]
    with pytest.raises(MathError, match="numbered equation"):
        tex_to_mathml(r"x \label{a}", False)  # inline math is never numbered


def test_a_page_numbers_on_and_references_link_to_their_equation() -> None:
    from labml_site.typeset.math import typeset_page

    formulas = [
        (r"\eqref{second}", False),  # a forward reference
        (r"\begin{equation} a = b \end{equation}", True),
        (r"\begin{align} c &= d \label{second} \\ e &= f \end{align}", True),
        (r"\begin{gather} g \\ h \notag \end{gather}", True),
        (r"\ref{second} \foo", False),
    ]
    results = typeset_page(formulas, numbers=True)  # the page opted in
    assert isinstance(results[4], MathError)  # one bad formula leaves the others numbered
    link = [e for e in parse(results[0]).iter() if e.tag.endswith("a")]
    assert [a.get("href") for a in link] == ["#eq-second"] and link[0].text == "(2)"
    numbers = [[e.text for e in find_all(r, "mtext")] for r in results[1:4]]
    assert numbers == [["(1)"], ["(2)", "(3)"], ["(4)"]]
    assert all(validate_mathml(r, expected_tex=t) == [] for r, (t, _) in zip(results[:4], formulas))


def test_macros_expand_and_a_recursive_macro_is_an_error_not_a_hang() -> None:
    markup = tex_to_mathml(r"\newcommand{\RR}{\mathbb{R}} x \in \RR^n \def\sq#1{#1^2} \sq{y}", False)
    assert "\u211d" in "".join(e.text or "" for e in find_all(markup, "mi"))
    for tex in (r"\def\a{\a} \a", r"\def\a{\a\a} \a", r"\newcommand{\b}[1]{\b{#1}\b{#1}} \b{x}"):
        with pytest.raises(MathError, match="too many expansions"):
            tex_to_mathml(tex, True)
    page = tex_to_mathml(r"\R \cdot \half", False, (("R", r"\mathbb{R}"), ("half", r"\frac{1}{2}")))
    assert find_all(page, "mfrac")


@pytest.mark.parametrize("tex", [
    "{" * 5000 + "x" + "}" * 5000,
    r"\sqrt{" * 3000 + "x" + "}" * 3000,
    r"\sqrt" * 3000 + " x",
    "x^{" * 2000 + "2" + "}" * 2000,
    r"\left(" * 2000 + "x" + r"\right)" * 2000,
    r"\begin{matrix}" * 1000 + "x" + r"\end{matrix}" * 1000,
    "x+" * 20000,
    r"\def\a{" + r"\sqrt{" * 140 + r"\a" + "}" * 140 + r"} \a",  # 500 expansions of 140 levels
])
def test_parsing_is_bounded(tex: str) -> None:
    # math-core recurses once per level: unbounded, it would overflow the stack (a crash, not an
    # exception). Too deep or too long is a MathError naming the limit.
    with pytest.raises(MathError, match="nests more than|characters long|too many expansions"):
        tex_to_mathml(tex, True)


# ------------------------------------------------------------------------------------------------
# On the page: errors are findings with file, line and column, and visible escaped boxes


def test_a_failed_formula_is_a_finding_and_an_escaped_box_that_keeps_the_paragraph_whole() -> None:
    from labml_site.typeset.page import analyse

    source = '"""\n# T\n\nText $$\\frac{a}{<b>} \\foo$$ more text.\n\n$$\n\\alpha +\n\\bar\n$$\n\nInline $\\zzz$.\n"""\nx = 1\n'
    page = analyse("pkg/m.py", "pkg/m.html", source)
    body = "".join(block.english for section in page.sections for block in section.blocks)
    assert "<pre" not in body.split("more text")[0]  # inside the paragraph: a <code>, never <pre> in <p>
    assert '<code class="math-error"' in body and "\\frac{a}{&lt;b&gt;} \\foo" in body
    assert '<pre class="math-error"' in body  # a display formula alone in its paragraph
    errors = [f for f in page.findings if f.code == "math"]
    assert [(f.path, f.line) for f in errors] == [("pkg/m.py", 4), ("pkg/m.py", 9), ("pkg/m.py", 11)]
    assert "column 15" in errors[0].message and r"\foo" in errors[0].message
    assert "line 4, column 1" in errors[1].message  # \bar lacks its argument: the end of the formula
    assert r"\zzz" in errors[2].message


def test_page_macros_from_front_matter() -> None:
    from labml_site.typeset.page import analyse

    source = '"""\n---\ntitle: M\nmacros:\n  "\\\\RR": "\\\\mathbb{R}"\n  half: "\\\\frac{1}{2}"\n---\n\n$x \\in \\RR^n$, $\\half$\n"""\n'
    page = analyse("m.py", "m.html", source)
    assert not [f for f in page.findings if f.severity == "error"], page.findings
    body = "".join(block.english for section in page.sections for block in section.blocks)
    assert "\u211d" in body and "<mfrac>" in body


@pytest.mark.parametrize("tex,texts", [
    (r"\text{for $x > 0$ and $y$}", ["for", "and"]),
    (r"\textbf{if $a$ then}", ["if", "then"]),
])
def test_math_inside_text(tex: str, texts: list[str]) -> None:
    markup = tex_to_mathml(tex, False)
    assert validate_mathml(markup, expected_tex=tex) == []
    assert [e.text.strip() for e in find_all(markup, "mtext") if (e.text or "").strip()] == texts
    assert "x" in [e.text for e in find_all(markup, "mi")] or "a" in [e.text for e in find_all(markup, "mi")]


@pytest.mark.parametrize("tex", [
    r"\nu \in \\{1, 2, \dots, n \\}",  # a non-raw docstring's \{…\}
    r"\text{B\small{ERT}}(N) + \textbf{\small if } \text{\small E\scriptsize MPTY}",
    r"G^{*} = \arg \min_{G} \max_{D} V(D, G)",
    r"\textcolor{lightgreen}{\phi} + \color{coral} x",
    r"D(\pmb{x}) \mathop{\mathbb{E}}_{s' \sim \large{\varepsilon}} \Big[ r \Big]",
    "\\lVert F(x) \\rVert_1\\\n  \\lVert G(y) \\rVert_1",  # "\" + newline: a control space
])
def test_what_the_real_corpus_writes_converts(tex: str) -> None:
    for display in (False, True):
        markup = tex_to_mathml(tex, display)
        assert validate_mathml(markup, expected_tex=tex) == []
        rendered = "".join(presentation(markup).itertext())
        assert not re.search(r"\\[A-Za-z]", rendered), rendered
    braces = [e.text for e in find_all(tex_to_mathml(r"\nu \in \\{1, 2 \\}", False), "mo")]
    assert "{" in braces and "}" in braces


def test_ref_is_the_bare_number_and_a_label_defined_twice_is_an_error() -> None:
    from labml_site.typeset.math import typeset_page

    first, reference, again = typeset_page([
        (r"\begin{equation} a \label{x} \end{equation}", True),
        (r"\text{see } \ref{x} \text{ and } \eqref{x}", False),
        (r"\begin{equation} b \label{x} \end{equation}", True),
    ])
    assert 'id="eq-x"' in first
    links = [a for a in parse(reference).iter() if a.tag.endswith("}a") or a.tag == "a"]
    bare, with_parentheses = [a.text for a in links]
    assert with_parentheses == f"({bare})" and bare.isdigit()  # \ref is the number, \eqref "(number)"
    assert all(a.get("href") == "#eq-x" for a in links)
    assert isinstance(again, MathError) and r"\label{x} is already defined" in str(again)
    with pytest.raises(MathError, match="defined twice"):
        tex_to_mathml(r"\begin{align} a \label{y} \\ b \label{y} \end{align}", True)


def test_smallmatrix_is_a_matrix_in_script_size_and_arrays_keep_their_width() -> None:
    small = find_all(tex_to_mathml(r"\begin{smallmatrix} a & b \\ c & d \end{smallmatrix}", False), "mtable")
    assert small[0].get("scriptlevel") == "1"
    array = tex_to_mathml(r"\begin{array}{cc} a & b \end{array}", True)
    assert "width: 100%" not in array and presentation(array).tag == NS + "mrow"  # centred, not spread


@pytest.mark.parametrize("macros", [(("a b", "x"),), (("", "x"),), (("R", r"\foo{"),)])
def test_a_bad_page_macro_is_a_math_error(macros: tuple) -> None:
    with pytest.raises(MathError, match="page macro"):
        tex_to_mathml(r"x \R", False, macros)


def test_a_panic_in_the_converter_is_a_math_error_not_a_crash() -> None:
    from unittest import mock

    from labml_site.typeset import math as typeset_math

    class PanicException(BaseException):  # what pyo3 raises for a Rust panic
        pass

    failing = mock.Mock(convert_with_local_state=mock.Mock(side_effect=PanicException("boom")))
    with mock.patch.object(typeset_math, "_converter", return_value=failing):
        with pytest.raises(MathError, match="converter failed"):
            typeset_math.tex_to_mathml.__wrapped__("x + 1", False)


def _grouped_by_hand(tex: str, start: int, end: int, marks: str) -> list[tuple[int, str, int]]:
    """TeX's groups read one character at a time: what braces.grouped must give."""
    found, depth, i = [], 0, start
    while i < end:
        c = tex[i]
        if c == "\\":
            found.append((i, c, depth))
            i += 2
            continue
        depth += (c == "{") - (c == "}")
        if c in "{}" or c in marks:
            found.append((i, c, depth))
        i += 1
    return found


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab{}\\&$ \n", max_size=40), st.integers(0, 40), st.integers(0, 40), st.sampled_from(["", "&", "$"]))
def test_the_group_walk_reads_as_one_character_at_a_time(tex: str, start: int, end: int, marks: str) -> None:
    from labml_site.typeset.braces import grouped

    start, end = min(start, len(tex)), min(max(start, end), len(tex))
    assert list(grouped(tex, start, end, marks)) == _grouped_by_hand(tex, start, end, marks)


def _row_cells_by_hand(tex: str, start: int, wanted: int) -> list[int]:
    """The first `wanted` cells of the row at `start`, read one character at a time."""
    cells, depth, i = [start], 0, start
    while i < len(tex) and len(cells) < wanted:
        c = tex[i]
        if c == "\\":
            if depth == 0 and (tex.startswith("\\\\", i) or tex.startswith("\\end", i)):
                break
            i += 2
            continue
        depth += (c == "{") - (c == "}")
        if depth < 0:
            break
        if c == "&" and depth == 0:
            cells.append(i + 1)
        i += 1
    return cells


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from([r"\cline{1-2}", "&", r"\\", "{", "}", "x", r"\&", r"\end{array}"]), max_size=30),
       st.lists(st.tuples(st.integers(0, 200), st.integers(1, 5)), max_size=8))
def test_a_rows_cells_are_those_read_by_hand(parts: list[str], asked: list[tuple[int, int]]) -> None:
    from labml_site.typeset.math_katex import _Rows

    tex = "".join(parts)
    rows = _Rows(tex)
    ends = sorted({m.end() for m in re.finditer(r"\}", tex)} | {min(a, len(tex)) for a, _ in asked})
    for start, (_, wanted) in zip(ends, asked * (len(ends) // max(1, len(asked)) + 1)):  # in order, as `rewrites` asks
        assert rows.cells(start, wanted) == _row_cells_by_hand(tex, start, wanted)
