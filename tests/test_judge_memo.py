"""Within a build each (English, translation, language, glossary) is judged once
(`verdict.remembering`); the findings still point at each entry's own file and line, and outside
a build nothing is remembered."""
from __future__ import annotations

import pytest

from labml_site.translate import repair, verdict

KEY = "<p>Scaled <span translate=no>_^_0_^_</span> scores</p>\n"
VALUE = "<p>缩放的 <span translate=no>_^_0_^_</span> 分数</p>。\n"  # a stray 。 after </p>: repaired


def test_the_same_value_is_judged_once_and_its_findings_move(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = repair.run_entry_checks
    monkeypatch.setattr(repair, "run_entry_checks", lambda ctx: calls.append(ctx.path) or real(ctx))
    with verdict.remembering():
        first = verdict.judge(KEY, VALUE, "a.zh.json", 3, "zh")
        checked = len(calls)
        second = verdict.judge(KEY, VALUE, "b.zh.json", 9, "zh")
        assert len(calls) == checked  # not checked again
        other_lang = verdict.judge(KEY, VALUE, "b.ja.json", 9, "ja")
        assert len(calls) > checked  # a language of its own is judged on its own
    assert first.state == second.state == "repaired" and first.html == second.html
    assert first.findings and {(f.path, f.line) for f in first.findings} == {("a.zh.json", 3)}
    assert {(f.path, f.line) for f in second.findings} == {("b.zh.json", 9)}
    assert [f.code for f in first.findings] == [f.code for f in second.findings]
    assert other_lang.findings[0].path == "b.ja.json"


def test_outside_a_build_nothing_is_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = repair.run_entry_checks
    monkeypatch.setattr(repair, "run_entry_checks", lambda ctx: calls.append(1) or real(ctx))
    verdict.judge(KEY, VALUE, "a.zh.json", 3, "zh")
    once = len(calls)
    verdict.judge(KEY, VALUE, "a.zh.json", 3, "zh")
    assert len(calls) == 2 * once


def test_a_changed_glossary_is_a_new_verdict(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import time

    folder = tmp_path / "tr"
    folder.mkdir()
    (folder / "glossary.zh.json").write_text('{"scores": "分数"}', encoding="utf-8")
    path = str(folder / "page.zh.json")
    value = "<p>缩放的 <span translate=no>_^_0_^_</span> 得分</p>\n"
    with verdict.remembering():
        before = verdict.judge(KEY, value, path, 1, "zh")
        (folder / "glossary.zh.json").write_text('{"scores": "得分"}', encoding="utf-8")
        later = time.time() + 5
        os.utime(folder / "glossary.zh.json", (later, later))
        after = verdict.judge(KEY, value, path, 1, "zh")
    assert "glossary-term" in {f.code for f in before.findings}
    assert "glossary-term" not in {f.code for f in after.findings}
