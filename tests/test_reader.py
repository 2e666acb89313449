"""Reader extras built from small trees: reading order, previous/next, table of contents,
prose-only pages, status rows, `page.md` and `llms.txt`, source pages, per-language notebooks,
translated figures."""
from __future__ import annotations

import json
import posixpath
from pathlib import Path

from bs4 import BeautifulSoup

from labml_site.builder.site import BuildConfig, build
from labml_site.read.structure import discover, reading_order
from labml_site.typeset.highlight import highlight_block, highlight_inline

from conftest import TOY_PAGE, write_json, write_tree


def page(title: str, order: str = "", body: str = "Some prose.") -> str:
    front = f"title: {title}\n" + (f"order: {order}\n" if order else "")
    return f'"""\n---\n{front}---\n\n# {title}\n\n{body}\n"""\n\nx = 1\n'


def soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def test_reading_order_listed_then_order_front_matter_then_file_name(tmp_path):
    src = write_tree(tmp_path / "src", {
        "t/README.md": "# T\n\nRead [c](c.html) then [sub](sub/index.html).\n",
        "t/a.py": page("A"), "t/b.py": page("B", order="2"), "t/c.py": page("C"),
        "t/d.py": page("D", order="1"), "t/sub/x.py": page("X"),
    })
    out = tmp_path / "site"
    build(BuildConfig(src, tmp_path / "tr", out, langs=("en",)))
    cards = [a["href"] for a in soup(out / "t/index.html").select(".children li > a")]
    assert cards == ["c.html", "sub/index.html", "d.html", "b.html", "a.html"]
    # "next" alone walks the whole site, a subfolder with all it holds where it is listed.
    seen, url = [], "index.html"
    while True:
        seen.append(url)
        nxt = soup(out / url).select_one('a[rel="next"]')
        if nxt is None:
            break
        url = posixpath.normpath(posixpath.join(posixpath.dirname(url), nxt["href"]))
    assert seen == ["index.html", "t/index.html", "t/c.html", "t/sub/index.html", "t/sub/x.html", "t/d.html", "t/b.html", "t/a.html"]
    last = soup(out / "t/a.html")
    assert last.select_one('a[rel="prev"]')["href"] == "b.html" and last.select_one('link[rel="prev"]')["href"] == "b.html"
    assert len(last.select('a[rel="prev"]')) == 2  # top and bottom


def test_reading_order_function_ignores_bad_order_values(tmp_path):
    src = write_tree(tmp_path / "src", {"f/b.py": "x = 1\n", "f/a.py": "x = 1\n", "f/c.py": "x = 1\n"})
    files = discover(src)
    folder = files.folders["f"]
    got = reading_order(folder, files.folders, (), {"f/c.py": "not a number", "f/b.py": "-1"})
    assert [p.rel for p in got] == ["f/b.py", "f/a.py", "f/c.py"]


def test_table_of_contents_lists_headings_with_math_as_text(tmp_path):
    body = TOY_PAGE.replace("# Scaled scores", "# Scaled scores\n\n## Why divide by $\\sqrt{d_k}$")
    src = write_tree(tmp_path / "src", {"toy/page.py": body})
    out = tmp_path / "site"
    build(BuildConfig(src, tmp_path / "tr", out, langs=("en",)))
    toc = soup(out / "toy/page.html").select(".toc li a")
    assert toc and all(a["href"].startswith("#") for a in toc)
    texts = [a.get_text() for a in toc]
    assert any("√dₖ" in t for t in texts) and not any("\\" in t for t in texts), texts


