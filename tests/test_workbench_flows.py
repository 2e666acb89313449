"""The editor's flows in the real browser (Chromium): nothing typed is lost (a conflict resolved
three ways, a server that goes away and comes back, drafts after a reload and a restart), no
accidental "translated" (the English unchanged, an emptied value, the one verdict), editing
comfort (the placeholder picker, quotes as characters, messages in chips, the layout, one total)
and the translation memory with its concordance."""
from __future__ import annotations

import json

import pytest

from conftest import write_tree
from labml_site.builder.config import BuildConfig
from labml_site.translate.catalog import Catalog
from labml_site.workbench.editor import start
from labml_site.workbench.server import make_server
from workbench_fixture import HEADING, HEADING_ZH, QUERY, SCALE, make_project

pytestmark = pytest.mark.browser

# A block with twelve placeholders and quoted words, and a page for the memory to suggest from.
MATH = " ".join(f"${chr(97 + i)}_{i}$" for i in range(12))
LONG = f'''"""
---
title: Many symbols
---

# Many symbols

The "input" holds {MATH} and the 'output' is the sum of them all.
"""

x = 1
'''


def _project(root, memory=()):
    config = make_project(root)
    write_tree(root / "src", {"tut/many.py": LONG})
    return config


@pytest.fixture()
def editor(tmp_path):
    config = _project(tmp_path)
    session, server, url = start(config, "zh", reviewer="Ada")
    state = {"server": server}
    yield tmp_path, session, url, state
    state["server"].shutdown()
    state["server"].server_close()


def _open(browser, url, page_url="tut/page.html"):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url.replace("/?token=", f"/zh/{page_url}?token="))
    page.wait_for_selector("html[data-workbench=ready]", timeout=15000)
    return page, errors


def _file(root):
    return root / "tr/tut/page.zh.json"


def _cursor_before(page, text, where=".wb-editor"):
    page.evaluate("""([text, where]) => { const ed = document.querySelector(where);
        const w = document.createTreeWalker(ed, NodeFilter.SHOW_TEXT); let n;
        while ((n = w.nextNode())) { const i = n.nodeValue.indexOf(text);
          if (i >= 0) { const r = document.createRange(); r.setStart(n, i); r.collapse(true);
            getSelection().removeAllRanges(); getSelection().addRange(r); return; } } }""", [text, where])


def _write_on_disk(root, key, value):
    data = json.loads(_file(root).read_text(encoding="utf-8"))
    data[key] = value
    _file(root).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


THEIRS = "<p>查询和键给出分数（别人写的） </p>\n"


@pytest.mark.parametrize("choice", ["keep-mine", "take-theirs", "edit-both"])
def test_a_conflict_shows_both_texts_and_every_way_out_saves(browser, editor, choice):
    root, _session, url, _ = editor
    page, errors = _open(browser, url)
    page.click('.wb-block[data-index="4"]')
    page.wait_for_selector(".wb-editor")
    page.keyboard.type("我的查询和键")
    _write_on_disk(root, QUERY, THEIRS)  # someone else saves meanwhile
    page.keyboard.press("Control+s")
    page.wait_for_selector(".wb-conflict-theirs", timeout=10000)
    assert "别人写的" in page.inner_text(".wb-conflict-theirs")
    assert "我的查询和键" in page.inner_text(".wb-conflict-mine")
    assert "我的查询和键" in page.inner_text(".wb-editor")  # nothing typed is gone
    if choice == "keep-mine":
        page.click(".wb-keep-mine")
        page.wait_for_selector('.wb-message[data-kind="ok"]', timeout=10000)
        assert json.loads(_file(root).read_text(encoding="utf-8"))[QUERY].startswith("<p>我的查询和键")
    elif choice == "take-theirs":
        page.click(".wb-take-theirs")
        assert "别人写的" in page.inner_text(".wb-editor")
        page.keyboard.press("End")
        _cursor_before(page, "（")
        page.keyboard.type("，已改")
        page.keyboard.press("Control+s")
        page.wait_for_selector('.wb-message[data-kind="ok"]', timeout=10000)
        assert "，已改（别人写的）" in json.loads(_file(root).read_text(encoding="utf-8"))[QUERY]
    else:
        page.click(".wb-edit-both")
        assert page.get_attribute(".wb-conflict-theirs", "contenteditable") == "true"
        page.click(".wb-conflict-theirs")
        _cursor_before(page, "（", ".wb-conflict-theirs")
        page.keyboard.type("合并")
        page.click(".wb-use-theirs")
        assert "合并" in page.inner_text(".wb-editor")
        page.keyboard.press("Control+s")
        page.wait_for_selector('.wb-message[data-kind="ok"]', timeout=10000)
        assert "合并" in json.loads(_file(root).read_text(encoding="utf-8"))[QUERY]
    assert page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('labml-wb-draft')).length") == 0
    assert not errors
    page.close()


