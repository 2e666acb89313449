"""Compatibility with the original labml site and its translation caches, on small trees of our
own in the corpus's shapes: summaries keyed as written, old URLs kept, Markdown tables and rules."""
from __future__ import annotations

from pathlib import Path

from bs4 import BeautifulSoup

from labml_site.builder.site import BuildConfig, build

from conftest import write_json, write_tree

DOUBLE_SPACED = '"""\n---\ntitle: Train\nsummary: >\n  This trains is a  Graph network\n---\n\n# Train\n"""\n\nx = 1\n'


def _build(tmp_path: Path, files: dict[str, str], translations: dict[str, dict] | None = None,
           langs: tuple[str, ...] = ("en", "zh"), **config) -> Path:
    src = write_tree(tmp_path / "src", files)
    tr = tmp_path / "tr"
    tr.mkdir(exist_ok=True)
    for rel, entries in (translations or {}).items():
        write_json(tr / rel, entries)
    return build(BuildConfig(src, tr, tmp_path / "site", langs=langs, **config)).out


def _description(page: Path) -> str:
    soup = BeautifulSoup(page.read_text("utf-8"), "html.parser")
    return soup.find("meta", attrs={"name": "description"})["content"]


def test_a_summary_with_a_double_space_finds_the_translation_keyed_with_it(tmp_path):
    site = _build(tmp_path, {"g/train.py": DOUBLE_SPACED},
                  {"g/train.zh.json": {"This trains is a  Graph network": "训练图网络", "Train": "训练"}})
    assert _description(site / "zh/g/train.html") == "训练图网络"
    assert _description(site / "g/train.html") == "This trains is a  Graph network"


def test_a_folded_summary_keeps_its_line_break_in_the_key(tmp_path):
    folded = DOUBLE_SPACED.replace("summary: >\n  This trains is a  Graph network",
                                   'summary: "An annotated tutorial of\\n Improved Training."')
    site = _build(tmp_path, {"g/train.py": folded},
                  {"g/train.zh.json": {"An annotated tutorial of\n Improved Training.": "带注释的教程。"}})
    assert _description(site / "zh/g/train.html") == "带注释的教程。"


# --- old URLs ------------------------------------------------------------------------------------

PAGE = '"""\n---\ntitle: Receptance\n---\n\n# Receptance\n\nText.\n"""\n\nx = 1\n'


def _refresh(page: Path) -> str:
    soup = BeautifulSoup(page.read_text("utf-8"), "html.parser")
    return soup.find("meta", attrs={"http-equiv": "refresh"})["content"].removeprefix("0; url=")


def test_translations_under_an_old_case_give_a_redirect_at_the_old_path_in_every_language(tmp_path):
    site = _build(tmp_path, {"rwkv/__init__.py": PAGE, "rwkv/configs.py": PAGE},
                  {"RWKV/__init__.zh.json": {"Receptance": "接受"}, "RWKV/configs.zh.json": {"Receptance": "接受"}},
                  langs=("en", "zh", "ja"))
    for prefix in ("", "zh/", "ja/"):  # ja has no translation file: the old path is the site's
        assert _refresh(site / prefix / "RWKV/index.html") == "../rwkv/index.html"
        assert _refresh(site / prefix / "RWKV/configs.html") == "../rwkv/configs.html"
        assert (site / prefix / "rwkv/index.html").is_file()
    soup = BeautifulSoup((site / "zh/RWKV/index.html").read_text("utf-8"), "html.parser")
    assert soup.title.get_text() == "接受"  # the page it leads to, in the language
    # the fragment of an old deep link is carried over by a script file (no inline script)
    assert soup.find("script")["src"] == "../../static/redirect.js"
    assert (site / "static/redirect.js").is_file()


def test_redirects_yaml_maps_old_paths_to_pages_by_source_url_or_outside_url(tmp_path):
    yaml_text = ("old/attention.html: rwkv/configs.py\n"
                 "/old/deep.html: rwkv/configs.html#section-1\n"
                 "gone/: https://example.org/elsewhere.html\n")
    site = _build(tmp_path, {"rwkv/__init__.py": PAGE, "rwkv/configs.py": PAGE, "redirects.yaml": yaml_text})
    for prefix in ("", "zh/"):
        assert _refresh(site / prefix / "old/attention.html") == "../rwkv/configs.html"
        assert _refresh(site / prefix / "old/deep.html") == "../rwkv/configs.html#section-1"
        assert _refresh(site / prefix / "gone/index.html") == "https://example.org/elsewhere.html"
    assert not (site / "redirects.yaml").exists()  # the configuration is not published


