"""`translate`: the editor's server at the HTTP level (token, Host, refusals, atomic saves that
keep every other entry, concurrent edits) and the session behind it."""
from __future__ import annotations

import json

import pytest

from labml_site.translate.extract import dumps
from labml_site.workbench.editor import start
from workbench_fixture import HEADING, HEADING_ZH, QUERY, SCALE, Client, make_project


@pytest.fixture(scope="module")
def editor(tmp_path_factory):
    root = tmp_path_factory.mktemp("wb")
    config = make_project(root)
    session, server, url = start(config, "zh", reviewer="Ada")
    client = Client(server.server_address[1], url.split("token=")[1])
    yield root, session, client, url
    server.shutdown()
    server.server_close()


def _file(root):
    return root / "tr/tut/page.zh.json"


def test_page_state_lists_blocks_with_states_glossary_and_stale(editor):
    root, _session, client, _ = editor
    status, data = client.page()
    assert status == 200
    keys = [b["key"] for b in data["blocks"]]
    assert keys[:2] == ["Scaled attention", "How scores are scaled."] and HEADING in keys and QUERY in keys
    heading = next(b for b in data["blocks"] if b["key"] == HEADING)
    assert heading["status"] == "untranslated" and heading["section"]
    assert "<math" in heading["english"] and "<math" in heading["placeholders"][0]
    # (a row kept in English, softmax | softmax, asks that the word stay: it is listed too)
    assert [t["expected"] for t in heading["glossary"]] == [["注意力"], ["softmax"]]
    query = next(b for b in data["blocks"] if b["key"] == QUERY)
    assert [t["english"] for t in query["glossary"]] == ["query", "key"]
    assert data["stale"] == [{"key": "<p>An English block that is gone.</p>\n", "value": "<p>一个已经不在的段落。</p>\n"}]


def test_every_api_request_needs_the_token(editor):
    _root, _session, client, _ = editor
    assert client.json("GET", "/__workbench/api/page?url=tut/page.html", token=False)[0] == 403
    status, _ = client.json("POST", "/__workbench/api/save", {"url": "tut/page.html", "key": QUERY, "value": "x"},
                            token=False)
    assert status == 403
    wrong = client.json("POST", "/__workbench/api/save", {"url": "tut/page.html", "key": QUERY, "value": "x"},
                        headers={"X-Workbench-Token": "guess"})
    assert wrong[0] == 403


def test_host_header_and_origin_are_checked(editor):
    _root, _session, client, _ = editor
    for host in ("evil.example:80", f"evil.example:{client.port}", "127.0.0.1"):
        status, _, _ = client.request("GET", "/__workbench/api/page?url=tut/page.html", host=host)
        assert status == 421, host
    status, _ = client.json("POST", "/__workbench/api/check", {"url": "tut/page.html", "key": QUERY, "value": "x"},
                            headers={"Origin": "http://evil.example"})
    assert status == 403


def test_pages_get_the_token_only_with_the_session_cookie(editor):
    _root, _session, client, url = editor
    status, body, _ = client.request("GET", "/zh/tut/page.html", token=False)
    assert status == 403 and client.token.encode() not in body
    status, _, headers = client.request("GET", "/?token=" + client.token, token=False)
    assert status == 303 and "HttpOnly" in headers["Set-Cookie"] and "SameSite=Strict" in headers["Set-Cookie"]
    cookie = headers["Set-Cookie"].split(";")[0]
    status, body, _ = client.request("GET", "/zh/tut/page.html", token=False, headers={"Cookie": cookie})
    assert status == 200 and b"editor.js" in body and client.token.encode() in body
    assert client.request("GET", "/?token=wrong", token=False)[0] == 403


