"""The translation editor in the real browser: open a block, type, insert a placeholder with the
keyboard, see the checks and the glossary inline, save, see the page update in place, reload and
find the translation in the built page and in the JSON file."""
from __future__ import annotations

import json

import pytest

from labml_site.workbench.editor import start
from workbench_fixture import HEADING, QUERY, SCALE, make_project

pytestmark = pytest.mark.browser


SESSIONS: list = []


@pytest.fixture()
def editor(tmp_path):
    config = make_project(tmp_path)
    session, server, url = start(config, "zh", reviewer="Ada")
    SESSIONS.append(session)
    yield tmp_path, url.replace("/?token=", "/zh/tut/page.html?token=")
    server.shutdown()
    server.server_close()


def _ready(page, url):
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_selector("html[data-workbench=ready]", timeout=15000)
    return errors


def test_translate_a_block_with_the_keyboard(browser, editor):
    root, url = editor
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors = _ready(page, url)
    assert page.locator(".wb-block").count() == 3
    assert page.locator('.wb-block[data-status="untranslated"]').count() == 3

    page.keyboard.press("Alt+n")  # the first untranslated block of the page
    page.wait_for_selector(".wb-editor")
    assert page.locator(".wb-current").get_attribute("data-index") == "2"
    # The editor starts from the English with the first words selected: type over them.
    page.keyboard.type("缩放注意力")
    page.keyboard.press("Tab")  # the next run of words, with its spaces: "We divide the scores by "
    page.keyboard.type("我们把分数除以 ")
    page.keyboard.press("Tab")  # " before the softmax."
    page.keyboard.type("，再做 softmax。")
    page.wait_for_timeout(400)
    assert page.locator(".wb-editor .wb-ph math").count() == 1  # the placeholder shows its math
    # Delete the chip and put it back with Alt+0.
    page.evaluate("document.querySelector('.wb-editor .wb-ph').remove()")
    page.locator(".wb-editor").dispatch_event("input")
    page.wait_for_selector('.wb-finding[data-code="placeholder-missing"]', timeout=5000)
    page.evaluate("""() => {  // the cursor after "除以 "
        const ed = document.querySelector('.wb-editor');
        const walker = document.createTreeWalker(ed, NodeFilter.SHOW_TEXT);
        let n; while ((n = walker.nextNode())) { const i = n.nodeValue.indexOf('除以 ');
          if (i >= 0) { const r = document.createRange(); r.setStart(n, i + 3); r.collapse(true);
            const s = getSelection(); s.removeAllRanges(); s.addRange(r); return; } }
    }""")
    page.keyboard.press("Alt+0")
    page.wait_for_selector('.wb-finding[data-code="placeholder-missing"]', state="detached", timeout=5000)
    # 注意力 for "attention", and "softmax", a term the glossary keeps in English, kept
    assert page.locator('.wb-term[data-used="yes"]').count() == 2
    assert "<math" in page.inner_html(".wb-preview")
    page.screenshot(path=str(root / "editing.png"))

    page.keyboard.press("Control+s")
    page.wait_for_selector('.wb-block[data-index="2"][data-status="translated"]', timeout=15000)
    assert "我们把分数除以" in page.inner_text('.wb-block[data-index="2"]')  # updated in place
    assert page.locator('.wb-block[data-index="2"] math').count() == 1
    saved = json.loads((root / "tr/tut/page.zh.json").read_text(encoding="utf-8"))
    assert saved[HEADING] == (
        "<h1>缩放注意力</h1>\n<p>我们把分数除以 <span translate=no>_^_0_^_</span>，再做 softmax。</p>\n"
    )

    page.reload()
    page.wait_for_selector("html[data-workbench=ready]")
    assert page.locator('.wb-block[data-index="2"]').get_attribute("data-status") == "translated"
    built = (root / "site/zh/tut/page.html").read_text(encoding="utf-8")
    assert "我们把分数除以" in built and "再做 softmax" in built
    assert not errors
    page.close()