def _findings(tmp_path: Path, files: dict[str, str], **kw):
    src = write_tree(tmp_path / "src", files)
    (tmp_path / "tr").mkdir(exist_ok=True)
    result = build(BuildConfig(src, tmp_path / "tr", tmp_path / "site", langs=("en",), **kw))
    return result, [f for f in result.report.findings if f.code == "redirect" or f.code == "redirects"]


def test_a_bad_redirect_is_one_finding_with_file_and_line_and_writes_nothing(tmp_path):
    yaml_text = ("a.html: nowhere/page.py\n"            # no such page
                 "b.html: 'javascript:alert(1)'\n"      # no script URLs
                 "rwkv/index.html: rwkv/configs.py\n"   # a page of the site stays
                 "../up.html: rwkv/configs.py\n"        # never outside the site
                 "zh/x.html: rwkv/configs.py\n"         # a language's folder is the builder's
                 "c.txt: rwkv/configs.py\n"             # a page's URL ends in .html
                 "ok.html: rwkv/configs.py\n")
    result, found = _findings(tmp_path, {"rwkv/__init__.py": PAGE, "rwkv/configs.py": PAGE, "redirects.yaml": yaml_text})
    site = result.out
    by_line = {f.line: f for f in found}
    assert sorted(by_line) == [1, 2, 3, 4, 6]  # (zh/ is no language of this build: a path like any)
    assert all(f.path.endswith("redirects.yaml") for f in found)
    assert "not a page of this site" in by_line[1].message and "javascript" in by_line[2].message
    assert by_line[3].severity == "warning" and "stays" in by_line[3].message
    assert not (site / "a.html").exists() and not (site / "b.html").exists()
    assert "Receptance" in (site / "rwkv/index.html").read_text("utf-8")  # not overwritten
    assert _refresh(site / "ok.html") == "rwkv/configs.html"


def test_a_malformed_redirects_file_is_an_error_at_its_line_not_a_traceback(tmp_path):
    _, found = _findings(tmp_path, {"rwkv/__init__.py": PAGE, "redirects.yaml": "a.html: [1,\n"})
    assert [f.code for f in found] == ["redirects"] and found[0].line >= 1
    _, found = _findings(tmp_path, {"rwkv/__init__.py": PAGE, "redirects.yaml": "x: &a b\ny: *a\n"})
    assert "aliases" in found[0].message


def test_on_a_file_system_blind_to_case_a_case_only_redirect_is_skipped_with_a_note(tmp_path):
    from labml_site.read.structure import discover
    from labml_site.read.redirects import RedirectRule
    from labml_site.render.redirect import plan_redirects
    files = discover(write_tree(tmp_path / "src", {"rwkv/__init__.py": PAGE, "rwkv/configs.py": PAGE}))
    published = {f.rel: f.url for f in files.pages}
    moved = {"RWKV/index.html": "rwkv/index.html"}
    rules = [RedirectRule("Rwkv/configs.html", "rwkv/configs.py", 1), RedirectRule("elsewhere.html", "rwkv/configs.py", 2)]
    kept, notes = plan_redirects(rules, moved, files, published, ("en",), case_sensitive=True)
    assert [r.old for r in kept] == ["RWKV/index.html", "Rwkv/configs.html", "elsewhere.html"]
    kept, notes = plan_redirects(rules, moved, files, published, ("en",), case_sensitive=False)
    assert [r.old for r in kept] == ["elsewhere.html"]  # the others would overwrite the pages
    assert len(notes) == 2 and all(n.severity == "warning" and "only in case" in n.message for n in notes)


def test_the_case_probe_tells_this_file_system(tmp_path):
    from labml_site.read.redirects import case_sensitive
    (tmp_path / "a").write_text("x")
    expected = not (tmp_path / "A").exists()
    assert case_sensitive(tmp_path) is expected
    assert case_sensitive(tmp_path / "not" / "yet") is expected  # the nearest folder that exists
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]  # the probe leaves nothing