def test_writes_only_to_known_pages_and_keys(editor):
    root, _session, client, _ = editor
    before = _file(root).read_bytes()
    for url in ("../../etc/passwd", "tut/other.html", "/tut/page.html", ""):
        status, data = client.json("POST", "/__workbench/api/save", {"url": url, "key": QUERY, "value": "<p>x</p>\n"})
        assert status == 404, url
    status, data = client.json("POST", "/__workbench/api/save", {"url": "tut/page.html", "key": "<p>A key of my own</p>\n", "value": "<p>x</p>\n"})
    assert status == 400 and "not a block" in data["error"]
    assert client.json("POST", "/__workbench/api/save", {"url": "tut/page.html", "key": QUERY, "value": 3})[0] == 400
    assert client.request("POST", "/__workbench/api/save", b"not json")[0] == 400
    assert client.request("POST", "/__workbench/api/save", b"{}", headers={"Content-Type": "text/plain"})[0] == 415
    assert client.json("POST", "/__workbench/api/other", {"url": "tut/page.html"})[0] == 404
    assert _file(root).read_bytes() == before


def test_a_value_that_fails_a_check_or_the_sanitiser_is_not_saved(editor):
    root, _session, client, _ = editor
    before = _file(root).read_bytes()
    for value, code in (
        ("<h1>缩放注意力</h1>\n<p>我们把分数除以，再做 softmax。</p>\n", "placeholder-missing"),
        (HEADING_ZH.replace("<p>", "<p onclick=alert(1)>"), "unsafe-attribute"),
        (HEADING_ZH.replace("</p>", '<script>alert(1)</script></p>'), "unsafe-tag"),
        (HEADING_ZH.replace("softmax", '<a href="javascript:alert(1)">softmax</a>'), "unsafe-url"),
    ):
        status, data = client.save(HEADING, value)
        assert status == 422, value
        assert code in [f["code"] for f in data["findings"]]
    assert _file(root).read_bytes() == before


def test_check_shows_findings_preview_and_glossary_without_writing(editor):
    root, _session, client, _ = editor
    before = _file(root).read_bytes()
    status, data = client.json("POST", "/__workbench/api/check", {"url": "tut/page.html", "key": HEADING,
                                                                  "value": HEADING_ZH.replace("注意力", "关注")})
    assert status == 200 and data["saveable"]
    assert "glossary-term" in [f["code"] for f in data["findings"]]
    assert data["glossary"][0]["used"] is False and "<math" in data["preview"]
    status, data = client.json("POST", "/__workbench/api/check", {"url": "tut/page.html", "key": HEADING, "value": HEADING_ZH})
    assert data["findings"] == [] and data["glossary"][0]["used"] is True
    assert _file(root).read_bytes() == before


def test_save_keeps_every_other_entry_writes_as_extract_does_and_rebuilds(editor):
    root, session, client, _ = editor
    before = json.loads(_file(root).read_text(encoding="utf-8"))
    build = session.build_id
    status, data = client.save(HEADING, HEADING_ZH)
    assert status == 200, data
    assert data["block"]["status"] == "translated" and "我们把分数除以" in data["block"]["html"]
    assert "<math" in data["block"]["html"]
    text = _file(root).read_text(encoding="utf-8")
    after = json.loads(text)
    assert after == {**before, HEADING: HEADING_ZH}  # the stale entry and the others are kept
    assert text == dumps(after)  # sorted, indent 2, UTF-8, as extract writes
    assert not list(_file(root).parent.glob(".*labml-tmp"))
    assert session.build_id > build
    assert "我们把分数除以" in (root / "site/zh/tut/page.html").read_text(encoding="utf-8")
    assert data["counts"]["translated"] == 1


