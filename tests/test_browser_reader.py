"""Reader III in Chromium: bilingual reading per block, code that keeps its shape, search and
contents, figure facts, print, tab titles. Positions are measured; screenshots for people go to
artifacts/screenshots/reader/ (git-ignored)."""
from __future__ import annotations

import contextlib

import pytest

from conftest import ROOT
from test_browser import DESKTOP, PHONE, base_url, new_page  # noqa: F401 (the module's fixture)

pytestmark = pytest.mark.browser
SHOTS = ROOT / "artifacts" / "screenshots" / "reader"
WIDE = {"width": 1400, "height": 900}


def test_bilingual_english_under_each_translated_block_only(browser, base_url):
    context, page, rec = new_page(browser, WIDE)
    page.goto(base_url + "zh/annotated_attention/mha.html")
    toggle = page.locator(".bilingual-toggle")
    assert toggle.text_content() == "显示英文原文" and toggle.get_attribute("aria-pressed") is None
    toggle.focus()
    page.keyboard.press("Enter")  # from the keyboard
    page.wait_for_selector(".original")
    assert toggle.text_content() == "隐藏英文原文"  # says what the next click does
    got = page.evaluate("""() => {
      const boxes = [...document.querySelectorAll('.original')];
      return {n: boxes.length, lang: boxes.every(b => b.lang === 'en'),
        h1: document.querySelectorAll('h1').length,
        headings: document.querySelectorAll('.original h1, .original h2, .original h3, .original h4').length,
        repeats: document.querySelectorAll('.original img, .original pre, .original math[display=block]').length,
        // each box right under the translated block it belongs to: touching it, same left edge
        placed: boxes.every(b => { const p = b.previousElementSibling; if (!p || p.classList.contains('original')) return false;
          const a = p.getBoundingClientRect(), r = b.getBoundingClientRect(); return r.top >= a.bottom - 1 && r.top - a.bottom < 30 && Math.abs(r.left - a.left) < 2; }),
        hasEnglish: boxes.every(b => /[A-Za-z]{3}/.test(b.textContent)),
        tocEnglish: [...document.querySelectorAll('.toc a')].filter(a => /^[A-Za-z ]+$/.test(a.textContent.trim())).length};
    }""")
    assert got["n"] > 20 and got["lang"] and got["placed"] and got["hasEnglish"], got
    assert got["h1"] == 1 and got["headings"] == 0 and got["repeats"] == 0 and got["tocEnglish"] == 0, got
    page.reload()  # remembered
    page.wait_for_selector(".original")
    assert page.text_content(".bilingual-toggle") == "隐藏英文原文"
    page.click(".bilingual-toggle")
    assert page.evaluate("document.querySelector('.original').offsetHeight") == 0
    assert page.text_content(".bilingual-toggle") == "显示英文原文"
    assert not rec.errors, rec.errors
    context.close()


CODE_JS = """() => {
  const lines = [...document.querySelectorAll('.section > .code .line')];
  const row = parseFloat(getComputedStyle(lines[0]).lineHeight);
  const out = {wrappedShort: [], hang: [], lines: lines.length, longer: 0, extraRows: 0};
  for (const l of lines) {
    const text = l.textContent, rows = Math.round(l.getBoundingClientRect().height / row);
    out.extraRows += rows - 1;
    if (text.length <= 88 && rows > 1) out.wrappedShort.push(text.length);
    if (rows > 1) {
      // where the first character of each row is: the continuation starts right of the indentation
      const rects = (() => { const rr = document.createRange(); rr.selectNodeContents(l); return [...rr.getClientRects()]; })();
      const indent = text.length - text.trimStart().length;
      const ch = (() => { const s = document.createElement('span'); s.style.display = 'inline-block'; s.textContent = '0000000000'; l.appendChild(s); const w = s.getBoundingClientRect().width / 10; s.remove(); return w; })();
      const top = rects[0].top, lefts = rects.filter(x => x.width && x.top > top + row / 2).map(x => x.left);
      const gutterEnd = l.getBoundingClientRect().left + parseFloat(getComputedStyle(l.parentElement.parentElement).getPropertyValue('--gutter')) * parseFloat(getComputedStyle(l).fontSize);
      out.hang.push({indent, cont: Math.round((Math.min(...lefts) - gutterEnd) / ch), marked: getComputedStyle(l).backgroundImage.includes('gradient')});
    }
  }
  return out;
}"""