# --- tables and rules ----------------------------------------------------------------------------

from labml_site.read.prose import section_blocks  # noqa: E402
from labml_site.read.rules import LINE_RULES  # noqa: E402
from labml_site.read.sections import parse_source  # noqa: E402
from labml_site.translate.catalog import Catalog  # noqa: E402

TABLE = ("| Task | Metric `x|y` |  Value |\n"
         "|------|:------:|---:|\n"
         "| anli | $|a|$ | 0.3 |\n"
         "|      | a \\| b |\n")


def _key(markdown: str) -> str:
    parsed = parse_source(markdown, "a.md")
    return "".join(b.key for s in parsed.sections for b in section_blocks(s))


def _original_key(markdown: str) -> str:
    """The key the original rule (no tables, no rules) makes: ours without those two rules."""
    saved = [(name, LINE_RULES[name], LINE_RULES.priority(name)) for name in ("table", "thematic_break")]
    for name, _, _ in saved:
        LINE_RULES.deregister(name)
    try:
        return _key(markdown)
    finally:
        for name, rule, priority in saved:
            LINE_RULES.register(rule, name, priority)


def test_a_table_is_a_table_with_alignment_and_cells_cut_outside_code_and_math():
    key = _key("Intro.\n\n" + TABLE)
    assert key == (
        "<p>Intro.</p>\n<table>\n<thead>\n"
        '<tr><th>Task</th><th align="center">Metric <span translate=no>_^_0_^_</span></th><th align="right">Value</th></tr>\n'
        "</thead>\n<tbody>\n"
        '<tr><td>anli</td><td align="center"><span translate=no>_^_1_^_</span></td><td align="right">0.3</td></tr>\n'
        '<tr><td></td><td align="center">a | b</td><td align="right"></td></tr>\n'  # a short row is filled
        "</tbody>\n</table>\n"
    )


def test_what_is_not_a_table_keeps_the_key_it_had():
    for text in ("| a | b |\n|---|\n| 1 | 2 |\n",        # the delimiter row has fewer cells
                 "Text first\n| a | b |\n|---|---|\n",     # inside a paragraph
                 "a | b\n\nno delimiter | row\n"):
        assert "<table>" not in _key(text) and _key(text) == _original_key(text)


def test_rules_are_hr_but_a_dash_line_under_text_stays_text():
    assert _key("A.\n\n---\n\nB.") == "<p>A.</p>\n<hr>\n<p>B.</p>\n"
    assert _key("* * *\n") == "<hr>\n"  # a rule, not a list item
    assert _key("___\n") == _key("- - -\n") == "<hr>\n"
    assert _key("A.\n---\n") == _original_key("A.\n---\n")  # (Markdown's setext heading)


def _catalog(tmp_path: Path, entries: dict[str, str]) -> Catalog:
    return Catalog.load(write_json(tmp_path / "a.zh.json", entries), "zh")


def test_a_translation_of_the_untabled_key_is_shown_as_the_table(tmp_path):
    text = "# T\n\n" + TABLE.replace("`x|y`", "`x`").replace("a \\| b", "b") + "\nAfter.\n\n---\n\nEnd."
    key, original = _key(text), _original_key(text)
    assert key != original and "<table>" in key and "<hr>" in key
    value = original.replace("Task", "任务").replace("Value", "值").replace("After.", "之后。").replace("End.", "完。")
    verdict = _catalog(tmp_path, {original: value}).verdict(key)
    assert verdict.state == "translated"
    assert "<th>任务</th>" in verdict.html and '<th align="right">值</th>' in verdict.html
    assert "<p>之后。</p>\n<hr>\n<p>完。</p>" in verdict.html and "|" not in verdict.html