def _toy_with_zh(tmp_path: Path) -> tuple[Path, Path, Path]:
    from labml_site.read.prose import placeholder

    src = write_tree(tmp_path / "src", {"toy/__init__.py": '"""\n# Toy\n\nRead [the page](page.html).\n"""\n', "toy/page.py": TOY_PAGE})
    tr = tmp_path / "tr"
    write_json(tr / "toy/page.zh.json", {
        "Scaled scores": "缩放分数",
        "<h1>Scaled scores</h1>\n<p>We divide by " + placeholder(0) + " before the softmax.</p>\n": "<h1>缩放分数</h1>\n<p>在 softmax 之前除以" + placeholder(0) + "。</p>\n",
    })
    out = tmp_path / "site"
    build(BuildConfig(src, tr, out, langs=("en", "zh"), markdown=True))
    return src, tr, out


def test_a_translated_page_carries_the_plan_of_its_notebook(tmp_path):
    """Other languages' notebooks are made by site.js on click: the link names the English file
    (for readers without JavaScript) and carries the cell plan of the English notebook and the
    page's prose as Markdown."""
    from labml_site.render.notebooks import _plan, code_cells
    from labml_site.typeset.page import analyse

    src, _, out = _toy_with_zh(tmp_path)
    link = soup(out / "zh/toy/page.html").select_one(".page-tools a[data-notebook]")
    assert link["href"] == "../../toy/page.ipynb" and link.has_attr("download")
    plan = json.loads(link["data-notebook"])
    assert plan["name"] == "page.ipynb" and plan["title"] == "缩放分数"
    # each section's prose as Markdown, made as page.md's is (render/markdown.py: one conversion),
    # in one script per folder and language that the page loads when the link is clicked
    assert plan["prose"] == {"src": "../_originals/toy/markdown.js", "page": "toy/page.html"}
    script = (out / "zh/_originals/toy/markdown.js").read_text(encoding="utf-8")
    assert script.startswith("window.labmlMarkdown = ") and script.endswith(";\n")
    prose = [p for p in json.loads(script[len("window.labmlMarkdown = "):-2])["toy/page.html"] if p]
    page_md = (out / "zh/toy/page.html.md").read_text(encoding="utf-8")
    assert prose and all(p in page_md for p in prose)
    assert any("在 softmax 之前除以$" in p for p in prose) and not any("<" in p for p in prose)
    data = analyse("toy/page.py", "toy/page.html", (src / "toy/page.py").read_text(encoding="utf-8"))
    assert [len(code) for code, _ in _plan(data.sections)] == [len(cell[0]) for cell in plan["cells"]]
    with_code = [i for i, s in enumerate(data.sections) if s.code]
    assert [i for cell in plan["cells"] for i in cell[0]] == with_code  # every code section, once, in order
    en = json.loads((out / "toy/page.ipynb").read_text(encoding="utf-8"))
    assert "\n".join(code_cells(en)) == "\n".join(data.sections[i].code for i in with_code)
    assert not (out / "zh/toy/page.ipynb").exists()


def test_status_page_lists_only_translation_files_that_exist(tmp_path):
    _, _, out = _toy_with_zh(tmp_path)
    assert ".json" not in (out / "translation-status.html").read_text(encoding="utf-8")
    zh = (out / "zh/translation-status.html").read_text(encoding="utf-8")
    assert "toy/page.zh.json" in zh and "toy/__init__.zh.json" not in zh


def test_page_markdown_has_prose_code_and_tex_in_each_language(tmp_path):
    src, tr, out = _toy_with_zh(tmp_path)
    zh = (out / "zh/toy/page.html.md").read_text(encoding="utf-8")
    assert zh.startswith("# 缩放分数") and "$\\sqrt{d_k}$" in zh and "```python\nimport math" in zh
    en = (out / "toy/page.html.md").read_text(encoding="utf-8")
    assert en.startswith("# Scaled scores") and "def scale(scores, d_k):" in en
    llms = (out / "zh/llms.txt").read_text(encoding="utf-8")
    assert llms.index("toy/index.html.md") < llms.index("toy/page.html.md")
    # only when asked for (`--markdown`): they double the files a build writes
    plain = tmp_path / "plain"
    build(BuildConfig(src, tr, plain, langs=("en", "zh")))
    assert (plain / "zh/toy/page.html").is_file()
    assert not list(plain.rglob("*.md")) and not list(plain.rglob("llms.txt"))


