"""Our MathML and KaTeX side by side in Chromium: the same formulas, measured.

`FORMULAS` are formulas of our own, one or more per construct the typesetter handles (spacing
pairs, primes, scripts, fractions, roots, operators with limits, names, fences, matrices and
environments, accents, colours, text, boxes). `measure(tab, page)` renders each both ways on one
page (ours: MathML with math.css and Latin Modern Math; KaTeX: its HTML output with its fonts,
both from the local disk) and returns, per formula, the two boxes and the glyphs (text, box)
in reading order, in em of each side's own font size.

`compare(ours, katex)` pairs the glyphs by text (in order) and reports the largest differences:
of the formula's width and height, of the horizontal gap between consecutive paired glyphs, and
of each paired glyph's vertical offset from the first glyph's baseline. Run as a script, it
prints the table (python tests/math_vs_katex.py).
"""
from __future__ import annotations

import difflib
import html
import json
import unicodedata
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MATH_CSS = REPO / "labml_site" / "theme" / "static" / "math.css"
KATEX = REPO / "node_modules" / "katex" / "dist"

# (id, TeX, display)
FORMULAS = [
    ("ord-op", r"\frac{1}{T}\sum_{t=1}^{T} x_t", True),
    ("ord-inner", r"\gamma\frac{a}{b} + c", False),
    ("op-group", r"\log{p_\theta(x)} + \log p", False),
    ("op-open", r"\log(x) + \exp(y)", False),
    ("ord-op-inline", r"x\sum_i y_i", False),
    ("bin-rel", r"a + b = c - d \le e", False),
    ("punct", r"f(x, y; z)", False),
    ("primes", r"t' + s'' + w'_{t,t'}", False),
    ("scripts", r"x_i^2 + \beta_1 + e^{-x}", False),
    ("norm-sub", r"\|x\|_2 + \sqrt{\beta_1}", False),
    ("frac", r"\frac{a+b}{c} = \dfrac{1}{2}", True),
    ("sqrt", r"\sqrt{x^2 + 1} + \sqrt[3]{y}", False),
    ("limits", r"\sum_{i=1}^{n} x_i = \prod_{j} y_j", True),
    ("int", r"\int_0^1 f(x)\,dx", True),
    ("mathop", r"\mathop{softmax}(x) + \operatorname{relu}(z)", False),
    ("fences", r"\left( \frac{a}{b} \right) + \left[ x \right]", True),
    ("fences-inline", r"x \left( \frac{a}{b} \right) + \left( \tfrac{1}{2} \right) y", False),
    ("accents", r"\hat{y} + \bar{x} + \tilde{z} + \widehat{ab}", False),
    ("text", r"\text{if } x > 0", False),
    ("colour", r"\textcolor{red}{a} + \color{blue} b", False),
    ("pmatrix", r"\begin{pmatrix} a & b \\ c & d \end{pmatrix}", True),
    ("cases", r"f(x) = \begin{cases} 1 & x > 0 \\ 0 & \text{otherwise} \end{cases}", True),
    ("align", r"\begin{align} a &= b + c \\ d &= e \end{align}", True),
    ("greek", r"\alpha\beta + \Gamma\Delta", False),
    ("dots", r"x_1, \dots, x_n", False),
    ("mid", r"\{ x \mid x > 0 \}", False),
    ("above", r"{a \above 1pt b} + x", False),
    ("raisebox", r"a\raisebox{0.25em}{$b$}c + d", False),
    ("textcircled", r"\text{\textcircled a} + \textsf{\textbf{H}}", False),
    ("cd", r"\begin{CD} A @>f>> B \\ @VgVV @AAhA \\ C @<<k< D \end{CD}", True),
]

LEAVES = """
(root) => {
  const em = parseFloat(getComputedStyle(root).fontSize);
  const box = root.getBoundingClientRect();
  const leaves = [];
  const visit = (node) => {
    for (const child of node.childNodes) {
      if (child.nodeType === 3) {
        const text = child.textContent.replace(/[\\u200b\\u2061-\\u2064\\s]/g, '');
        if (!text) continue;
        const el = child.parentElement;
        if (el.closest('annotation, .katex-mathml')) continue;
        const range = document.createRange(); range.selectNodeContents(child);
        const r = range.getBoundingClientRect();
        if (r.width <= 0) continue;
        leaves.push([text, (r.left - box.left) / em, (r.right - box.left) / em,
                     (r.top - box.top) / em, (r.bottom - box.top) / em,
                     parseFloat(getComputedStyle(el).fontSize) / em]);
      } else if (child.nodeType === 1) visit(child);
    }
  };
  visit(root);
  return {width: box.width / em, height: box.height / em, leaves};
}
"""