def test_an_untabled_translation_whose_cells_cannot_be_told_apart_shows_as_the_paragraph(tmp_path):
    text = "| a | b |\n|---|---|\n| c | d |\n"
    key, original = _key(text), _original_key(text)
    value = '<p>| 甲 | |---|---| | 丙 |</p>\n'  # two cells lost: which ones is not known
    verdict = _catalog(tmp_path, {original: value}).verdict(key)
    assert verdict.html is not None and "<table>" not in verdict.html and "甲" in verdict.html
    # a "|" inside an attribute is never a cell boundary: the paragraph as written
    value = '<p>| <a title="x | y" href="#">甲</a> | 乙 | |---|---| | 丙 | 丁 |</p>\n'
    verdict = _catalog(tmp_path, {original.replace("a |", '<a title="x | y" href="#">a</a> |'): value}).verdict(
        key.replace("<th>a</th>", '<th><a title="x | y" href="#">a</a></th>'))
    assert verdict.html is None or "<table>" not in verdict.html


def test_a_translated_table_keeps_its_alignment_and_anything_unsafe_is_refused(tmp_path):
    key = _key("| a | b |\n|:--|---|\n| c | d |\n")
    value = key.replace("<td>d</td>", "<td>丁</td>").replace('<th align="left">a</th>', '<th align="left">甲</th>')
    verdict = _catalog(tmp_path, {key: value}).verdict(key)
    assert verdict.state == "translated" and verdict.html == value  # table tags and align= are allowed
    for bad in ('<th align="javascript:x">甲</th>', '<th align="left" onclick="alert(1)">甲</th>',
                '<th align="left">甲<script>alert(1)</script></th>', '<th align="left" style="x">甲</th>'):
        verdict = _catalog(tmp_path, {key: value.replace('<th align="left">甲</th>', bad)}).verdict(key)
        assert verdict.state == "invalid" and verdict.html is None, bad  # the page shows the English


def test_a_markdown_page_with_a_table_and_a_rule_renders_them(tmp_path):
    site = _build(tmp_path, {"g/results.md": "# Results\n\n" + TABLE + "\n---\n\nDone.\n"}, langs=("en",))
    soup = BeautifulSoup((site / "g/results.html").read_text("utf-8"), "html.parser")
    table = soup.find("table")
    assert [th.get_text() for th in table.find_all("th")][0] == "Task"
    assert len(table.find_all("tr")) == 3 and soup.find("hr") is not None
    assert table.find("math") is not None  # the cell's $|a|$ is a formula


# --- the benchmarks' checks ------------------------------------------------------------------------

def _benchmark(name: str):
    import importlib.util
    import sys
    path = Path(__file__).resolve().parent.parent / "benchmarks" / f"{name}.py"
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # (its dataclasses look their module up)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(path.parent))


def test_the_fidelity_check_counts_original_urls_by_their_exact_case(tmp_path):
    from labml_site.render.redirect import redirect_html
    fidelity = _benchmark("labml_fidelity")
    docs = write_tree(tmp_path / "docs", {p: "<html></html>" for p in (
        "a.html", "RWKV/index.html", "zh/RWKV/index.html", "Missing.html", "Gone.html", "si/a.html")})
    site = write_tree(tmp_path / "site", {
        "a.html": "<p>page</p>", "rwkv/index.html": "<p>page</p>", "zh/rwkv/index.html": "<p>page</p>",
        "RWKV/index.html": redirect_html("../rwkv/index.html", "R", "en"),
        "zh/RWKV/index.html": redirect_html("../rwkv/index.html", "R", "zh"),
        "missing.html": "<p>another case</p>",
        "Gone.html": redirect_html("nowhere.html", "G", "en"),
    })
    (tmp_path / "src").mkdir()
    found = fidelity.original_urls(docs, site, tmp_path / "src", ["en", "zh"])
    assert "3/5 (60.00 %) (1 pages, 2 redirects)" in found
    assert "missing: Missing.html" in found and "Gone.html (redirects to nowhere.html" in found
    assert "si 1" in found


def test_key_compat_counts_a_key_the_original_made_of_a_table(tmp_path):
    key_compat = _benchmark("key_compat")
    text = "# T\n\n| a | b |\n|---|---|\n| c | d |\n"
    source = write_tree(tmp_path, {"t.md": text}) / "t.md"
    original = _original_key(text)
    result = key_compat.compare(source, write_json(tmp_path / "t.zh.json", {original: "译"}), "t")
    assert (result.matched, result.total) == (1, 1)