def test_a_concurrent_edit_on_disk_is_detected_not_overwritten(editor):
    root, _session, client, _ = editor
    status, data = client.page()
    opened = next(b for b in data["blocks"] if b["key"] == QUERY)["value"]
    # Someone else saves the same entry meanwhile (by hand, or another editor).
    on_disk = json.loads(_file(root).read_text(encoding="utf-8"))
    on_disk[QUERY] = "<p>查询和键给出一个分数 </p>\n"
    _file(root).write_text(json.dumps(on_disk, ensure_ascii=False), encoding="utf-8")
    status, data = client.save(QUERY, "<p>我的版本 </p>\n", expected=opened)
    assert status == 409 and data["current"] == "<p>查询和键给出一个分数 </p>\n"
    assert json.loads(_file(root).read_text(encoding="utf-8"))[QUERY] == "<p>查询和键给出一个分数 </p>\n"
    # An edit of *another* entry on disk is kept by the next save.
    on_disk["Scaled attention"] = "缩放注意力"
    _file(root).write_text(json.dumps(on_disk, ensure_ascii=False), encoding="utf-8")
    status, data = client.save(SCALE, "<p> 用 <span translate=no>_^_1_^_</span> 缩放 <span translate=no>_^_0_^_</span>，让注意力保持柔和。</p>\n")
    assert status == 200, data
    saved = json.loads(_file(root).read_text(encoding="utf-8"))
    assert saved["Scaled attention"] == "缩放注意力" and saved[QUERY] == "<p>查询和键给出一个分数 </p>\n"


def test_a_broken_file_is_not_rewritten(editor, tmp_path):
    root, session, client, _ = editor
    good = _file(root).read_bytes()
    try:
        _file(root).write_text('{"a": "1", "a": "2"}', encoding="utf-8")
        status, data = client.save(QUERY, "<p>x </p>\n", expected=None)
        assert status == 409 and "duplicate-key" in [f["code"] for f in data["findings"]]
        assert _file(root).read_text(encoding="utf-8") == '{"a": "1", "a": "2"}'
    finally:
        _file(root).write_bytes(good)


def test_a_linked_translation_file_is_never_written_through(editor, tmp_path):
    root, _session, client, _ = editor
    good = _file(root).read_bytes()
    outside = tmp_path / "outside.json"
    outside.write_bytes(good)
    _file(root).unlink()
    _file(root).symlink_to(outside)
    try:
        status, _data = client.save(QUERY, "<p>x </p>\n", expected=None)
        assert status in (409, 500)
        assert outside.read_bytes() == good
    finally:
        _file(root).unlink()
        _file(root).write_bytes(good)


def test_review_marks_are_kept_in_a_sidecar_that_stats_counts(editor, capsys):
    root, _session, client, _ = editor
    status, data = client.json("POST", "/__workbench/api/review", {"url": "tut/page.html", "key": HEADING})
    assert status == 200 and data["reviewed"]["by"] == "Ada"
    review = json.loads((root / "tr/tut/page.zh.review.json").read_text(encoding="utf-8"))
    assert review[HEADING]["by"] == "Ada" and set(review[HEADING]) == {"by", "date", "value"}
    assert client.json("POST", "/__workbench/api/review", {"url": "tut/page.html", "key": QUERY + "x"})[0] == 400
    status, data = client.page()
    assert next(b for b in data["blocks"] if b["key"] == HEADING)["reviewed"]["current"] is True

    from labml_site.cli.main import main

    assert main(["stats", "--json", "--source", str(root / "src"), "--translations", str(root / "tr")]) == 0
    rows = json.loads(capsys.readouterr().out)["pages"]
    assert rows[0]["reviewed"] == 1
    # The build never needs the sidecar, and check does not call it an orphan.
    assert main(["check", "--source", str(root / "src"), "--translations", str(root / "tr")]) == 0
    assert "orphan-file" not in capsys.readouterr().out


def test_the_server_binds_loopback_only(editor):
    _root, session, _client, _ = editor
    from labml_site.workbench.server import make_server

    with pytest.raises(ValueError):
        make_server(session, 0, host="0.0.0.0")


def test_translate_command_refuses_the_base_language(tmp_path, capsys):
    from labml_site.cli.main import main

    make_project(tmp_path)
    code = main(["translate", "--lang", "en", "--source", str(tmp_path / "src"), "--translations", str(tmp_path / "tr")])
    assert code == 2 and "base language" in capsys.readouterr().err


