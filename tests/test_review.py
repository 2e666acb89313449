"""`review --base REF`: the translation changes since a git ref, as an offline HTML report and as
findings for CI annotations."""
from __future__ import annotations

import json
import re
import shutil

import pytest

from labml_site.cli.main import main
from workbench_fixture import HEADING, HEADING_ZH, QUERY, SCALE, make_project
from conftest import git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")




@pytest.fixture()
def repo(tmp_path, monkeypatch):
    make_project(tmp_path, {QUERY: "<p>查询和键给出一个分数 </p>\n"})
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "base")
    path = tmp_path / "tr/tut/page.zh.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data[HEADING] = HEADING_ZH  # added
    data[QUERY] = "<p>问题和钥匙给出一个分数 </p>\n"  # changed, against the glossary
    data[SCALE] = "<p> 缩放 </p>\n"  # broken: placeholders missing
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _review(root, *args):
    return main(["review", "--base", "main", "--source", str(root / "src"), "--translations", str(root / "tr"), *args])


def test_report_shows_each_changed_block_rendered_with_findings(repo):
    out = repo / "report.html"
    assert _review(repo, "--out", str(out)) == 1  # an error in a changed block
    html = out.read_text(encoding="utf-8")
    assert html.count('class="entry"') == 3
    assert re.search(r"我们把分数除以 (<span class=\"nowrap\">)?<math", html)  # the new translation rendered, math typeset
    assert "查询和键给出一个分数" in html and "问题和钥匙给出一个分数" in html  # old and new
    assert "glossary-term" in html and "“查询”" in html
    assert "placeholder-missing" in html
    assert only_the_reports_script(html) and "http://" not in html.replace('xmlns="http://www.w3.org/1998/Math/MathML"', "")


def only_the_reports_script(html: str) -> bool:
    """One script, the report's own, and a CSP that allows that one only (by its hash)."""
    import base64
    import hashlib
    import re

    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode() if scripts else ""
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html)
    return (html.count("<script") == 1 and len(scripts) == 1 and csp is not None
            and f"script-src 'sha256-{digest}'" in csp.group(1) and "default-src 'none'" in csp.group(1))


def test_a_hostile_translation_is_shown_as_text(repo):
    path = repo / "tr/tut/page.zh.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data[QUERY] = '<p onclick="alert(1)">x<script>alert(2)</script></p>\n'
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    out = repo / "report.html"
    _review(repo, "--out", str(out))
    html = out.read_text(encoding="utf-8")
    assert "<script>alert(2)" not in html and "&lt;script&gt;alert(2)" in html
    assert only_the_reports_script(html)
    assert "unsafe-tag" in html


def test_github_annotations(repo, capsys):
    assert _review(repo, "--format", "github") == 1
    out = capsys.readouterr().out
    assert "::error file=" in out and "placeholder-missing" in out
    # errors only, and one summary: a warning (the glossary's) is the report's, not the diff's
    assert "::warning" not in out and "glossary-term" not in out
    assert [line for line in out.splitlines() if line.startswith("::notice")] == [
        "::notice title=labml-site::3 changed entries in 1 files since main: 2 errors, 4 warnings"]
    assert "file=tr/tut/page.zh.json" in out and "file=/" not in out  # paths relative, for the diff


def test_nothing_changed_and_a_bad_ref(repo, capsys):
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "next")
    out = repo / "report.html"
    assert _review(repo, "--out", str(out)) == 0
    assert "No translation file changed" in out.read_text(encoding="utf-8")
    inputs = ["--source", str(repo / "src"), "--translations", str(repo / "tr")]
    assert main(["review", "--base=--output=/tmp/x", *inputs]) == 2  # never an option to git
    assert main(["review", "--base", "no-such-ref", *inputs]) == 2
    assert "not a commit" in capsys.readouterr().err


def test_new_untracked_file_counts_as_added(repo):
    (repo / "tr/tut/page.ja.json").write_text(json.dumps({HEADING: "<h1>注意</h1>\n<p><span translate=no>_^_0_^_</span></p>\n"}), encoding="utf-8")
    out = repo / "report.html"
    _review(repo, "--out", str(out))
    html = out.read_text(encoding="utf-8")
    assert "page.ja.json" in html


def test_links_made_live_against_the_published_site():
    from labml_site.builder.review import live_links

    block = ('<p><a href="softmax.html#rows">softmax</a>, <a href="https://x.org/">x</a>, '
             '<a href="#here">here</a>, <a href="../index.html">up</a></p>')
    out = live_links(block, "https://example.org/docs/", "zh/tut/page.html")
    assert 'href="https://example.org/docs/zh/tut/softmax.html#rows"' in out
    assert 'href="https://x.org/"' in out and 'href="#here"' in out
    assert 'href="https://example.org/docs/zh/index.html"' in out
    assert live_links(block, "", "zh/tut/page.html") == block


def test_site_url_option(repo):
    out = repo / "report.html"
    assert _review(repo, "--out", str(out), "--site-url", "https://example.org/docs/") == 1
    assert out.is_file()