def test_code_fits_88_columns_at_1400_and_wraps_at_its_own_indentation(browser, base_url):
    context, page, rec = new_page(browser, WIDE)
    page.goto(base_url + "annotated_attention/mha.html")
    got = page.evaluate(CODE_JS)
    assert got["wrappedShort"] == [], got["wrappedShort"]
    font = page.evaluate("getComputedStyle(document.querySelector('pre.code')).fontSize")
    assert font == "12px"  # the original site's code size (pylit.css: div.code pre 12px)
    context.close()
    context, page, rec = new_page(browser, PHONE)
    page.goto(base_url + "annotated_attention/mha.html")
    got = page.evaluate(CODE_JS)
    assert got["hang"], "phones wrap (the choice, measured: docs/authors.md)"
    for h in got["hang"]:
        # its own indentation, plus the hang (a very deep line's hang stops at 60 % of the width)
        assert h["marked"] and h["cont"] >= min(h["indent"] + 1, 20), h
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    context.close()


def test_search_dropdown_and_page_agree_and_math_reads_as_text(browser, base_url):
    context, page, rec = new_page(browser, WIDE)
    page.goto(base_url + "annotated_attention/mha.html")
    page.fill("#search-input", "attention")
    page.wait_for_selector("#search-results:not([hidden]) .search-more")
    menu = page.text_content("#search-status")
    more = page.text_content(".search-more")
    page.click(".search-more")
    page.wait_for_selector("#search-page-results li")
    listed = page.eval_on_selector_all("#search-page-results li", "els => els.length")
    assert menu == page.text_content("#search-page-status") == f"Results: {listed}", (menu, listed)
    assert more == f"All {listed} results" and listed > 8
    page.fill("#search-page-input", "exp")
    page.wait_for_function("document.querySelectorAll('#search-page-results li').length > 0")
    text = page.text_content("#search-page-results")
    assert "( −" not in text and "exp (" not in text
    page.goto(base_url + "annotated_attention/scores_and_softmax.html")
    toc = " ".join(page.eval_on_selector_all(".toc a", "els => els.map(e => e.textContent)"))
    assert "\\" not in toc and " ( " not in toc and "( −" not in toc, toc
    context.close()


def test_scroll_spy_marks_nothing_until_a_section_is_reached(browser, base_url):
    context, page, rec = new_page(browser, WIDE)
    page.goto(base_url + "annotated_attention/mha.html")
    assert page.evaluate("document.querySelectorAll('.toc a[aria-current]').length") == 0
    target = page.eval_on_selector_all(".toc a", "els => els[2].getAttribute('href')")
    page.evaluate(f"document.querySelector('{target}').scrollIntoView()")
    page.wait_for_timeout(200)
    assert page.evaluate("document.querySelector('.toc a[aria-current]').getAttribute('href')") == target
    context.close()


def test_figure_title_with_facts_is_shown_under_the_figure(browser, base_url):
    context, page, rec = new_page(browser, WIDE)
    page.goto(base_url + "annotated_attention/learned.html")
    page.wait_for_load_state("load")
    page.wait_for_timeout(500)
    shown = page.evaluate("""async () => Promise.all([...document.querySelectorAll('.docs img[src$=".svg"]')].map(async img => {
      const r = img.getBoundingClientRect();
      const cap = img.nextElementSibling && img.nextElementSibling.classList.contains('figure-facts') ? img.nextElementSibling.getBoundingClientRect() : null;
      const svg = await (await fetch(img.src)).text();
      return {alt: img.alt, width: r.width, numbers: (svg.match(/>[^<]*\\d\\.\\d\\d[^<]*</g) || []).length,
              below: !cap || (cap.top >= r.bottom - 1 && cap.height > 0)};
    }))""")
    # the per-head numbers are visible: a figure of them, drawn at a readable size
    table = [s for s in shown if "in numbers" in s["alt"]]
    assert table and table[0]["width"] > 300 and table[0]["numbers"] >= 8, shown
    # and a title that says more than the alt text sits under its figure
    assert all(s["below"] for s in shown), shown
    context.close()