def test_html_to_markdown_maps_blocks_inline_and_math():
    from labml_site.render.markdown import html_to_markdown
    from labml_site.typeset.math import tex_to_mathml

    html = ('<h2>Title <em>here</em></h2>\n<p>Text with <code>x = 1</code>, <a href="a.html">a link</a> and '
            + tex_to_mathml("x^2", False) + '.</p>\n<ul><li>one</li>\n<li>two <strong>b</strong></li></ul>\n'
            + tex_to_mathml("y = 1", True) + '<div class="untranslated" lang="en"><span class="untranslated-marker">Not yet</span><p>English</p></div>'
            + '<pre class="highlight code-block" data-lang="sh"><code>pip install x</code></pre>')
    assert html_to_markdown(html) == (
        "## Title *here*\n\nText with `x = 1`, [a link](a.html) and $x^2$.\n\n- one\n- two **b**\n\n$$\ny = 1\n$$\n\nEnglish\n\n```sh\npip install x\n```"
    )


def test_shell_lines_in_prose_are_not_highlighted_as_python():
    assert highlight_inline("pip install -e .") == '<code class="shell">pip install -e .</code>'
    assert 'class="shell"' in highlight_inline("python -m annotated_attention.experiment")
    assert 'class="shell"' not in highlight_inline("x = torch.zeros(3)")
    assert 'data-lang="sh"' in highlight_block("ls -la\n", "sh")


FIGURE = ('<svg xmlns="http://www.w3.org/2000/svg" width="100" height="40"><title>Two boxes</title>'
          '<rect width="100" height="40" fill="#ffffff"/><rect x="60" width="40" height="40" fill="#08306b"/>'
          '<text x="5" y="20">keys</text><text x="70" y="20" fill="#ffffff">0.5</text></svg>')


def test_svg_figures_follow_the_theme_and_translate_labels_and_alt_text(tmp_path):
    from labml_site.cli.translation import _keys_by_page
    from labml_site.read.prose import placeholder
    from labml_site.render.figures import dark_colour

    body = '"""\n# Figure page\n\n![A figure of two boxes](fig.svg)\n"""\n\nx = 1\n'
    src = write_tree(tmp_path / "src", {"toy/fig_page.py": body, "toy/fig.svg": FIGURE})
    tr = tmp_path / "tr"
    key = "<h1>Figure page</h1>\n<p>" + placeholder(0) + "</p>\n"
    write_json(tr / "toy/fig_page.zh.json", {"Figure page": "图页", key: "<h1>图页</h1>\n<p>" + placeholder(0) + "</p>\n",
                                             "keys": "键", "Two boxes": "两个方框", "A figure of two boxes": "两个方框的图"})
    out = tmp_path / "site"
    build(BuildConfig(src, tr, out, langs=("en", "zh")))
    en, zh = (out / "toy/fig.svg").read_text(encoding="utf-8"), (out / "zh/toy/fig.svg").read_text(encoding="utf-8")
    for svg in (en, zh):  # dark-mode colours for every colour the figure uses, by attribute
        assert "@media (prefers-color-scheme: dark)" in svg
        assert f'[fill="#ffffff"]{{fill:{dark_colour("#ffffff")} !important}}' in svg and '[fill="#08306b"]' in svg
    assert ">keys<" in en and "<title>Two boxes</title>" in en
    assert ">键<" in zh and "<title>两个方框</title>" in zh and ">0.5<" in zh  # numbers stay
    assert soup(out / "zh/toy/fig_page.html").select_one("img")["alt"] == "两个方框的图"
    assert soup(out / "toy/fig_page.html").select_one("img")["alt"] == "A figure of two boxes"
    # extract offers the labels and the alt text as keys next to the page's own
    _, keys, _ = _keys_by_page(BuildConfig(src, tr, tmp_path / "site2", langs=("en", "zh")))
    assert {"keys", "Two boxes", "A figure of two boxes"} <= set(keys["toy/fig_page"]) and "0.5" not in keys["toy/fig_page"]
    assert dark_colour("#ffffff") == "#0d1117" and int(dark_colour("#000000")[1:3], 16) > 200