def test_translate_command_builds_serves_and_prints_the_address(tmp_path, capsys, monkeypatch):
    from labml_site.cli.main import main
    from labml_site.workbench import editor as editor_module

    make_project(tmp_path)
    seen = {}

    def stop_at_once(session, stop=None):
        seen["pages"] = list(session.pages)
        raise KeyboardInterrupt

    monkeypatch.setattr(editor_module, "watch", stop_at_once)
    code = main(["translate", "--lang", "zh", "--port", "0", "--reviewer", "Ada", "--source", str(tmp_path / "src"),
                 "--translations", str(tmp_path / "tr"), "--out", str(tmp_path / "wb-site")])
    err = capsys.readouterr().err
    assert code == 0 and seen["pages"] == ["tut/page.html"]
    assert "open http://127.0.0.1:" in err and "/?token=" in err and "Alt+N" in err
    assert (tmp_path / "wb-site/zh/tut/page.html").is_file()


def test_states_fuzzy_and_invalid_and_a_save_confirms_the_suggestion(tmp_path):
    from labml_site.workbench.session import Refused, Session

    config = make_project(tmp_path, {SCALE: "<p>坏</p>\n"})
    fuzzy = tmp_path / "tr/tut/page.zh.fuzzy.json"
    fuzzy.write_text(json.dumps({QUERY: {"from": "<p>The query and the key give a score </p>\n",
                                         "suggestion": "<p>查询和键给出分数 </p>\n"}}, ensure_ascii=False), encoding="utf-8")
    session = Session(config, "zh")
    session.rebuild()
    state = session.page_state("tut/page.html")
    by_key = {b["key"]: b for b in state["blocks"]}
    assert by_key[SCALE]["status"] == "invalid" and by_key[SCALE]["value"] == "<p>坏</p>\n"
    assert "placeholder-missing" in [f["code"] for f in by_key[SCALE]["findings"]]
    assert by_key[SCALE]["html"] == by_key[SCALE]["english"]  # the page shows the English
    assert by_key[QUERY]["status"] == "fuzzy"
    assert by_key[QUERY]["suggestion"] == {"value": "<p>查询和键给出分数 </p>\n", "from": "<p>The query and the key give a score </p>\n"}
    assert state["counts"] == {"translated": 0, "repaired": 0, "fuzzy": 1, "untranslated": 3, "invalid": 1, "stale": 1,
                               "total": 5}

    result = session.save("tut/page.html", QUERY, "<p>查询和键给出分数 </p>\n", "")
    assert result["block"]["status"] == "translated"
    assert not fuzzy.exists()  # the accepted suggestion left the sidecar, as `extract --confirm` does
    with pytest.raises(Refused) as refused:
        session.mark_reviewed("tut/page.html", QUERY)
    assert refused.value.status == 400 and "--reviewer" in refused.value.message


_P0 = "<span translate=no>_^_0_^_</span>"