def test_print_to_pdf_has_prose_code_and_math_without_the_interface(browser, base_url, tmp_path):
    context, page, rec = new_page(browser, WIDE)
    page.goto(base_url + "annotated_attention/mha.html")
    page.emulate_media(media="print")
    got = page.evaluate("""() => {
      const shown = s => [...document.querySelectorAll(s)].filter(e => e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden').length;
      const clipped = [...document.querySelectorAll('pre.code, .docs math[display=block]')].filter(e => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible').length;
      const wide = [...document.querySelectorAll('pre.code, .docs math[display=block]')].filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1).length;
      return {ui: shown('.site-header, .page-tools, .toc, .pager, .site-footer, .copy-button'), clipped, wide,
              prose: shown('.docs p'), code: shown('pre.code .line'), math: shown('math')};
    }""")
    assert got["ui"] == 0 and got["clipped"] == 0 and got["wide"] == 0, got
    assert got["prose"] > 10 and got["code"] > 50 and got["math"] > 5, got
    pdf = page.pdf(format="A4", print_background=True)
    assert pdf.startswith(b"%PDF") and pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages") >= 3
    (SHOTS).mkdir(parents=True, exist_ok=True)
    (SHOTS / "mha-print.pdf").write_bytes(pdf)
    context.close()


def test_a_long_site_description_is_cut_to_its_first_clause_in_tab_titles(tmp_path):
    from labml_site.builder.site import BuildConfig, build
    from conftest import write_tree
    import re

    home = "Annotated Research Paper Implementations: Transformers, StyleGAN, Stable Diffusion, DDPM/DDIM, LayerNorm and more"
    src = write_tree(tmp_path / "src", {"__init__.py": f'"""\n# {home}\n\nHello.\n"""\n', "t/a.py": '"""\n# Multi-headed attention\n\nText.\n"""\n\nx = 1\n'})
    build(BuildConfig(src, tmp_path / "tr", tmp_path / "site", langs=("en",)))
    title = re.search(r"<title>([^<]*)</title>", (tmp_path / "site/t/a.html").read_text(encoding="utf-8")).group(1)
    assert title == "Multi-headed attention · Annotated Research Paper Implementations"


@pytest.mark.parametrize("rel, expected", [
    ("annotated_attention/mha.html", "Multi-Head Attention · Annotated tutorials"),
    ("zh/annotated_attention/mha.html", "多头注意力 · 注释教程"),
])
def test_tab_titles_are_page_title_and_site_name(browser, base_url, rel, expected):
    context, page, rec = new_page(browser, WIDE)
    page.goto(base_url + rel)
    assert page.title() == expected
    context.close()


def test_reader_screenshots(browser, base_url):
    SHOTS.mkdir(parents=True, exist_ok=True)
    for lang, prefix in (("en", ""), ("zh", "zh/")):
        for name, viewport in (("desktop", WIDE), ("phone", PHONE)):
            for scheme in ("light", "dark"):
                context, page, _ = new_page(browser, viewport, scheme)
                page.goto(base_url + prefix + "annotated_attention/mha.html")
                if lang == "zh":
                    page.click(".bilingual-toggle")
                    page.wait_for_selector(".original")
                page.evaluate("document.querySelector('#scores').scrollIntoView()")
                page.wait_for_timeout(150)
                page.screenshot(path=str(SHOTS / f"mha-{lang}-{name}-{scheme}.png"))
                context.close()


@contextlib.contextmanager
def _served_build(tmp_path, files: dict[str, str]):
    """A site built from `files` (one language), served over HTTP while the block runs: its URL."""
    import functools
    import http.server
    import threading

    from conftest import write_tree

    from labml_site.builder.site import BuildConfig, build

    src = write_tree(tmp_path / "src", files)
    (tmp_path / "tr").mkdir()
    out = build(BuildConfig(src, tmp_path / "tr", tmp_path / "site", langs=("en",), jobs=1)).out
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(out)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


