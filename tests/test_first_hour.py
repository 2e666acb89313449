"""What a newcomer, an author and a translator meet in their first hour, tried as they would try
it: the command line (`python -m labml_site …`) in a fresh temporary tree.

- an author's tree gets its own languages, not the tutorial's;
- a theme that lacks a template or a file its templates link is refused before anything is
  built, in one `error:` line naming the file, exit 2;
- a syntax error is reported where Python reports it, line and column, and the summary tells
  pages built, kept from the last good build and skipped apart.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import write_json, write_tree
from labml_site.builder.theme import DEFAULT_TEMPLATES, REQUIRED_TEMPLATES, theme_problems
from test_cli import cli, one_error_line

PAGE = '"""\n# Page\n\nHello, reader.\n"""\nx = 1\n'


def _tree(tmp_path: Path, translations: dict[str, dict]) -> Path:
    write_tree(tmp_path / "source", {"tut/page.py": PAGE})
    for rel, data in translations.items():
        write_json(tmp_path / "translations" / rel, data)
    (tmp_path / "translations").mkdir(exist_ok=True)
    return tmp_path


def _built_languages(site: Path, page: str = "tut/page.html") -> set[str]:
    page = (site / page).read_text(encoding="utf-8")
    import re

    return set(re.findall(r'hreflang="([^"]+)"', page)) - {"x-default"}


# ---------------------------------------------------------------------------------------------
# 4. Default languages


def test_a_plain_build_uses_the_languages_of_the_authors_translations(tmp_path):
    root = _tree(tmp_path, {"tut/page.ja.json": {"Page": "ページ"}})
    p = cli("-q", cwd=root)  # `python -m labml_site` with no options, as the README says
    assert p.returncode == 0, p.stderr
    assert (root / "site/ja/tut/page.html").is_file()
    assert not (root / "site/zh").exists() and not (root / "site/ru").exists()
    assert _built_languages(root / "site") == {"en", "ja"}


def test_languages_come_from_every_file_in_the_folder_and_langs_still_wins(tmp_path):
    root = _tree(tmp_path, {"tut/page.ja.json": {"Page": "ページ"}, "tut/page.de.json": {"Page": "Seite"},
                            "tut/page.ko.fuzzy.json": {}, "glossary.fr.json": {"page": "page"}})
    p = cli("-q", "--translations", "translations", cwd=root)
    assert p.returncode == 0, p.stderr
    assert _built_languages(root / "site") == {"en", "de", "ja", "ko"}  # a sidecar names its language; a glossary does not
    p = cli("-q", "--langs", "en,ja", "--out", "site2", cwd=root)
    assert p.returncode == 0, p.stderr
    assert _built_languages(root / "site2") == {"en", "ja"}


def test_an_empty_translations_folder_builds_the_base_language_and_says_how_to_start(tmp_path):
    root = _tree(tmp_path, {})
    p = cli(cwd=root)
    assert p.returncode == 0, p.stderr
    assert _built_languages(root / "site") == {"en"} and not (root / "site/zh").exists()
    assert "extract --lang" in p.stderr