@pytest.mark.parametrize("key, value, code", [
    (HEADING, "<h1>缩放注意力</h1>\n<p>我们把分数除以，再做 softmax。</p>\n", "placeholder-missing"),
    (HEADING, f"<h1>缩放注意力</h1>\n<p>{_P0}{_P0}，再做 softmax。</p>\n", "placeholder-duplicated"),
    (HEADING, f"<h1>缩放注意力</h1>\n<p>{_P0}<span translate=no>_^_7_^_</span>。</p>\n", "placeholder-extra"),
    (HEADING, "<h1>缩放注意力</h1>\n<p>除以 _^_ 0 _^_，再做 softmax。</p>\n", "placeholder-altered"),
    (HEADING, "<h1>缩放注意力</h1>\n<p>除以 <span translate=no>_%5e_0_%5e_</span>。</p>\n", "placeholder-encoded"),
    (HEADING, f"<h1>缩放注意力</h1>\n<p>除以 {_P0}</strong>。</p>\n", "html-unbalanced"),
    (HEADING, f"<h2>缩放注意力</h2>\n<p>除以 {_P0}。</p>\n", "html-structure"),
    (HEADING, f"<h1>缩放注意力</h1>\n除以 {_P0}。\n", "html-outside-block"),
    ("Scaled attention", "<em>缩放注意力</em>", "html-in-plain-text"),
    (HEADING, f"<h1>缩放注意力</h1>\n<p>除以 {_P0}<img src=x>。</p>\n", "unsafe-tag"),
    (HEADING, f"<h1>缩放注意力</h1>\n<p style=\"color:red\">除以 {_P0}。</p>\n", "unsafe-attribute"),
    (HEADING, f"<h1>缩放注意力</h1>\n<p>除以 {_P0}，<a href=\"javascript:alert(1)\">softmax</a>。</p>\n", "unsafe-url"),
    (HEADING, f"<h1>缩放注意力</h1>\n<p>除以 {_P0}，<a href=\"https://example.org/\">softmax</a>。</p>\n", "link-added"),
    (HEADING, HEADING, "untranslated"),
    (HEADING, f"<h1>缩放注意力</h1>\n<p>除以 {_P0}，再做 softmax。</p>", "whitespace-differs"),
    (HEADING, f"<h1>缩放注意力</h1>\n<p>除以 {_P0}\u202e，再做 softmax。</p>\n", "control-chars"),
    (HEADING, f"<h1>缩放关注</h1>\n<p>除以 {_P0}，再做 softmax。</p>\n", "glossary-term"),
    (HEADING, "", "empty-value"),
])
def test_the_editor_runs_the_same_checks_as_check(editor, key, value, code):
    """What the editor shows inline is exactly what `check` reports for the same value in a
    file: the one verdict (`Catalog.verdict`). A value the page would show only repaired is not
    saved (its repaired form is offered), nor one it refuses."""
    from labml_site.translate.catalog import check_file
    from labml_site.translate.verdict import judge

    root, _session, client, _ = editor
    status, data = client.json("POST", "/__workbench/api/check", {"url": "tut/page.html", "key": key, "value": value})
    assert status == 200
    shown = sorted(f["code"] for f in data["findings"])
    alone = root / "tr/tut/alone.zh.json"  # beside the page's file: the same glossary applies
    alone.write_text(json.dumps({key: value}, ensure_ascii=False), encoding="utf-8")
    try:
        assert shown == sorted(f.code for f in check_file(alone, "zh"))
    finally:
        alone.unlink()
    named = shown + [f["message"].split(")")[0][len("repaired ("):] for f in data["findings"] if f["code"] == "repaired"]
    assert code in named
    state = judge(key, value).state
    assert data["status"] == state and data["saveable"] is (state in ("translated", "untranslated"))
    assert (data["repaired"] is not None) is (state == "repaired" and judge(key, value).repaired is not None)


def test_a_page_without_a_file_and_a_fuzzy_entry_with_a_note(tmp_path):
    from labml_site.workbench.session import Session

    config = make_project(tmp_path)
    (tmp_path / "tr/tut/page.zh.json").unlink()
    session = Session(config, "zh")
    session.rebuild()
    assert {b["status"] for b in session.page_state("tut/page.html")["blocks"]} == {"untranslated"}
    session.save("tut/page.html", "Scaled attention", "缩放注意力", "")
    assert json.loads((tmp_path / "tr/tut/page.zh.json").read_text(encoding="utf-8")) == {"Scaled attention": "缩放注意力"}
    # A fuzzy entry with a reviewer's own field is a person's writing: kept as it is.
    fuzzy = tmp_path / "tr/tut/page.zh.fuzzy.json"
    fuzzy.write_text(json.dumps({QUERY: {"from": "x", "suggestion": "<p>建议 </p>\n", "note": "check the verb"}}), encoding="utf-8")
    session.save("tut/page.html", QUERY, "<p>查询和键给出一个分数 </p>\n", "")
    assert json.loads(fuzzy.read_text(encoding="utf-8"))[QUERY]["note"] == "check the verb"