def test_checks_and_glossary_shown_inline_and_an_invalid_value_not_saved(browser, editor):
    root, url = editor
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors = _ready(page, url)
    before = (root / "tr/tut/page.zh.json").read_bytes()
    page.click('.wb-block[data-index="4"]')  # "The query and the key give one score"
    page.wait_for_selector(".wb-editor")
    assert [t.strip() for t in page.locator(".wb-term-en").all_inner_texts()] == ["query", "key"]
    assert page.locator(".wb-stale-value").all_text_contents() == ["<p>一个已经不在的段落。</p>\n"]  # reusable text
    page.keyboard.type("问题和钥匙给出一个分数")  # not the glossary's words
    page.wait_for_selector('.wb-finding[data-code="glossary-term"]', timeout=5000)
    assert page.locator('.wb-term[data-used="no"]').count() == 2
    # A stray closing tag is repaired now (a warning); markup that could run script never is.
    page.keyboard.type("<script>x</script>")
    page.wait_for_selector('.wb-finding[data-severity="error"][data-code="unsafe-tag"]', timeout=5000)
    page.keyboard.press("Control+s")
    page.wait_for_selector('.wb-message[data-kind="error"]', timeout=5000)
    assert (root / "tr/tut/page.zh.json").read_bytes() == before
    assert page.locator('.wb-block[data-index="4"]').get_attribute("data-status") == "untranslated"
    assert not errors
    page.close()


def test_a_concurrent_edit_is_reported_in_the_editor(browser, editor):
    root, url = editor
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors = _ready(page, url)
    page.click('.wb-block[data-index="3"]')
    page.wait_for_selector(".wb-editor")
    path = root / "tr/tut/page.zh.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data[SCALE] = "<p> 别人写的 <span translate=no>_^_0_^_</span> <span translate=no>_^_1_^_</span></p>\n"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    page.keyboard.type("我的")
    page.keyboard.press("Control+s")
    page.wait_for_selector('.wb-message[data-kind="error"]', timeout=5000)
    assert "changed on disk" in page.inner_text(".wb-message")
    assert json.loads(path.read_text(encoding="utf-8"))[SCALE] == data[SCALE]
    assert QUERY in json.loads(path.read_text(encoding="utf-8"))
    assert not errors
    page.close()



def test_an_outside_edit_shows_up_in_the_page(browser, editor):
    root, url = editor
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors = _ready(page, url)
    path = root / "tr/tut/page.zh.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data[QUERY] = "<p>查询和键给出一个分数 </p>\n"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    SESSIONS[-1].rebuild()  # what `translate`'s file watcher does after an outside change
    page.wait_for_selector('.wb-block[data-index="4"][data-status="translated"]', timeout=10000)
    assert "查询和键给出一个分数" in page.inner_text('.wb-block[data-index="4"]')
    assert not errors
    page.close()


def test_the_editor_passes_axe(browser, editor):
    from conftest import ROOT

    axe = ROOT / "node_modules" / "axe-core" / "axe.min.js"
    if not axe.is_file():
        pytest.fail(f"{axe} is missing: run `npm ci` at the repository root")
    _root, url = editor
    failures = []
    for scheme in ("light", "dark"):
        page = browser.new_page(viewport={"width": 1400, "height": 900}, color_scheme=scheme)
        errors = _ready(page, url)
        page.keyboard.press("Alt+n")
        page.wait_for_selector(".wb-editor")
        page.wait_for_selector(".wb-finding, .wb-ok")
        page.evaluate(axe.read_text(encoding="utf-8"))  # (the editor's policy refuses an added <script>; DevTools may)
        result = page.evaluate("""() => axe.run({include: ['.wb-bar', '.wb-panel', '.wb-block']}, {
            runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']},
            resultTypes: ['violations'],
        })""")
        for v in result["violations"]:
            if v["impact"] in ("serious", "critical", "moderate"):
                failures.append(f"[{scheme}] {v['id']} ({v['impact']}): {v['help']} {[n['target'] for n in v['nodes'][:3]]}")
        assert not errors
        page.close()
    assert not failures, "\n".join(failures)
