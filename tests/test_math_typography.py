"""Typography as TeX sets it: spacing classes, limits, norms, sized delimiters, names, numbering.

One page of cases (`CASES`, formulas of our own) is the visual regression test: the tests below
check the MathML structure that makes each case right, and, in Chromium, measure the gaps and
heights that show it. `python tests/test_math_typography.py` (or the browser test) writes the
page and its screenshot to artifacts/ (gitignored) to look at.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from labml_site.typeset.math import MATHML_NS, MathError, tex_to_mathml, typeset_page

REPO = Path(__file__).resolve().parent.parent
MATH_CSS = REPO / "labml_site" / "theme" / "static" / "math.css"
ARTIFACTS = REPO / "artifacts"
NS = f"{{{MATHML_NS}}}"

# (id, TeX, display, what to look for)
CASES = [
    ("abs", r"|a| + |b - c|", False, "bars hug their contents: ordinary |, no operator space"),
    ("cond", r"q(x_t | x_{t-1})", False, "| in a conditional is ordinary too"),
    ("mid", r"\{ x \mid x > 0 \}", False, r"\mid is a relation: thick spaces"),
    ("unary", r"\exp(-\infty) + (-1)^n - x", False, "unary minus tight, binary minus spaced"),
    ("slash", r"a / b + \mathbb{R}^n / G", False, "/ is ordinary: no spaces"),
    ("punct", r"f(x, y); \; g(z)", False, "comma and semicolon: space after only"),
    ("accents", r"\hat{y} + \tilde{x} + \bar{z} + \vec{v} + \dot{q} + \widehat{abc}", False, "accents sit on their base"),
    ("limits", r"\sum_{i=1}^{n} x_i \quad \lim_{n \to \infty} a_n \quad \max_{\theta} f \quad \arg\min_{w} L \quad \operatorname*{argmax}_{y} g", True, "limits under/over in display"),
    ("limits-inline", r"\sum_{i=1}^{n} x_i, \lim_{n \to \infty} a_n, \max_{\theta} f, \arg\min_{w} L", False, "inline: limits at the side"),
    ("norms", r"\lVert x \rVert_2 + \left\lVert \frac{W}{2} \right\rVert_F + \| v \|", True, "left and right bars the same size"),
    ("sized", r"\bigg( \frac{a}{b} \bigg)^2 + \Big\Vert x \Big\Vert_2 + \Bigg[ \sum_i y_i \Bigg]_{i}^{n}", True, "sized delimiters keep their size with a script"),
    ("names", r"\mathop{softmax}(x) + \operatorname{relu}(z) + \sin x + \mathop{\mathbb{E}}_{x \sim p} [x]", True, "\\mathop{name} in math italic, as TeX; \\operatorname upright; \\mathop limits under in display"),
    ("subscripts", r"d_{model} + W^{out}_{h} + x_{ij}", False, "multi-letter subscripts one italic name"),
    ("sqrt-sum", r"\sqrt{\sum_{i=1}^{n} x_i^2} = \frac{1}{\sqrt{d_k}}", True, "a display \\sum inside \\sqrt keeps its limits under"),
    ("text", r"\text{if } x > 0 \text{ and } \textbf{else} \text{ E\small{NCODER}}", False, "text upright, small caps by \\small"),
    ("colour", r"\textcolor{lightgreen}{\phi(k)} + \color{#cc3300} y", False, "CSS colour names and #rrggbb"),
    ("fences", r"\left( x \right) + \left\langle q, k \right\rangle + \left( \frac{a}{b} \right) + \left[ \sum_i x_i \right]", True, "\\left…\\right hugs short content, stretches round tall"),
    ("boxes", r"\colorbox{aqua}{$F=ma$} + \fcolorbox{red}{lightyellow}{text} + \boxed{x} + \cancel{y}", False, "coloured and framed boxes"),
    ("size", r"\mathop{\mathbb{E}}_{s' \sim \large{\varepsilon}} [x] + a {\Large b} c", True, "math-mode sizes: \\large ε at 1.2 × the text size, in a limit too"),
    ("matrix-align", r"\begin{pmatrix*}[r] 10 & -2 \\ 3 & 40 \end{pmatrix*} \begin{bmatrix*}[l] 1 & 200 \\ 30 & 4 \end{bmatrix*}", True, "matrix*: the columns aligned right, left"),
    ("widehat", r"\widehat{a} + \widehat{ab} + \widehat{abc} + \widehat{A} + \hat{y}", True, "\\widehat over one, two, three letters in display; over one italic letter moved right by its skew, as TeX"),
    ("fences-tall", r"x \left( \frac{a}{b} \right) y + \left[ \sum_i x_i \right]", True, "\\left…\\right round tall content: no gap beside"),
    ("fences-inline", r"x \left( \frac{a}{b} \right) + \left( \tfrac{1}{2} \right) y + \left[ \frac{a^2}{b} \right] + \left( \dfrac{1}{2} \right)", False, "\\left…\\right round an inline fraction: TeX's delimiter size (1.2 em; 1.8 round a script; \\dfrac as in display, 2.4), no gap beside"),
    ("above", r"{a \above 1pt b} + \genfrac{}{}{2pt}{}{x}{y}", True, "\\above and \\genfrac with a rule of their own thickness"),
    ("cd", r"\begin{CD} A @>f>> B \\ @VgVV @AAhA \\ C @<<k< D \\ @| @. \\ C @= C \end{CD}", True, "amscd: objects and labelled arrows"),
    ("cline-multicolumn", r"\begin{array}{c|c|c} \multicolumn{3}{c}{\text{head}} \\ \hline a & b & c \\ \cline{2-3} d & \multicolumn{2}{r}{e} \end{array}", True, "\\multicolumn spans its cells, \\cline rules part of a row"),
    ("raisebox", r"a\raisebox{0.5em}{b}c + x\raisebox{-0.3em}{$y^2$ z}w", False, "\\raisebox lifts text and math"),
    ("textcircled-stacked", r"\text{\textcircled a \textcircled{7}} + \textsf{\textbf{Sans bold}} + \texttt{\textit{mono italic}}", False, "enclosed letters and numbers; stacked text fonts"),
    ("macro-primitives", r"\def\b{xy}\expandafter\hat\b + \noexpand\alpha + \futurelet\c\beta\gamma + \@ifstar{s}{n}* \@ifstar{s}{n}", False, "\\expandafter, \\noexpand, \\futurelet, \\@ifstar as KaTeX expands them"),
    ("laps", r"{=}\mathllap{/\,} \quad \mathrlap{\,/}{=} \quad \sum_{\mathclap{1\le i\le j\le n}} x_{ij} \quad \left(x^{\smash{2}}\right)", True, "overlaps: ≠ both ways, a wide limit not widening the sum, a smashed exponent"),
]
NUMBERED = [
    ("numbered", r"\begin{align} a &= b + c \label{sum} \\ d &= e \end{align}", True, "numbers at the right"),
    ("tagged", r"E = mc^2 \tag{*}", True, "a tag"),
    ("ref", r"\text{by } \eqref{sum}", False, "a link to (1)"),
]


def _markup() -> dict[str, str]:
    out = {case_id: tex_to_mathml(tex, display) for case_id, tex, display, _ in CASES}
    numbered = typeset_page([(tex, display) for _, tex, display, _ in NUMBERED])
    out.update({case_id: markup for (case_id, _, _, _), markup in zip(NUMBERED, numbered)})
    return out


def _tree(markup: str) -> ElementTree.Element:
    return ElementTree.fromstring(markup).find(f"{NS}semantics")[0]


def _mos(markup: str) -> list[ElementTree.Element]:
    return list(_tree(markup).iter(NS + "mo"))


def page_html() -> str:
    markup = _markup()
    rows = []
    for case_id, tex, display, note in CASES + NUMBERED:
        rows.append(
            f'<tr><th>{case_id}</th><td class="f" id="{case_id}">{markup[case_id]}</td><td class="n">{note}</td></tr>'
        )
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        f'<link rel="stylesheet" href="{MATH_CSS.as_uri()}">'
        "<style>body{font:18px/1.5 serif;margin:12px;width:1100px}th{text-align:left;font:12px sans-serif;"
        "vertical-align:middle;width:6em}td.n{font:12px sans-serif;color:#555;width:16em}"
        "td.f{width:760px}tr{border-bottom:1px solid #ddd}table{border-collapse:collapse}</style>"
        "</head><body><table>" + "".join(rows) + "</table></body></html>"
    )


# ------------------------------------------------------------------------------------------------
# Structure


def test_bars_and_slash_are_ordinary_and_mid_is_a_relation() -> None:
    markup = _markup()
    for case_id in ("abs", "cond", "slash"):
        for mo in _mos(markup[case_id]):
            if mo.text in ("|", "/"):
                assert (mo.get("lspace"), mo.get("rspace")) == ("0", "0"), (case_id, mo.attrib)
    mid = [mo for mo in _mos(markup["mid"]) if mo.text == "\u2223"]
    assert mid and mid[0].get("lspace") is None  # the operator dictionary's relation spacing


def test_unary_minus_is_tight_and_binary_minus_spaced() -> None:
    minus = [mo for mo in _mos(_markup()["unary"]) if mo.text == "\u2212"]
    assert [(m.get("lspace"), m.get("rspace")) for m in minus] == [("0", "0"), ("0", "0"), (None, None)]


def test_limits_under_in_display_at_the_side_inline() -> None:
    markup = _markup()
    display = _tree(markup["limits"])
    assert len(list(display.iter(NS + "munderover"))) == 1  # \sum
    assert len(list(display.iter(NS + "munder"))) == 4  # \lim \max \arg\min(the min) \operatorname*
    inline = _tree(markup["limits-inline"])
    for element in inline.iter():
        if element.tag in (NS + "munder", NS + "munderover"):
            assert element[0].get("movablelimits") != "false"  # moves to the side in text style


def test_norm_bars_pair_and_sized_delimiters_with_scripts_are_wrapped() -> None:
    markup = _markup()
    bars = [mo for mo in _mos(markup["norms"]) if mo.text == "\u2016"]
    assert [b.get("form") for b in bars[:2]] == ["prefix", "postfix"]
    for script in _tree(markup["sized"]).iter():
        if script.tag in (NS + "msup", NS + "msub", NS + "msubsup") and script[0].tag == NS + "mrow":
            mo = script[0][0]
            assert mo.get("minsize") and mo.get("stretchy") == "true" and mo.get("symmetric") == "true"
    wrapped = [s for s in _tree(markup["sized"]).iter() if s.tag in (NS + "msup", NS + "msub", NS + "msubsup")
               and s[0].tag == NS + "mrow" and s[0][0].get("minsize")]
    assert len(wrapped) == 3


def test_sized_delimiters_give_back_the_width_chromium_adds() -> None:
    # Chromium boxes a stretchy operator at its widest variant's width and centres the glyph:
    # \big( (the 1445-unit variant, 0.523em wide, in a 0.875em box) gets -0.176em each side.
    mo = _mos(tex_to_mathml(r"\big( x \big)", False))[0]
    assert mo.get("style") == "margin-left:-0.176em;margin-right:-0.176em;"
    assert _mos(tex_to_mathml(r"\Bigg( x \Bigg)", False))[0].get("style") is None  # widest: nothing to give


def test_names_upright_and_multi_letter_subscripts_one_identifier() -> None:
    markup = _markup()
    names = [mi.text for mi in _tree(markup["names"]).iter(NS + "mi")]
    assert {"\U0001d460\U0001d45c\U0001d453\U0001d461\U0001d45a\U0001d44e\U0001d465", "relu", "sin"} <= set(names)  # \mathop italic
    assert list(_tree(markup["names"]).iter(NS + "munder"))  # \mathop{\mathbb{E}}_{…} in display
    subscripts = _tree(markup["subscripts"])
    assert [len(s[1]) for s in subscripts.iter(NS + "msub")] == [0, 0]  # one <mi>, not an <mrow>
    assert subscripts[0][1].text == "\U0001d45a\U0001d45c\U0001d451\U0001d452\U0001d459"


def test_math_mode_sizes_scale_from_the_text_size_in_scripts_too() -> None:
    tree = _tree(_markup()["size"])
    sized = [(style.get("scriptlevel"), style[0].get("style")) for style in tree.iter(NS + "mstyle")]
    assert sized == [("0", "font-size:1.2em;"), ("0", "font-size:1.44em;")]
    under = next(tree.iter(NS + "munder"))
    assert any(element.text == "\u03b5" for element in under[1].iter(NS + "mstyle") for element in element.iter())
    # inside \text math-core sizes the text itself
    assert "font-size:120%" in tex_to_mathml(r"\text{\large a}", False)


def test_a_size_command_reaches_to_the_end_of_its_group_only() -> None:
    tree = _tree(tex_to_mathml(r"{a \large b} c", False))
    style = next(tree.iter(NS + "mstyle"))
    assert [mi.text for mi in style.iter(NS + "mi")] == ["b"]  # b, not c
    cells = _tree(tex_to_mathml(r"\begin{matrix} \small a & b \\ c & d \end{matrix}", True))
    assert [[mi.text for mi in s.iter(NS + "mi")] for s in cells.iter(NS + "mstyle")] == [["a"]]


def test_fences_round_a_fraction_give_back_the_width_chromium_adds() -> None:
    # \left( \frac{a}{b} \right) in display: the 1.79em variant (0.597em wide) in a 0.875em box
    mos = [mo for mo in _mos(_markup()["fences-tall"]) if mo.text in "()"]
    assert [mo.get("style") for mo in mos] == ["margin-left:-0.139em;margin-right:-0.139em;"] * 2
    assert mos[0].get("lspace") == "0.1667em" and mos[1].get("rspace") == "0.1667em"  # Ord–Inner kept
    sum_ = [mo for mo in _mos(_markup()["fences-tall"]) if mo.text in "[]"]
    assert [mo.get("style") for mo in sum_] == [None, None]  # round a \sum: its height is not known here
    short = _mos(tex_to_mathml(r"x \left( a \right) y", False))
    assert [mo.get("stretchy") for mo in short if mo.text in "()"] == ["false", "false"]  # after an Ord too


def test_fences_round_an_inline_fraction_are_held_at_texs_size() -> None:
    # TeX's size (\delimiterfactor 901, \delimitershortfall 0.5 em) of its 1.2/1.8/2.4/3 em ladder,
    # held with minsize = maxsize (Chromium would take its larger covering variant), the box of the
    # widest variant given back: the 1.195 em paren is 0.458 em wide in a 0.875 em box
    mos = [mo for mo in _mos(_markup()["fences-inline"]) if mo.text in "()[]"]
    assert [(mo.text, mo.get("minsize"), mo.get("maxsize"), mo.get("style")) for mo in mos] == [
        ("(", "1.19em", "1.19em", "margin-left:-0.208em;margin-right:-0.208em;"),
        (")", "1.19em", "1.19em", "margin-left:-0.208em;margin-right:-0.208em;"),
        ("(", "1.19em", "1.19em", "margin-left:-0.208em;margin-right:-0.208em;"),  # \tfrac
        (")", "1.19em", "1.19em", "margin-left:-0.208em;margin-right:-0.208em;"),
        ("[", "1.79em", "1.79em", "margin-left:-0.098em;margin-right:-0.098em;"),  # a², taller: 1.8 em
        ("]", "1.79em", "1.79em", "margin-left:-0.098em;margin-right:-0.098em;"),
        ("(", "2.39em", "2.39em", "margin-left:-0.070em;margin-right:-0.070em;"),  # \dfrac{1}{2}: as in display
        (")", "2.39em", "2.39em", "margin-left:-0.070em;margin-right:-0.070em;"),
    ]
    display = [mo for mo in _mos(tex_to_mathml(r"\left( \frac{1}{2} \right)", True)) if mo.text in "()"]
    assert {mo.get("minsize") for mo in display} == {"2.39em"}  # digits reach higher than a: 2.4 em


def test_above_is_a_fraction_with_its_own_rule() -> None:
    fractions = [f.get("linethickness") for f in _tree(_markup()["above"]).iter(NS + "mfrac")]
    assert fractions == ["0.1em", "0.2em"]  # 1pt, 2pt of a 10pt font, as KaTeX (math-core wrote rem)
    tree = _tree(tex_to_mathml(r"x + {a + b \above 2pt c} + y", False))
    frac = next(tree.iter(NS + "mfrac"))
    assert [mi.text for mi in frac[0].iter(NS + "mi")] == ["a", "b"] and frac[1].text == "c"  # its group only
    assert [mi.text for mi in tree.iter(NS + "mi")][-1] == "y"


def test_cd_is_a_table_of_objects_and_labelled_arrows() -> None:
    table = next(_tree(_markup()["cd"]).iter(NS + "mtable"))
    rows = [[("".join(td.itertext())).strip() for td in tr] for tr in table]
    assert rows[0][0] == "A" and rows[0][2] == "B" and "\u2192" in rows[0][1] and "f" in rows[0][1]
    assert "\u2193" in rows[1][0] and "g" in rows[1][0] and "\u2191" in rows[1][2] and "h" in rows[1][2]
    assert "\u2190" in rows[2][1] and "k" in rows[2][1]  # @<<k<: the label under
    assert "\u2016" in rows[3][0] and "=" in rows[4][1]  # @| and @=
    assert {len(r) for r in rows} <= {1, 3}


def test_multicolumn_spans_and_cline_rules_part_of_a_row() -> None:
    rows = list(next(_tree(_markup()["cline-multicolumn"]).iter(NS + "mtable")))
    head = rows[0][0]
    assert head.get("columnspan") == "3" and "border-right" not in head.get("style")  # not the columns' rules
    assert [("border-top" in (td.get("style") or "")) for td in rows[2]] == [False, True]  # \cline{2-3}: d | e…
    assert rows[2][1].get("columnspan") == "2" and "text-align: right" in rows[2][1].get("style")
    # not after \\ (the first row) or a range outside the row: nothing drawn, nothing refused
    assert "border-top" not in tex_to_mathml(r"\begin{array}{cc} a & b \end{array}", True)
    assert "border-top" in tex_to_mathml(r"\begin{array}{cc} a & b \\ \cline{1-9} c & d \end{array}", True)


def test_raisebox_lifts_text_and_math() -> None:
    pads = [(p.get("voffset"), "".join(p.itertext())) for p in _tree(_markup()["raisebox"]).iter(NS + "mpadded")]
    assert pads == [("0.5em", "b"), ("-0.3em", "y2\u00a0z")]
    assert 'voffset="0.2em"' in tex_to_mathml(r"\raisebox{2pt}{a}", False)  # pt of the font size, as KaTeX


def test_textcircled_and_stacked_text_fonts() -> None:
    tree = _tree(_markup()["textcircled-stacked"])
    assert "\u24d0" in "".join(tree.itertext()) and "\u2466" in "".join(tree.itertext())  # ⓐ ⑦
    rows = {row.get("class"): [(t.get("mathvariant"), t.text) for t in row.iter(NS + "mtext")]
            for row in tree.iter(NS + "mrow") if row.get("class")}
    assert rows == {"text-sans": [("bold", "Sans\u00a0bold")], "text-mono": [("italic", "mono\u00a0italic")]}
    with pytest.raises(MathError, match="one letter or a number"):
        tex_to_mathml(r"\textcircled{xyz}", False)  # no enclosed form: an error, not a wrong glyph
    for tex, says in ((r"\multicolumn{2}{p}{a}", "l, c or r"), (r"{a \above b}", "thickness"), (r"\cline{x}", "{i-j}")):
        with pytest.raises(MathError, match=re.escape(says)):
            tex_to_mathml(tex, False)  # not in the form rewritten: the error says what the form is


def test_macro_primitives_expand_as_katex() -> None:
    text = [e.text for e in _tree(_markup()["macro-primitives"]).iter() if e.text and e.text.strip()]
    assert text[:3] == ["x", "\u02c6", "y"]  # \expandafter\hat\b: \hat over the first token of \b's body
    assert "\u03b1" in text and text.count("s") == 1 and "n" in text
    assert "\u03b2" in text and "\u03b3" in text
    assert "<mi>y</mi>" in tex_to_mathml(r"\def\b{x}\noexpand\b y", False)
    assert "<mi>x</mi>" not in tex_to_mathml(r"\def\b{x}\noexpand\b y", False)  # a macro: \relax, nothing


def test_expandafter_and_noexpand_know_the_pages_macros() -> None:
    macros = (("RR", r"\mathbb{R}"), ("pair", r"(#1)"))
    markup = tex_to_mathml(r"\expandafter\hat\RR + \noexpand\RR x", False, macros)
    assert "<mover" in markup and "\u211d" in markup and markup.count("\u211d") == 1  # \noexpand\RR: nothing
    # with parameters: \expandafter is dropped and math-core expands \pair{a} as usual
    dropped = tex_to_mathml(r"\expandafter\relax\pair{a}", False, macros)
    plain = tex_to_mathml(r"\relax\pair{a}", False, macros)
    assert dropped.split("<annotation")[0] == plain.split("<annotation")[0] and ">(</mo><mi>a</mi>" in plain


def test_expansion_primitives_are_bounded() -> None:
    # each \expandafter puts one body in once; past math_katex.MAX_GROWTH characters it is only
    # dropped (\b is then math-core's to expand, under its expansion limit)
    from labml_site.typeset import math_katex

    body = "x" * 1000
    tex = rf"\def\b{{{body}}}" + r"\expandafter\relax\b" * 40
    added = sum(len(text) - (end - start) for start, end, text in math_katex.rewrites(tex, True))
    assert 0 < added <= math_katex.MAX_GROWTH
    assert tex_to_mathml(tex, False).count("<mi>x</mi>") == 40_000  # what TeX sets
    # thousands of commands that each scan a row or a group: bounded work, not seconds
    import time

    for tex in (r"\begin{array}{c} a \\ " + r"\cline{1-1}" * 1500 + r" b \end{array}", r"{a \above 1pt b}" * 1200,
                r"\multicolumn{1}{c}{" * 140 + "a" + "}" * 140):
        started = time.process_time()
        try:
            tex_to_mathml(tex, True)
        except MathError:
            pass
        assert time.process_time() - started < 1.0
    with pytest.raises(MathError, match="paragraph"):
        tex_to_mathml(r"a \par b", False)


def test_starred_matrices_keep_their_column_alignment() -> None:
    tree = _tree(_markup()["matrix-align"])
    tables = list(tree.iter(NS + "mtable"))
    assert len(tables) == 2
    assert {td.get("style") for td in tables[0].iter(NS + "mtd")} == {"text-align: right;justify-items: end;"}
    assert {td.get("style") for td in tables[1].iter(NS + "mtd")} == {"text-align: left;justify-items: start;"}
    assert [mo.text for mo in tree.iter(NS + "mo") if mo.text in "()[]"] == ["(", ")", "[", "]"]
    plain = _tree(tex_to_mathml(r"\begin{vmatrix*} a & b \\ c & d \end{vmatrix*}", True))
    assert {td.get("style") for td in plain.iter(NS + "mtd")} == {None}  # centred, as vmatrix


def test_an_accent_over_one_italic_letter_moves_right_by_its_skew() -> None:
    accents = {mo.text: mo.get("style") for mo in _mos(_markup()["widehat"]) if mo.text in "\u0302\u02c6"}
    assert accents["\u02c6"] == "margin-left:0.056em;margin-right:-0.056em;"  # \hat{y}: y's skew
    hats = [mo.get("style") for mo in _mos(_markup()["widehat"]) if mo.text == "\u0302"]
    assert hats == [None, None, None, "margin-left:0.139em;margin-right:-0.139em;"]  # only over the one letter A
    assert "margin" not in tex_to_mathml(r"\hat{h}", False)  # h has no skew
    assert "margin" not in tex_to_mathml(r"\overline{x} + \overbrace{A}", False)  # not accents: centred


def test_numbered_equations_have_anchors_and_links() -> None:
    markup = _markup()
    cells = [td for td in _tree(markup["numbered"]).iter(NS + "mtd") if td.get("id")]
    assert [td.get("id") for td in cells] == ["eq-sum"]
    assert "(*)" in markup["tagged"]
    assert '<a href="#eq-sum">(1)</a>' in markup["ref"]


# ------------------------------------------------------------------------------------------------
# In Chromium: what the structure is for


def _write_page() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    page = ARTIFACTS / "math-typography.html"
    page.write_text(page_html(), encoding="utf-8")
    return page


GAPS = """
(caseId) => {
  const math = document.getElementById(caseId).querySelector('math');
  const leaves = [...math.querySelectorAll('mi, mn, mo, mtext')].filter(e => e.closest('annotation') === null
    && e.getBoundingClientRect().width > 0);
  return leaves.map(e => { const r = e.getBoundingClientRect();
    return [e.tagName, e.textContent, r.left, r.right, r.top, r.bottom]; });
}
"""


@pytest.mark.browser
def test_chromium_spaces_and_sizes_like_tex(browser) -> None:
    page = _write_page()
    tab = browser.new_page(viewport={"width": 1130, "height": 900})
    try:
        tab.goto(page.as_uri())
        tab.evaluate("document.fonts.ready")
        tab.screenshot(path=str(ARTIFACTS / "math-typography.png"), full_page=True)

        def leaves(case_id: str) -> list[list]:
            return tab.evaluate(GAPS, case_id)

        def gap_after(items: list[list], index: int) -> float:
            return items[index + 1][2] - items[index][3]

        em = 18 * 1.1  # math.css sets math at 1.1em of the 18px body
        abs_ = leaves("abs")
        assert abs_[0][1] == "|" and gap_after(abs_, 0) < 0.06 * em and gap_after(abs_, 1) < 0.06 * em
        cond = leaves("cond")
        bar = next(i for i, leaf in enumerate(cond) if leaf[1] == "|")
        assert gap_after(cond, bar - 1) < 0.1 * em and gap_after(cond, bar) < 0.1 * em
        mid = leaves("mid")
        bar = next(i for i, leaf in enumerate(mid) if leaf[1] == "\u2223")
        assert gap_after(mid, bar - 1) > 0.2 * em and gap_after(mid, bar) > 0.2 * em
        unary = leaves("unary")
        first_minus = next(i for i, leaf in enumerate(unary) if leaf[1] == "\u2212")
        assert gap_after(unary, first_minus) < 0.06 * em
        last_minus = max(i for i, leaf in enumerate(unary) if leaf[1] == "\u2212")
        assert gap_after(unary, last_minus - 1) > 0.15 * em and gap_after(unary, last_minus) > 0.15 * em
        slash = leaves("slash")
        at = next(i for i, leaf in enumerate(slash) if leaf[1] == "/")
        assert gap_after(slash, at - 1) < 0.06 * em and gap_after(slash, at) < 0.06 * em

        norms = [leaf for leaf in leaves("norms") if leaf[1] == "\u2016"]
        assert abs((norms[0][5] - norms[0][4]) - (norms[1][5] - norms[1][4])) < 1.0  # same height

        sized = leaves("sized")
        opening = next(leaf for leaf in sized if leaf[1] == "(")
        closing = next(leaf for leaf in sized if leaf[1] == ")")
        assert (closing[5] - closing[4]) > 0.9 * (opening[5] - opening[4])  # \bigg)^2 stays big
        bars = [leaf for leaf in sized if leaf[1] == "\u2016"]
        assert abs((bars[0][5] - bars[0][4]) - (bars[1][5] - bars[1][4])) < 1.0  # \Big\Vert_2 too

        limits = leaves("limits")
        sigma = next(leaf for leaf in limits if leaf[1] == "\u2211")
        lower = next(leaf for leaf in limits if leaf[1] == "i")
        assert lower[4] >= sigma[5] - 1  # i=1 below the sigma, not beside it
        inline = leaves("limits-inline")
        sigma = next(leaf for leaf in inline if leaf[1] == "\u2211")
        lower = next(leaf for leaf in inline if leaf[1] == "i")
        assert lower[2] >= sigma[3] - 1  # beside it inline

        root = leaves("sqrt-sum")
        sigma = next(leaf for leaf in root if leaf[1] == "\u2211")
        lower = next(leaf for leaf in root if leaf[1] == "i")
        assert lower[4] >= sigma[5] - 1  # under the sigma inside the display \sqrt

        fences = leaves("fences")
        assert gap_after(fences, 0) < 0.1 * em and gap_after(fences, 1) < 0.1 * em  # "(x)", not "( x )"
        brackets = [leaf for leaf in fences if leaf[1] in "[]"]
        assert (brackets[0][5] - brackets[0][4]) > 1.5 * em  # round a display \sum: stretched

        inline = leaves("fences-inline")
        x_leaf = next(i for i, leaf in enumerate(inline) if leaf[1] == "x")
        assert abs(inline[x_leaf + 1][4] - inline[x_leaf + 1][5]) < 1.3 * em  # the paren at 1.2 em, not taller

        size = leaves("size")
        prime_s = next(leaf for leaf in size if leaf[1] == "s")
        epsilon = next(leaf for leaf in size if leaf[1] == "\u03b5")
        assert (epsilon[5] - epsilon[4]) > 1.4 * (prime_s[5] - prime_s[4])  # text size × 1.2, not script size

        matrix = leaves("matrix-align")
        ten, three = (next(leaf for leaf in matrix if leaf[1] == t) for t in ("10", "3"))
        assert abs(ten[3] - three[3]) < 1 and three[2] > ten[2] + 2  # right-aligned column
        one, thirty = (next(leaf for leaf in matrix if leaf[1] == t) for t in ("1", "30"))
        assert abs(one[2] - thirty[2]) < 1  # left-aligned column

        # \multicolumn{3}: the head's cell as wide as the three below it; \cline{2-3}: a rule on 2 and 3
        cells = tab.evaluate("""() => [...document.querySelectorAll('#cline-multicolumn mtr')].map(tr =>
            [...tr.children].map(td => { const r = td.getBoundingClientRect();
              return [r.left, r.right, getComputedStyle(td).borderTopWidth]; }))""")
        assert abs(cells[0][0][0] - cells[1][0][0]) < 1 and abs(cells[0][0][1] - cells[1][2][1]) < 1
        assert [float(c[2][:-2]) > 0 for c in cells[2]] == [False, True]
        assert abs(cells[2][1][1] - cells[1][2][1]) < 1  # \multicolumn{2}: e's cell to the last column
        raised = leaves("raisebox")
        a, b = next(leaf for leaf in raised if leaf[1] == "a"), next(leaf for leaf in raised if leaf[1] == "b")
        assert abs((a[5] - b[5]) - 0.5 * em) < 0.1 * em  # \raisebox{0.5em}{b}
        x, y = next(leaf for leaf in raised if leaf[1] == "x"), next(leaf for leaf in raised if leaf[1] == "y")
        # lowered math: $y^2$ inside \raisebox{-0.3em} (boxes are ink: y descends 0.194 em below x)
        assert abs((y[5] - x[5]) - (0.3 + 0.194) * em) < 0.1 * em

        anchor = tab.evaluate("document.querySelector('#ref a').getAttribute('href')")
        assert anchor == "#eq-sum" and tab.evaluate("!!document.getElementById('eq-sum')")
    finally:
        tab.close()


if __name__ == "__main__":  # write the page and a screenshot to artifacts/ to look at
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(REPO / "tests"))
    page = _write_page()
    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
        )
        tab = b.new_page(viewport={"width": 1130, "height": 900})
        tab.goto(page.as_uri())
        tab.evaluate("document.fonts.ready")
        tab.screenshot(path=str(ARTIFACTS / "math-typography.png"), full_page=True)
        b.close()
    print(ARTIFACTS / "math-typography.png")


@pytest.mark.browser
def test_a_numbered_equation_wider_than_its_column_scrolls_and_keeps_its_number_clear(browser, tmp_path: Path) -> None:
    wide = r"\begin{align} L &= \mathbb{E}\Bigg[\bigg(r + \gamma \max_{a'} Q(s', a'; \theta^-) - Q(s, a; \theta)\bigg)^2\Bigg] + \lambda \lVert \theta \rVert_2^2 \end{align}"
    narrow = r"\begin{equation} a = b \end{equation}"
    page = tmp_path / "narrow.html"
    page.write_text(
        f'<!doctype html><meta charset="utf-8"><link rel="stylesheet" href="{MATH_CSS.as_uri()}">'
        f'<div style="width:300px;font-size:18px" id="w">{tex_to_mathml(wide, True, numbers=True)}</div>'
        f'<div style="width:300px;font-size:18px" id="n">{tex_to_mathml(narrow, True, numbers=True)}</div>',
        encoding="utf-8",
    )
    tab = browser.new_page(viewport={"width": 400, "height": 600})
    try:
        tab.goto(page.as_uri())
        tab.evaluate("document.fonts.ready")
        cells = tab.evaluate(
            "(id) => [...document.querySelectorAll('#' + id + ' mtd')].map(td => {"
            " const r = td.getBoundingClientRect(); return [r.left, r.right, td.textContent]; })",
            "w",
        )
        content = max(right for left, right, text in cells if text and not text.startswith("("))
        number = next(left for left, right, text in cells if text == "(1)")
        assert number >= content - 0.5, (number, content)  # after the formula, not over it
        assert tab.evaluate("(() => { const m = document.querySelector('#w math'); return m.scrollWidth > m.clientWidth; })()")
        right = tab.evaluate("document.querySelector('#n mtd:last-child').getBoundingClientRect().right")
        assert abs(right - (8 + 300)) < 2  # a narrow one's number at the column's right edge
    finally:
        tab.close()