def test_the_shipped_tutorial_keeps_its_languages(tmp_path):
    from conftest import ROOT

    shutil.copytree(ROOT / "source", tmp_path / "source")
    shutil.copytree(ROOT / "translations", tmp_path / "translations")
    p = cli("-q", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert _built_languages(tmp_path / "site", "index.html") == {"en", "zh", "ru"}
    assert "0 errors, 0 warnings" in p.stderr  # the glossary's part of a clean first build


# ---------------------------------------------------------------------------------------------
# 5. Themes checked before building


def _theme(tmp_path: Path) -> Path:
    theme = tmp_path / "theme"
    shutil.copytree(DEFAULT_TEMPLATES, theme)
    return theme


def test_the_bundled_theme_is_whole():
    assert theme_problems(DEFAULT_TEMPLATES) == []


@pytest.mark.parametrize("missing, mentions", [
    ("base.html", ["base.html", "page.html"]),  # extended by every page template
    ("404.html", ["404.html"]),  # rendered by the builder
    ("static/style.css", ["static/style.css", "base.html"]),  # linked from base.html
    ("static/fonts/latinmodern-math.woff2", ["latinmodern-math.woff2", "math.css"]),  # url() of a stylesheet
])
def test_a_theme_without_a_file_it_needs_is_one_error_line_exit_2(tmp_path, missing, mentions):
    root = _tree(tmp_path, {})
    theme = _theme(tmp_path)
    (theme / missing).unlink()
    p = cli("--templates", str(theme), cwd=root)
    assert p.returncode == 2
    one_error_line(p, *mentions)
    assert not (root / "site").exists()  # refused before anything was built


def test_a_template_that_does_not_parse_is_named_with_its_line(tmp_path):
    root = _tree(tmp_path, {})
    theme = _theme(tmp_path)
    page = theme / "page.html"
    lines = page.read_text(encoding="utf-8").splitlines()
    lines.insert(2, "{% if %}")
    page.write_text("\n".join(lines) + "\n", encoding="utf-8")
    p = cli("--templates", str(theme), cwd=root)
    assert p.returncode == 2
    one_error_line(p, f"{theme.as_posix()}/page.html:3:")


def test_every_template_the_builder_renders_is_required():
    """The builder's template names (render/outputs/pages.py) are the ones the theme check asks for."""
    import re

    from conftest import ROOT

    source = (ROOT / "labml_site/render/outputs/pages.py").read_text(encoding="utf-8")
    rendered = set(re.findall(r'site\.template\("([\w.]+\.html)"', source))
    assert rendered and rendered <= set(REQUIRED_TEMPLATES), rendered


def test_a_static_file_the_builder_writes_itself_is_not_required(tmp_path):
    theme = _theme(tmp_path)
    assert not (theme / "static/pygments.css").exists()
    assert theme_problems(theme) == []


# ---------------------------------------------------------------------------------------------
# 7. Errors at the right place, and a summary that counts what was built


@pytest.mark.parametrize("code", [
    "x = (1,\n     2\ny = 3\n",  # a bracket never closed: tokenize only notices at the end
    "def f(:\n    pass\n",
    "if True:\n    x = 1\n  y = 2\n",  # a bad dedent
    'x = """never closed\n\ny = 1\n',
])
def test_a_syntax_error_is_reported_where_python_reports_it(tmp_path, code):
    text = '"""\n# Broken\n"""\n' + code
    root = _tree(tmp_path, {})
    (root / "source/tut/broken.py").write_text(text, encoding="utf-8")
    try:
        compile(text, "broken.py", "exec")
    except SyntaxError as e:
        expected = f"tut/broken.py:{e.lineno}:{e.offset}: error:"
    p = cli(cwd=root)
    assert p.returncode == 1
    assert expected in p.stderr, p.stderr
    assert "Traceback" not in p.stderr
    assert "1 page skipped (sources that do not parse), 1 errors" in p.stderr.splitlines()[-1]
    assert "built 1 page " in p.stderr.splitlines()[-1]  # tut/page.py alone
    assert not (root / "site/tut/broken.html").exists()


def test_a_page_that_stops_parsing_is_counted_as_kept_not_built(tmp_path):
    root = _tree(tmp_path, {})
    broken = root / "source/tut/broken.py"
    broken.write_text('"""\n# Fine\n"""\nx = 1\n', encoding="utf-8")
    p = cli(cwd=root)
    assert p.returncode == 0 and "built 2 pages" in p.stderr, p.stderr
    broken.write_text('"""\n# Fine\n"""\nx = (1\n', encoding="utf-8")
    p = cli(cwd=root)
    summary = p.stderr.splitlines()[-1]
    assert p.returncode == 1
    assert "built 1 page " in summary and "1 page kept from the last good build (sources that do not parse)" in summary
    assert "tut/broken.py:4:5: error:" in p.stderr
    assert (root / "site/tut/broken.html").is_file()  # the last good page is still there


def test_the_json_findings_carry_the_column(tmp_path):
    root = _tree(tmp_path, {})
    (root / "source/tut/broken.py").write_text('"""\n# Broken\n"""\nx = (1\n', encoding="utf-8")
    p = cli("--format", "json", cwd=root)
    findings = p.stderr[p.stderr.index("["): p.stderr.rindex("]") + 1]  # (a note and the summary around it)
    found = [f for f in json.loads(findings) if f["code"] == "source"]
    assert [(f["line"], f["col"]) for f in found] == [(4, 5)]


def test_a_file_that_tokenizes_but_is_not_python_is_reported_where_python_says(tmp_path):
    """`x = = 1` splits into sections fine, so the page builds; a learner running it gets a
    SyntaxError: the build says so at Python's own line and column."""
    import subprocess
    import sys

    src = tmp_path / "src"
    src.mkdir()
    (src / "page.py").write_text('"""\n# Page\n\nProse.\n"""\n\nx = 1\ny = = 2\n', encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "labml_site", "build", "--source", str(src), "--translations",
                           str(tmp_path / "tr"), "--out", str(tmp_path / "site")], capture_output=True, text=True, timeout=120)
    said = done.stdout + done.stderr
    assert done.returncode == 0 and (tmp_path / "site" / "page.html").is_file(), said
    assert "page.py:8:5: warning: invalid Python (invalid syntax)" in said, said
    assert "Traceback" not in said