def test_a_server_that_goes_away_is_reported_with_a_retry_and_the_text_kept(browser, editor):
    root, session, url, state = editor
    page, errors = _open(browser, url)
    page.click('.wb-block[data-index="4"]')
    page.wait_for_selector(".wb-editor")
    page.keyboard.type("查询和键给出一个分数")
    port, token = state["server"].server_address[1], url.split("token=")[1]
    state["server"].shutdown()
    state["server"].server_close()
    page.keyboard.press("Control+s")
    page.wait_for_selector(".wb-retry-button", timeout=25000)
    assert page.get_attribute(".wb-message", "data-kind") == "error"
    assert "does not answer" in page.inner_text(".wb-connection") or "cannot be reached" in page.inner_text(".wb-actions")
    assert "查询和键给出一个分数" in page.inner_text(".wb-editor")
    draft = page.evaluate("Object.entries(localStorage).filter(([k]) => k.startsWith('labml-wb-draft')).map(([, v]) => JSON.parse(v).value)")
    assert len(draft) == 1 and "查询和键给出一个分数" in draft[0]
    # The server comes back (the same session's token): Retry saves.
    server, _ = make_server(session, port, token=token)
    import threading

    threading.Thread(target=server.serve_forever, daemon=True).start()
    state["server"] = server
    page.click(".wb-retry-button")
    page.wait_for_selector('.wb-message[data-kind="ok"]', timeout=15000)
    assert json.loads(_file(root).read_text(encoding="utf-8"))[QUERY].startswith("<p>查询和键给出一个分数")
    page.wait_for_selector(".wb-connection[data-kind=ok]", state="attached", timeout=10000)
    assert not errors
    page.close()


def test_a_draft_is_offered_after_a_reload_and_after_a_restart(browser, editor):
    root, session, url, state = editor
    page, errors = _open(browser, url)
    before = _file(root).read_bytes()
    page.click('.wb-block[data-index="4"]')
    page.wait_for_selector(".wb-editor")
    page.keyboard.type("草稿的文字")
    page.reload()
    page.wait_for_selector("html[data-workbench=ready]")
    assert _file(root).read_bytes() == before  # nothing saved
    assert "1 unsaved draft" in page.inner_text(".wb-drafts")
    assert page.get_attribute('.wb-block[data-index="4"]', "data-draft") == "yes"
    page.click(".wb-drafts")
    page.wait_for_selector(".wb-draft-restore")
    assert "this session" in page.inner_text(".wb-actions")
    page.click(".wb-draft-restore")
    assert "草稿的文字" in page.inner_text(".wb-editor")
    # A restart: a new server (a new token) on the same port, the address it prints opened again.
    port = state["server"].server_address[1]
    state["server"].shutdown()
    state["server"].server_close()
    server, token = make_server(session, port)
    import threading

    threading.Thread(target=server.serve_forever, daemon=True).start()
    state["server"] = server
    page.wait_for_selector(".wb-connection:has-text('session has ended')", timeout=15000)
    page.goto(f"http://127.0.0.1:{port}/zh/tut/page.html?token={token}")
    page.wait_for_selector("html[data-workbench=ready]")
    page.click('.wb-block[data-index="4"]')
    page.wait_for_selector(".wb-draft-restore")
    page.click(".wb-draft-restore")
    page.keyboard.press("Control+s")
    page.wait_for_selector('.wb-message[data-kind="ok"]', timeout=10000)
    assert "草稿的文字" in json.loads(_file(root).read_text(encoding="utf-8"))[QUERY]
    assert page.locator(".wb-drafts").count() == 0
    assert not errors
    page.close()


def test_the_english_unchanged_is_saved_only_when_confirmed(browser, editor):
    root, _session, url, _ = editor
    page, errors = _open(browser, url)
    before = _file(root).read_bytes()
    page.keyboard.press("Alt+n")
    page.wait_for_selector(".wb-editor")
    index = page.get_attribute(".wb-panel", "data-index")
    page.keyboard.press("Control+Enter")  # the untouched copy of the English
    page.wait_for_selector(".wb-confirm-english", timeout=10000)
    assert page.get_attribute(".wb-panel", "data-index") == index  # not moved on
    assert _file(root).read_bytes() == before
    assert page.get_attribute(f'.wb-block[data-index="{index}"]', "data-status") == "untranslated"
    page.click(".wb-confirm-english")
    page.wait_for_selector(f'.wb-block[data-index="{index}"][data-status="translated"]', timeout=10000)
    assert json.loads(_file(root).read_text(encoding="utf-8"))[HEADING] == HEADING
    assert not errors
    page.close()