def test_the_english_unchanged_needs_a_confirmation_and_an_emptied_value_is_empty(tmp_path):
    from labml_site.workbench.session import Refused, Session, same_text

    config = make_project(tmp_path, {QUERY: "<p>查询和键给出一个分数 </p>\n"})
    session = Session(config, "zh")
    session.rebuild()
    with pytest.raises(Refused) as refused:
        session.save("tut/page.html", HEADING, HEADING, "")
    assert refused.value.status == 422 and refused.value.extra == {"same_as_english": True}
    assert json.loads(_file(tmp_path).read_text(encoding="utf-8"))[HEADING] == ""
    session.save("tut/page.html", HEADING, HEADING, "", same_as_english=True)
    assert json.loads(_file(tmp_path).read_text(encoding="utf-8"))[HEADING] == HEADING
    session.save("tut/page.html", HEADING, HEADING, HEADING)  # already on disk: no question
    result = session.save("tut/page.html", QUERY, "\n", "<p>查询和键给出一个分数 </p>\n")
    assert json.loads(_file(tmp_path).read_text(encoding="utf-8"))[QUERY] == ""
    assert result["block"]["status"] == "untranslated"
    assert same_text('<p>say &quot;hi&quot; &#x27;x&#x27;</p>\n', "<p>say \"hi\" 'x'</p>")


def test_the_page_total_is_the_one_stats_counts(tmp_path, capsys):
    from labml_site.cli.main import main
    from labml_site.workbench.session import Session

    config = make_project(tmp_path, {HEADING: HEADING_ZH})
    session = Session(config, "zh")
    session.rebuild()
    counts = session.page_state("tut/page.html")["counts"]
    assert main(["stats", "--json", "--source", str(tmp_path / "src"), "--translations", str(tmp_path / "tr")]) == 0
    row = json.loads(capsys.readouterr().out)["pages"][0]
    assert counts["total"] == row["blocks"] and counts["translated"] == row["translated"]
    assert counts["stale"] == row["stale"] and counts["untranslated"] == row["untranslated"]


def test_memory_suggests_with_a_percentage_searches_and_follows_saves(tmp_path):
    from labml_site.workbench.memory import Memory
    from labml_site.workbench.session import Session

    other = tmp_path / "cache"
    other.mkdir()
    (other / "a.zh.json").write_text(json.dumps({
        "<p>The query and the key give one score</p>\n": "<p>查询与键给出一个分数</p>\n",
        "<p>Completely different words here</p>\n": "<p>完全不同</p>\n",
        "<p>empty</p>\n": "", "<p>not a string</p>\n": 3}, ensure_ascii=False), encoding="utf-8")
    (other / "a.zh.fuzzy.json").write_text("{}", encoding="utf-8")  # a sidecar: not read
    (other / "link.zh.json").symlink_to(other / "a.zh.json")  # a link: not read
    config = make_project(tmp_path)
    session = Session(config, "zh", memory=(other,))
    session.rebuild()
    session.load_memory()
    found = session.suggestions("tut/page.html", QUERY)["suggestions"]
    assert [s["translation"] for s in found] == ["查询与键给出一个分数"]
    assert found[0]["percent"] == 99 and found[0]["source"] == "cache/a.zh.json"  # same words, other markup
    session.save("tut/page.html", HEADING, HEADING_ZH, "")
    hits = session.concordance("softmax")["hits"]
    assert [(h["where"], h["source"]) for h in hits] == [("english", "tut/page.zh.json")]
    assert "再做 softmax" in hits[0]["translation"]
    assert session.concordance("给出")["hits"][0]["where"] == "translation"
    memory = Memory()
    memory.add("<p>a b c</p>", "<p>x</p>", "s")
    memory.drop_file("s")
    assert memory.suggest("<p>a b c</p>") == [] and len(memory) == 0