def page_html(markups: dict[str, str]) -> str:
    rows = []
    for case_id, tex, display in FORMULAS:
        rows.append(
            f'<tr><th>{case_id}</th><td><div class="ours" id="o-{case_id}">{markups[case_id]}</div></td>'
            f'<td><div class="katex-box" id="k-{case_id}" data-tex="{html.escape(tex)}" data-display="{int(display)}"></div></td></tr>'
        )
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        f'<link rel="stylesheet" href="{MATH_CSS.as_uri()}"><link rel="stylesheet" href="{(KATEX / "katex.min.css").as_uri()}">'
        f'<script src="{(KATEX / "katex.min.js").as_uri()}"></script>'
        # the same size both ways: math.css sets math at 1.1em, KaTeX at 1.21em of the text
        "<style>body{font:18px/1.5 serif;margin:12px}th{font:12px sans-serif;text-align:left}"
        "td{padding:6px 16px;vertical-align:middle}.ours math{font-size:22px}.katex{font-size:22px}"
        ".ours,.katex-box{display:inline-block}tr{border-bottom:1px solid #ddd}table{border-collapse:collapse}</style>"
        "</head><body><table><tr><th></th><th>ours (MathML)</th><th>KaTeX</th></tr>" + "".join(rows) + "</table>"
        "<script>for (const el of document.querySelectorAll('.katex-box')) katex.render(el.dataset.tex, el,"
        " {displayMode: el.dataset.display === '1', throwOnError: false, output: 'html'});</script>"
        "</body></html>"
    )


def markups() -> dict[str, str]:
    from labml_site.typeset.math import tex_to_mathml

    return {case_id: tex_to_mathml(tex, display) for case_id, tex, display in FORMULAS}


def measure(tab, page: Path) -> dict[str, tuple[dict, dict]]:
    tab.goto(page.as_uri())
    tab.evaluate("document.fonts.ready")
    tab.wait_for_timeout(200)
    out = {}
    for case_id, _, _ in FORMULAS:
        ours = tab.evaluate(f"(() => ({LEAVES})(document.querySelector('#o-{case_id} math')))()")
        katex = tab.evaluate(f"(() => ({LEAVES})(document.querySelector('#k-{case_id} .katex-html')))()")
        out[case_id] = (ours, katex)
    return out


# Wide accents, measured by their ink: KaTeX draws them as SVG and Chromium as a stretched glyph
# whose box and text range are not where it is drawn (both report width 0), so each side is
# screenshot twice, base hidden and accent hidden, and the dark pixels' boxes compared.
# (id, TeX, display), one accent over one base each.
WIDE_ACCENTS = [
    ("widehat-a", r"\widehat{a}", True),
    ("widehat-ab", r"\widehat{ab}", True),
    ("widehat-A", r"\widehat{A}", True),
    ("widehat-xy", r"\widehat{xy}", False),
    ("widetilde-A", r"\widetilde{A}", True),
]
INK_PX = 100  # the font size for ink measurements (1 px = 0.01 em)
_HIDE = {
    ("ours", "base"): "#o-ID mover > :first-child {visibility:hidden}",
    ("ours", "accent"): "#o-ID mover > :last-child {visibility:hidden}",
    ("katex", "base"): "#k-ID .katex-accent > .vlist-t > .vlist-r > .vlist > span:first-child {visibility:hidden}",
    ("katex", "accent"): "#k-ID .svg-align {visibility:hidden}",
}
_INK = """async (b64) => { const img = new Image(); img.src = 'data:image/png;base64,' + b64; await img.decode();
  const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
  const g = c.getContext('2d'); g.drawImage(img, 0, 0); const d = g.getImageData(0, 0, c.width, c.height).data;
  let x0 = 1e9, y0 = 1e9, x1 = -1, y1 = -1;
  for (let y = 0; y < c.height; y++) for (let x = 0; x < c.width; x++) if (d[(y * c.width + x) * 4] < 128) {
    x0 = Math.min(x0, x); x1 = Math.max(x1, x + 1); y0 = Math.min(y0, y); y1 = Math.max(y1, y + 1); }
  return [x0, y0, x1, y1]; }"""


