"""A review a maintainer can act on: the character-level diff of each entry, approving and
rejecting entries (the review sidecar, which the next `review` and `stats` read), and the report's
filters and buttons in the real browser."""
from __future__ import annotations

import json
import os
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labml_site.cli.main import main
from labml_site.translate.review import apply_decisions, char_diff, decision_id, diff_html
from labml_site.translate.review_state import load, value_digest
from workbench_fixture import HEADING, HEADING_ZH, QUERY, SCALE, make_project
from conftest import git

BAD = "<p> 缩放 </p>\n"
NEW_QUERY = "<p>查询和键给出一个得分 </p>\n"


def _sides(ops):
    old = "".join(t for op, t in ops if op in "=-")
    new = "".join(t for op, t in ops if op in "=+")
    return old, new


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_the_diff_gives_back_both_sides(old, new):
    ops = char_diff(old, new)
    assert _sides(ops) == (old, new)
    assert all(a[0] != b[0] for a, b in zip(ops, ops[1:]))  # runs are merged


def test_the_diff_is_by_character():
    assert char_diff("查询和键给出一个分数", "查询和键给出一个得分") == [
        ("=", "查询和键给出一个"), ("+", "得"), ("=", "分"), ("-", "数")]
    html = diff_html("<p>a</p>", "<p>ab</p>")
    assert html == '<pre class="diff">&lt;p&gt;a<ins>b</ins>&lt;/p&gt;</pre>'


def test_a_long_value_is_diffed_by_words_then_lines():
    old = "word " * 3000 + "end"
    new = "word " * 1500 + "changed " + "word " * 1500 + "end"
    ops = char_diff(old, new)
    assert _sides(ops) == (old, new)
    assert [t.strip() for op, t in ops if op != "="] == ["changed"]  # by word: one insertion, no noise
    huge_old, huge_new = "x\n" * 100_000, "x\n" * 50_000 + "y\n" + "x\n" * 50_000
    assert _sides(char_diff(huge_old, huge_new)) == (huge_old, huge_new)  # by line: returns, and exact


# ---------------------------------------------------------------------------------------------
# Decisions




@pytest.fixture()
def repo(tmp_path, monkeypatch):
    if shutil.which("git") is None:
        pytest.skip("needs git")
    make_project(tmp_path, {QUERY: "<p>查询和键给出一个分数 </p>\n"})
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "base")
    path = tmp_path / "tr/tut/page.zh.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data[HEADING] = HEADING_ZH
    data[QUERY] = NEW_QUERY
    data[SCALE] = BAD
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _inputs(root):
    return ["--source", str(root / "src"), "--translations", str(root / "tr")]


def _decisions(*items) -> bytes:
    return json.dumps({"decisions": [
        {"file": "tut/page.zh.json", "key": key, "value": value_digest(value), "decision": decision}
        for key, value, decision in items]}, ensure_ascii=False).encode()


def test_approve_and_reject_write_the_sidecar_that_stats_and_review_read(repo, capsys):
    decisions = repo / "review-decisions.json"
    decisions.write_bytes(_decisions((HEADING, HEADING_ZH, "approve"), (QUERY, NEW_QUERY, "reject")))
    assert main(["review", "--apply", str(decisions), "--reviewer", "Ada", *_inputs(repo)]) == 0
    assert "recorded 1 approved and 1 rejected" in capsys.readouterr().err
    reviews = load(repo / "tr/tut/page.zh.json")
    assert reviews[HEADING].status == "approved" and reviews[HEADING].by == "Ada"
    assert reviews[QUERY].status == "rejected" and reviews[QUERY].current(NEW_QUERY)
    raw = json.loads((repo / "tr/tut/page.zh.review.json").read_text(encoding="utf-8"))
    assert "status" not in raw[HEADING] and raw[QUERY]["status"] == "rejected"  # approvals as before

    assert main(["stats", "--json", *_inputs(repo)]) == 0
    (row,) = json.loads(capsys.readouterr().out)["pages"]
    assert (row["reviewed"], row["rejected"]) == (1, 1)

    out = repo / "report.html"
    main(["review", "--base", "main", "--out", str(out), *_inputs(repo)])
    html = out.read_text(encoding="utf-8")
    assert html.count('data-decision="approved"') == 1 and html.count('data-decision="rejected"') == 1
    assert "approved by Ada" in html and "rejected by Ada" in html
    assert main(["review", "--base", "main", "--format", "text", *_inputs(repo)]) == 1
    assert "1 approved, 1 rejected" in capsys.readouterr().err


def test_a_decision_on_a_value_that_changed_since_is_skipped(repo):
    done = apply_decisions(repo / "tr", _decisions((QUERY, "<p>an older text</p>\n", "approve")), "Ada")
    assert (done.approved, done.rejected) == (0, 0)
    assert [f.code for f in done.findings] == ["decision-outdated"]
    assert not (repo / "tr/tut/page.zh.review.json").exists()


@pytest.mark.parametrize("name", ["../outside.zh.json", "/etc/passwd.json", "tut/page.zh.review.json",
                                  "tut/../../x.zh.json", "tut/page\n.zh.json", "tut\\page.zh.json"])