def test_notebook_cell_plan_is_the_cells_made_section_by_section():
    """The English notebook and the translated pages' plan (`browser_plan`) share one cell plan
    per page: it makes the cells the section-by-section rule makes."""
    from labml_site.render.notebooks import _Cell, _cells, _english_cells, fields_as_lists
    from labml_site.typeset.page import analyse

    root = Path(__file__).resolve().parent.parent / "source" / "annotated_attention"
    for path in sorted(root.glob("*.py")):
        page = analyse(f"annotated_attention/{path.name}", path.stem + ".html", path.read_text(encoding="utf-8"))
        # (the notebook's prose shows reST fields as lists: the plan is the same)
        expected = [_Cell([fields_as_lists(p) for p in c.prose], c.code) for c in _english_cells(page.sections)]
        assert _cells(page.sections) == expected, path.name


def test_source_page_is_written_once_and_every_language_links_to_it(tmp_path):
    _, _, out = _toy_with_zh(tmp_path)
    assert (out / "toy/page.py.html").is_file() and not (out / "zh/toy/page.py.html").exists()
    for page_path in ("toy/page.html", "zh/toy/page.html"):
        link = soup(out / page_path).select_one(".page-tools a[href$='.py.html']")
        assert link is not None and not link.has_attr("download")
        target = posixpath.normpath(posixpath.join(posixpath.dirname(page_path), link["href"]))
        assert target == "toy/page.py.html"
    source = soup(out / "toy/page.py.html")
    assert "def scale" in source.select_one(".source-view").get_text()
    assert source.select_one("a[download]")["href"] == "page.py" and (out / "toy/page.py").is_file()
    assert not source.select(".languages a[hreflang]")  # no switcher to pages that do not exist


def test_bilingual_toggle_loads_the_english_prose_from_one_script_per_folder(tmp_path):
    _, _, out = _toy_with_zh(tmp_path)
    zh = soup(out / "zh/toy/page.html")
    button = zh.select_one(".bilingual-toggle")
    marked = [s["id"] for s in zh.select(".section[data-original]")]
    assert button is not None and marked and button["data-page"] == "toy/page.html"
    assert not zh.select(".original")  # the English is not in the page itself
    script = out / posixpath.normpath(posixpath.join("zh/toy", button["data-src"]))
    assert script == out / "_originals/toy/originals.js"
    text = script.read_text(encoding="utf-8")
    assert text.startswith("window.labmlOriginals = ") and text.rstrip().endswith(";")
    originals = json.loads(text[len("window.labmlOriginals = "):].rstrip().rstrip(";"))
    assert set(originals) == {"toy/index.html", "toy/page.html"}  # the folder's pages, one file
    assert set(marked) <= set(originals["toy/page.html"]) and "We divide by" in "".join(originals["toy/page.html"][marked[0]])
    assert not soup(out / "toy/page.html").select(".bilingual-toggle")  # English pages have none
    assert list((out / "_originals").rglob("*.js")) == [script]


def test_a_source_folder_named_like_the_originals_folder_is_refused(tmp_path):
    src = write_tree(tmp_path / "src", {"_originals/x.py": page("X"), "ok.py": page("OK")})
    files = discover(src, ["en", "zh"])
    assert "ok.py" in {p.rel for p in files.pages} and "_originals/x.py" not in {p.rel for p in files.pages}
    assert any("_originals/" in f.message for f in files.findings)