def test_a_figure_title_that_says_more_than_its_alt_is_shown(browser, tmp_path):
    """The general rule behind item 5: an SVG's <title> with facts its alt text lacks is shown under
    the figure; one that only repeats the alt text is not."""
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100"><title>{}</title><rect width="200" height="100" fill="#ccc"/></svg>'
    files = {
        "page.py": '"""\n# Figures\n\n![Head 1](facts.svg)\n\n![Head 2](plain.svg)\n"""\nx = 1\n',
        "facts.svg": svg.format("Head 1: entropy 2.31 bits, mean distance 3.10"),
        "plain.svg": svg.format("Head 2"),
    }
    with _served_build(tmp_path, files) as url:
        context, page, rec = new_page(browser, WIDE)
        page.goto(url + "page.html")
        page.wait_for_load_state("load")
        page.wait_for_timeout(500)
        facts = page.evaluate("""() => [...document.querySelectorAll('.docs img')].map(img => {
          const cap = img.nextElementSibling && img.nextElementSibling.classList.contains('figure-facts') ? img.nextElementSibling : null;
          return [img.alt, cap ? cap.textContent : null, cap ? cap.getBoundingClientRect().top >= img.getBoundingClientRect().bottom - 1 : null];
        })""")
        context.close()
    assert facts[0][0] == "Head 1" and "entropy 2.31" in (facts[0][1] or "") and facts[0][2], facts
    assert facts[1] == ["Head 2", None, None], facts


def test_the_words_of_a_formula_never_break_inside_a_squeezed_table(browser, tmp_path):
    """Prose may break long URLs anywhere; a formula's words may not: an array wider than the
    column showed its \\text{Type} cell as "T" (overflow-wrap: anywhere reached the <mtext>)."""
    row = r" & \text{Enc-}\alpha & \text{Enc-}\beta & \text{Dec-}\alpha & \text{Dec-}\beta"
    tex = ("\\begin{array}{c|cc|cc}\n\\text{Type}" + row + " \\\\\\\\\n\\hline\n\\text{Encoder only} & (2N)^{\\frac{1}{4}} & "
           "(8N)^{-\\frac{1}{4}} & 0.81 (N^4M)^{\\frac{1}{16}} & 0.87 (N^4 M)^{-\\frac{1}{16}} \\\\\\\\\n\\end{array}")
    with _served_build(tmp_path, {"page.py": f'"""\n# Table\n\n$$\n{tex}\n$$\n"""\nx = 1\n'}) as url:
        context, page, rec = new_page(browser, PHONE)
        page.goto(url + "page.html")
        page.wait_for_load_state("load")
        page.wait_for_timeout(300)
        widths = page.evaluate("""() => [...document.querySelectorAll('.docs mtext')].map(t =>
          [t.textContent, t.getBoundingClientRect().width / parseFloat(getComputedStyle(t).fontSize)])""")
        context.close()
    # a letter of the math font is at least 0.35 em wide: a cell cut to its first letter is not
    assert widths and all(em >= 0.35 * len(text.strip()) for text, em in widths), widths


def test_no_line_starts_with_the_punctuation_after_a_formula(browser, tmp_path):
    """A browser may break between inline math and the text after it: "… $R(\\theta)k$. So …"
    put the full stop at the start of the next line. At every width, the character after a formula
    sits on the formula's line."""
    words = " ".join(f"word{i}" for i in range(40))
    prose = "\n".join(f"Text {words[: 9 * k]} $R(p\\theta)q \\cdot R(s\\theta)k{'x' * (k % 3)}$. So the rest, and $a_{k}$, then." for k in range(1, 12))
    with _served_build(tmp_path, {"page.py": f'"""\n# Breaks\n\n{prose}\n"""\nx = 1\n'}) as url:
        context, page, rec = new_page(browser, PHONE)
        page.goto(url + "page.html")
        page.wait_for_load_state("load")
        broken = []
        for width in range(300, 420, 7):
            page.set_viewport_size({"width": width, "height": 900})
            page.wait_for_timeout(30)
            broken += page.evaluate("""(width) => [...document.querySelectorAll('.docs math')].flatMap(m => {
              const next = m.nextSibling || (m.parentElement.classList.contains('nowrap') ? m.parentElement.lastChild : null);
              if (!next || next.nodeType !== 3 || !next.textContent) return [];
              const r = document.createRange(); r.setStart(next, 0); r.setEnd(next, 1);
              const after = r.getBoundingClientRect(), box = m.getBoundingClientRect();
              return after.top >= box.bottom - 1 ? [[width, next.textContent.slice(0, 3)]] : [];
            })""", width)
        context.close()
    assert not broken, broken