def test_a_decision_names_only_translation_files_inside_the_folder(repo, name):
    data = json.dumps({"decisions": [{"file": name, "key": HEADING, "value": value_digest(HEADING_ZH),
                                      "decision": "approve"}]}).encode()
    done = apply_decisions(repo / "tr", data, "Mallory")
    assert done.approved == 0 and [f.code for f in done.findings] == ["decisions-file"]


def test_a_linked_translation_file_is_refused(repo, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "page.zh.json"
    shutil.copy(repo / "tr/tut/page.zh.json", elsewhere)
    (repo / "tr/tut/link.zh.json").symlink_to(elsewhere)
    data = json.dumps({"decisions": [{"file": "tut/link.zh.json", "key": HEADING, "value": value_digest(HEADING_ZH),
                                      "decision": "approve"}]}).encode()
    done = apply_decisions(repo / "tr", data, "Mallory")
    assert done.approved == 0 and done.findings and done.findings[0].severity == "error"
    assert not (elsewhere.parent / "page.zh.review.json").exists()


@pytest.mark.parametrize("data", [b"", b"[]", b'{"decisions": 3}', b"\xff", b"[" * 100_000,
                                  b'{"decisions": [{"file": 1}]}'])
def test_a_broken_decisions_file_is_one_error(repo, data):
    done = apply_decisions(repo / "tr", data, "Ada")
    assert done.approved == 0 and done.findings and all(f.code == "decisions-file" for f in done.findings)


def test_apply_needs_a_name_and_a_file(repo, capsys):
    assert main(["review", "--apply", str(repo / "none.json"), "--reviewer", "Ada", *_inputs(repo)]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["review", *_inputs(repo)]) == 2  # neither --base nor --apply
    assert "--base REF" in capsys.readouterr().err


def test_the_decision_id_names_the_file_key_and_digest():
    assert json.loads(decision_id("tut/page.zh.json", QUERY, NEW_QUERY)) == ["tut/page.zh.json", QUERY, value_digest(NEW_QUERY)]


# ---------------------------------------------------------------------------------------------
# In the browser


@pytest.mark.browser
def test_the_reports_filters_and_buttons_make_a_decisions_file_that_applies(repo, browser, capsys):
    out = repo / "report.html"
    main(["review", "--base", "main", "--out", str(out), *_inputs(repo)])
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors, blocked = [], []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: blocked.append(m.text) if "Content Security Policy" in m.text else None)
    page.goto(out.as_uri())
    visible = lambda: page.locator("section.entry:visible").count()  # noqa: E731
    assert visible() == 3 and page.locator("#f-count").inner_text() == "3 of 3 entries shown"
    page.check("#f-errors")
    assert visible() == 1 and "placeholder-missing" in page.locator("section.entry:visible").inner_text()
    page.uncheck("#f-errors")
    page.select_option("#f-lang", "zh")
    assert visible() == 3
    page.select_option("#f-page", "tut/page")
    assert visible() == 3
    # approve the heading, reject the changed query
    heading = page.locator("section.entry", has_text="缩放注意力")
    heading.locator("button.approve").click()
    query = page.locator("section.entry", has_text="得分")
    query.locator("button.reject").click()
    assert heading.get_attribute("data-decision") == "approved" and query.get_attribute("data-decision") == "rejected"
    page.select_option("#f-decision", "undecided")
    assert visible() == 1
    page.select_option("#f-decision", "")
    assert page.locator("#decisions").is_visible() and page.locator("#d-count").inner_text() == "2 decisions"
    with page.expect_download() as download:
        page.click("#d-save")
    saved = repo / "review-decisions.json"
    download.value.save_as(saved)
    import jsonschema
    from conftest import ROOT

    schema = json.loads((ROOT / "labml_site/schemas/decisions.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(json.loads(saved.read_text(encoding="utf-8")))
    assert not errors and not blocked, (errors, blocked)  # the report's own script runs under its CSP
    page.close()
    assert main(["review", "--apply", str(saved), "--reviewer", "Ada", *_inputs(repo)]) == 0
    reviews = load(repo / "tr/tut/page.zh.json")
    assert reviews[HEADING].status == "approved" and reviews[QUERY].status == "rejected"


@pytest.mark.browser
def test_a_script_in_a_translation_never_runs_in_the_report(repo, browser):
    path = repo / "tr/tut/page.zh.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data[QUERY] = '<p>x<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script></p>\n'
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    out = repo / "report.html"
    main(["review", "--base", "main", "--out", str(out), *_inputs(repo)])
    page = browser.new_page()
    page.goto(out.as_uri())
    page.wait_for_timeout(200)
    assert page.title() != "pwned" and page.locator("section.entry").count() == 3
    page.close()


@pytest.mark.skipif(not os.environ.get("LABML_SITE_SCREENSHOTS"), reason="writes docs/images/review-report.png when asked")
@pytest.mark.browser
def test_screenshot_of_the_report(repo, browser):
    from conftest import ROOT

    out = repo / "report.html"
    main(["review", "--base", "main", "--out", str(out), *_inputs(repo)])
    page = browser.new_page(viewport={"width": 1280, "height": 1500})
    page.goto(out.as_uri())
    page.locator("section.entry", has_text="缩放注意力").locator("button.approve").click()
    page.locator("section.entry", has_text="得分").locator("button.reject").click()
    page.screenshot(path=str(ROOT / "docs" / "images" / "review-report.png"), full_page=False)
    page.close()