def test_an_emptied_value_is_saved_as_empty_and_the_states_are_the_verdicts(browser, tmp_path):
    config = make_project(tmp_path, {HEADING: HEADING_ZH, SCALE: "<p>坏</p>\n"})
    session, server, url = start(config, "zh")
    try:
        page, errors = _open(browser, url)
        # Every block's state on the page is the one verdict (`Catalog.verdict`, as check and stats).
        catalog = Catalog.load(_file(tmp_path), "zh")
        for i, b in enumerate(page.evaluate("""fetch('/__workbench/api/page?url=tut/page.html', {headers: {'X-Workbench-Token':
            document.querySelector('meta[name=labml-workbench-token]').content}}).then(r => r.json()).then(d => d.blocks)""")):
            if not b["plain"]:
                assert page.get_attribute(f'.wb-block[data-index="{i}"]', "data-status") == catalog.verdict(b["key"]).state
        assert page.get_attribute('.wb-block[data-index="3"]', "data-status") == "invalid"
        page.click('.wb-block[data-index="2"]')
        page.wait_for_selector(".wb-editor")
        page.click(".wb-editor")
        page.keyboard.press("Control+a")
        page.keyboard.press("Delete")
        page.keyboard.press("Control+s")
        page.wait_for_selector('.wb-block[data-index="2"][data-status="untranslated"]', timeout=10000)
        assert json.loads(_file(tmp_path).read_text(encoding="utf-8"))[HEADING] == ""
        assert not errors
        page.close()
    finally:
        server.shutdown()
        server.server_close()


def test_placeholder_picker_quotes_chips_layout_and_one_total(browser, editor):
    root, _session, url, _ = editor
    page, errors = _open(browser, url, "tut/many.html")
    page.click('.wb-block[data-index="1"]')
    page.wait_for_selector(".wb-editor")
    text = page.inner_text(".wb-editor")
    assert '"input"' in text and "'output'" in text and "&quot;" not in text and "&#x27;" not in text
    assert page.locator(".wb-editor .wb-ph").count() == 12
    # Remove placeholder 11, then put it back from the keyboard: Alt+9, type "11", Enter.
    page.evaluate("document.querySelector('.wb-editor .wb-ph[data-n=\"11\"]').remove()")
    page.locator(".wb-editor").dispatch_event("input")
    finding = page.wait_for_selector('.wb-finding[data-code="placeholder-missing"]', timeout=5000)
    assert finding.query_selector(".wb-ph[data-n='11'] math") is not None  # the message shows the chip
    assert "_^_" not in finding.inner_text()
    _cursor_before(page, " and the")
    page.keyboard.press("Alt+9")
    page.wait_for_selector(".wb-picker-filter:focus")
    page.keyboard.type("11")
    assert page.get_attribute('.wb-picker-item[aria-selected="true"]', "data-n") == "11"
    page.keyboard.press("Enter")
    page.wait_for_selector('.wb-finding[data-code="placeholder-missing"]', state="detached", timeout=5000)
    assert page.locator(".wb-editor .wb-ph").count() == 12 and page.locator(".wb-picker").count() == 0
    # Type-to-filter by what the placeholder shows: "k" matches only k_10.
    page.keyboard.press("Alt+9")
    page.keyboard.type("k")
    assert page.locator(".wb-picker-item").count() == 1
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement.classList.contains('wb-editor')")
    # The English keeps at least 40 % of the panel; the editor is in view.
    panel = page.locator(".wb-panel").bounding_box()
    english = page.locator(".wb-english").bounding_box()
    box = page.locator(".wb-editor").bounding_box()
    assert english["width"] >= 0.4 * panel["width"]
    assert 0 <= box["y"] and box["y"] + min(box["height"], 100) <= 900
    # One total: the bar's is the page's, as `stats` counts it (title + the block).
    assert "/2 translated" in page.inner_text(".wb-counts")
    assert not errors
    page.close()


def test_translation_memory_and_concordance(browser, tmp_path):
    config = _project(tmp_path)
    _write_on_disk(tmp_path, HEADING, HEADING_ZH)  # in the site: the memory offers it elsewhere
    other = tmp_path / "other_cache"
    write_tree(other, {"x/page.zh.json": json.dumps({
        "<p>Many symbols</p>\n": "<p>许多符号</p>\n", "<p>The sum of them all</p>\n": "<p>它们全部的总和</p>\n"},
        ensure_ascii=False)})
    session, server, url = start(config, "zh", memory=(other,))
    try:
        session.memory_ready.wait(10)
        page, errors = _open(browser, url, "tut/many.html")
        page.click(".wb-meta")  # the title, "Many symbols"
        page.wait_for_selector(".wb-memory-item", timeout=10000)
        first = page.locator(".wb-memory-item").first
        assert first.get_attribute("data-percent") == "99"  # the same words, in other markup
        assert "许多符号" in first.inner_text() and "other_cache/x/page.zh.json" in first.inner_text()
        page.keyboard.press("Alt+m")
        assert "许多符号" in page.inner_text(".wb-editor")
        page.keyboard.press("Alt+f")
        page.keyboard.type("softmax")
        page.keyboard.press("Enter")
        page.wait_for_selector(".wb-concordance-item", timeout=10000)
        hit = page.locator(".wb-concordance-item").first
        assert "再做 softmax" in hit.inner_text() and hit.locator("mark").count() == 1
        assert "tut/page.zh.json" in hit.inner_text()
        assert not errors
        page.close()
    finally:
        server.shutdown()
        server.server_close()