def measure_accents(browser, page: Path) -> dict[str, dict[str, float]]:
    """Per WIDE_ACCENTS formula, ours minus KaTeX (em) of the accent's ink: width, height, gap
    above the base's ink, and horizontal centre offset from the base's centre."""
    import base64

    saved = FORMULAS[:]
    FORMULAS[:] = WIDE_ACCENTS
    try:
        page.write_text(page_html(markups()).replace("font-size:22px", f"font-size:{INK_PX}px"), encoding="utf-8")
    finally:
        FORMULAS[:] = saved
    tab = browser.new_page(viewport={"width": 1000, "height": 900})
    reader = browser.new_page()
    out = {}
    try:
        tab.goto(page.as_uri())
        tab.evaluate("document.fonts.ready")
        tab.wait_for_timeout(200)
        for case_id, _, _ in WIDE_ACCENTS:
            found = {}
            for (side, hidden), css in _HIDE.items():
                tab.evaluate("(css) => { let s = document.getElementById('hide'); if (!s) { s = document.createElement('style');"
                             " s.id = 'hide'; document.head.appendChild(s); } s.textContent = css; }", css.replace("ID", case_id))
                shot = tab.locator(f"#{side[0]}-{case_id}").screenshot()
                found[side, hidden] = reader.evaluate(_INK, base64.b64encode(shot).decode())

            def shape(side: str) -> tuple[float, ...]:
                bx0, by0, bx1, by1 = found[side, "accent"]  # the base, accent hidden
                ax0, ay0, ax1, ay1 = found[side, "base"]
                return (ax1 - ax0, ay1 - ay0, by0 - ay1, ((ax0 + ax1) - (bx0 + bx1)) / 2)

            ours, katex = shape("ours"), shape("katex")
            out[case_id] = {k: (o - q) / INK_PX for k, o, q in zip(("width", "height", "gap", "centre"), ours, katex)}
    finally:
        tab.close()
        reader.close()
    return out


def _norm(text: str) -> str:
    # accents: Latin Modern's spacing forms as KaTeX's ASCII and modifier letters
    text = {"\u02c6": "^", "\u00af": "\u02c9", "\u02dc": "~"}.get(text, text)
    text = unicodedata.normalize("NFKC", text)
    return {"\u2212": "-", "\u2223": "|", "\u2225": "\u2016", "\u2032": "'", "\u2033": "''"}.get(text, text)


def _chars(leaves: list) -> list[tuple[str, float, float, float, float, float]]:
    """Leaves split into characters (a multi-letter leaf shares its box, in proportion)."""
    out = []
    for text, left, right, top, bottom, size in leaves:
        text = _norm(text)
        step = (right - left) / max(len(text), 1)
        for i, c in enumerate(text):
            out.append((c, left + i * step, left + (i + 1) * step, top, bottom, size))
    return out


def compare(ours: dict, katex: dict) -> dict[str, float]:
    """The largest differences (em) between the two renderings of one formula."""
    a, b = _chars(ours["leaves"]), _chars(katex["leaves"])
    matcher = difflib.SequenceMatcher(a=[c[0] for c in a], b=[c[0] for c in b], autojunk=False)
    pairs = [(a[block.a + k], b[block.b + k]) for block in matcher.get_matching_blocks() for k in range(block.size)]
    gap = 0.0
    for (p1, q1), (p2, q2) in zip(pairs, pairs[1:]):
        if p2[1] < p1[2] - 0.05 or q2[1] < q1[2] - 0.05:
            continue  # not side by side (a limit under its operator, rows): the gap means nothing
        gap = max(gap, abs((p2[1] - p1[2]) - (q2[1] - q1[2])))
    rise = 0.0
    if pairs:
        (p0, q0) = pairs[0]
        for p, q in pairs[1:]:
            rise = max(rise, abs((p[4] - p0[4]) - (q[4] - q0[4])))  # bottoms relative to the first glyph
    return {
        "paired": len(pairs) / max(len(a), len(b), 1),
        "width": abs(ours["width"] - katex["width"]),
        "gap": gap,
        "rise": rise,
    }


if __name__ == "__main__":
    import sys

    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(REPO))
    artifacts = REPO / "artifacts"
    artifacts.mkdir(exist_ok=True)
    page = artifacts / "math-vs-katex.html"
    page.write_text(page_html(markups()), encoding="utf-8")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium",
                              args=["--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files"])
        tab = b.new_page(viewport={"width": 1000, "height": 900})
        results = measure(tab, page)
        tab.screenshot(path=str(artifacts / "math-vs-katex.png"), full_page=True)
        b.close()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium",
                              args=["--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files"])
        accents = measure_accents(b, artifacts / "math-vs-katex-accents.html")
        b.close()
    for case_id, d in accents.items():
        print(f"{case_id:14} accent ink, ours - KaTeX: " + " ".join(f"{k} {v:+.3f}" for k, v in d.items()))
    for case_id, (ours, katex) in results.items():
        d = compare(ours, katex)
        print(f"{case_id:14} paired {d['paired']:.2f} width {d['width']:.3f} gap {d['gap']:.3f} rise {d['rise']:.3f}"
              f"  (ours {ours['width']:.2f}em, katex {katex['width']:.2f}em)")
    if "-v" in sys.argv:
        print(json.dumps(results, indent=0)[:20000])