def test_section_markdown_from_units_is_the_markdown_of_the_filled_section():
    """page.md of a translation converts each unit with its placeholders' Markdown: the same
    text as converting the section's whole HTML, MathML and all."""
    from labml_site.read.prose import fill
    from labml_site.render.markdown import html_to_markdown, section_markdown
    from labml_site.typeset.page import analyse

    root = Path(__file__).resolve().parent.parent / "source" / "annotated_attention"
    checked = 0
    for path in sorted(root.glob("*.py")):
        data = analyse(f"annotated_attention/{path.name}", path.stem + ".html", path.read_text(encoding="utf-8"))
        for s in data.sections:
            if not s.blocks:
                continue
            units = [(b.key, b.placeholders) for b in s.blocks]
            whole = "".join(fill(b.key, b.placeholders) for b in s.blocks)
            assert section_markdown(units) == html_to_markdown(whole), (path.name, s.id)
            checked += 1
    assert checked > 50


def test_math_as_text_for_snippets_cards_and_contents():
    from labml_site.render.math_text import plain_with_math, tex_text

    assert tex_text(r"j \le i") == "j ≤ i" and tex_text(r"Q K^\top") == "QKᵀ" and tex_text(r"\sqrt{d_k}") == "√dₖ"
    assert tex_text(r"\frac{QK^\top}{\sqrt{d_k}}") == "QKᵀ/√dₖ" and tex_text(r"10^{-4}") == "10⁻⁴"
    assert plain_with_math(r"How $Q K^\top$ is scaled, for $5 and $6") == "How QKᵀ is scaled, for $5 and $6"
    for tex in (r"\operatorname{softmax}(x)_i", r"\sum_{j=1}^{n} e^{x_j}", r"\begin{cases} a \\ b \end{cases}", r"\bad{"):
        assert "\\" not in tex_text(tex), tex
    # several-letter names are plain letters, operator names words, no invisible operators
    assert tex_text(r"S_{ij}") == "Sᵢⱼ" and tex_text(r"d_{model}") == "d_(model)" and tex_text(r"\log_2 e") == "log₂ e"
    assert "\u2061" not in tex_text(r"\log(x)") and tex_text(r"2\log x") == "2 log x"


FORMULAS = [
    r"j \le i", r"Q K^\top", r"\frac{QK^\top}{\sqrt{d_k}}", r"10^{-4}", r"\mathbb{R}^{d \times n}", r"\bar\alpha_t",
    r"\operatorname{softmax}\Big(\frac{Q K^\top}{\sqrt{d_k}}\Big) V", r"\sum_{i=1}^{n} x_i^2", r"\hat{y} = W_o h_t + b",
    r"\text{head}_i = \text{Attention}(Q W^Q_i, K W^K_i, V W^V_i)", r"\max_{j} S_{ij}", r"\log \sigma(x)", r"a \, b \quad c",
    r"\left( \frac{1}{2} \right)^{n}", r"\textcolor{red}{x} + y", r"\cos\Bigg(\frac{t}{10000^{\frac{2i}{c}}}\Bigg)",
    r"\mathcal{L} = -\sum_t \log p_\theta(x_t | x_{<t})", r"e^{x_j} / \sum_k e^{x_k}", r"\vec{v} \cdot \vec{w}",
]


def test_fast_math_text_is_the_text_of_the_mathml():
    """Search snippets read the TeX straight (`_fast_tex_text`); it must say what the MathML
    says, for each formula it reads, and leave the rest to the MathML."""
    from labml_site.render.math_text import _fast_tex_text, mathml_text
    from labml_site.typeset.math import tex_to_mathml

    fast = 0
    for tex in FORMULAS + [r"f'(x)", r"\begin{matrix} a \\ b \end{matrix}", r"\sqrt[3]{x}", r"\unknownmacro{x}"]:
        text = _fast_tex_text(tex)
        if text is not None:
            fast += 1
            assert text == mathml_text(tex_to_mathml(tex, display=False)), tex
    assert fast >= len(FORMULAS)
    assert _fast_tex_text(r"f'(x)") is None and _fast_tex_text(r"\unknownmacro{x}") is None
