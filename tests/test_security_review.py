"""Issue 22, `review` in CI: whatever a pull request puts under the translations (links, FIFOs,
oversize files, JSON bombs, names that are not UTF-8, on the new side or in the base), the report
is written and says what it could not read, with no traceback; and review marks a pull request
adds, changes or removes (`*.review.json`) are shown as changes a reviewer must see, as are the
other files it changes there."""
from __future__ import annotations

import json
import os
import shutil

import pytest

from labml_site.cli.main import main
from workbench_fixture import HEADING, HEADING_ZH, QUERY, make_project
from conftest import git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

SECRET = "TOP-SECRET-review-7d2e"




def _repo(tmp_path, monkeypatch, before=None):
    make_project(tmp_path, {QUERY: "<p>查询和键给出一个分数 </p>\n"})
    if before:
        before(tmp_path)
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "base")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _review(root, capsys, *args):
    out = root / "report.html"
    code = main(["review", "--base", "main", "--source", str(root / "src"), "--translations", str(root / "tr"),
                 "--out", str(out), *args])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return code, out, captured


def _secret(root):
    outside = root.parent / (root.name + "-outside")
    outside.mkdir(exist_ok=True)
    path = outside / "secret.json"
    path.write_text(json.dumps({QUERY: f"<p>{SECRET}</p>\n"}), encoding="utf-8")
    return path


def _also_a_good_change(root):
    path = root / "tr/tut/page.zh.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data[HEADING] = HEADING_ZH
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def _new_page(root, name="tut/other"):
    (root / "src" / (name + ".py")).write_text('"""\n# Other\n\nSome text.\n"""\nx = 1\n', encoding="utf-8")


ATTACKS_NEW_SIDE = {
    "link-out": lambda root: os.symlink(_secret(root), root / "tr/tut/other.zh.json"),
    "link-over-tracked": lambda root: ((root / "tr/tut/page.zh.json").unlink(), os.symlink(_secret(root), root / "tr/tut/page.zh.json")),
    "linked-folder": lambda root: os.symlink(_secret(root).parent, root / "tr/linked"),
    "dev-zero": lambda root: os.symlink("/dev/zero", root / "tr/tut/other.zh.json"),
    "fifo": lambda root: os.mkfifo(root / "tr/tut/other.zh.json"),
    "oversize": lambda root: (root / "tr/tut/other.zh.json").write_bytes(b'{"a": "' + b"x" * (3 << 20) + b'"}'),
    "nested": lambda root: (root / "tr/tut/other.zh.json").write_bytes(b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
    "huge-number": lambda root: (root / "tr/tut/other.zh.json").write_bytes(b'{"a": ' + b"9" * 100_000 + b"}"),
    "not-utf8": lambda root: (root / "tr/tut/other.zh.json").write_bytes(b'{"a": "\xff\xfe"}'),
    "a-folder": lambda root: ((root / "tr/tut/other.zh.json").mkdir(), (root / "tr/tut/other.zh.json/x.zh.json").write_text("{}")),
    "bad-name": lambda root: open(os.path.join(os.fsencode(root / "tr/tut"), b"other\xff.zh.json"), "wb").write(b"{}"),
    "source-bomb": lambda root: (root / "src/tut/other.py").write_text(
        '"""\n---\na: &a [1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\ntitle: *c\n---\n# X\n"""\n',
        encoding="utf-8") or (root / "tr/tut/other.zh.json").write_text('{"<h1>X</h1>\\n": "<h1>叉</h1>\\n"}', encoding="utf-8"),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS_NEW_SIDE))
def test_the_report_is_written_whatever_the_new_side_holds(tmp_path, monkeypatch, capsys, attack):
    root = _repo(tmp_path, monkeypatch)
    _new_page(root)
    _also_a_good_change(root)
    ATTACKS_NEW_SIDE[attack](root)
    code, out, captured = _review(root, capsys)
    assert out.is_file(), captured.err
    report = out.read_text(encoding="utf-8")
    assert SECRET not in report
    if attack != "link-over-tracked":  # (which replaces the file of the good change)
        assert "缩放注意力" in report  # the good change is still reviewed
    if attack not in ("source-bomb", "a-folder", "fifo"):  # (git neither stores nor lists a FIFO)
        assert code == 1  # something could not be read: CI fails
    code, _out, captured = _review(root, capsys, "--format", "github")
    assert SECRET not in captured.out
    # errors are annotated; what is only a warning is counted in the one summary line
    assert ("::error" in captured.out) == (code == 1)
    assert captured.out.count("::notice") == 1 and (code == 1 or " 0 warnings" not in captured.out)


def _commit_in_base(content: bytes | None = None, link: str | None = None):
    def before(root):
        path = root / "tr/tut/other.zh.json"
        if link:
            os.symlink(link, path)
        else:
            path.write_bytes(content)
        _new_page(root)
    return before


@pytest.mark.parametrize("base", ["oversize", "nested", "link", "not-json"])
def test_the_report_is_written_whatever_the_base_holds(tmp_path, monkeypatch, capsys, base):
    content = {
        "oversize": b'{"a": "' + b"x" * (3 << 20) + b'"}',
        "nested": b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "not-json": b"\x00\x01\x02",
    }.get(base)
    root = _repo(tmp_path, monkeypatch, _commit_in_base(content, "/etc/passwd" if base == "link" else None))
    path = root / "tr/tut/other.zh.json"
    path.unlink()
    path.write_text(json.dumps({"<h1>Other</h1>\n<p>Some text.</p>\n": "<h1>其他</h1>\n<p>一些文字。</p>\n"}, ensure_ascii=False), encoding="utf-8")
    _also_a_good_change(root)
    code, out, captured = _review(root, capsys)
    assert out.is_file(), captured.err
    report = out.read_text(encoding="utf-8")
    assert "root:" not in report  # /etc/passwd is never read
    assert "缩放注意力" in report


def _review_file(root, data):
    path = root / "tr/tut/page.zh.review.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_review_marks_a_change_adds_are_shown_to_the_reviewer(tmp_path, monkeypatch, capsys):
    from labml_site.translate.review_state import value_digest

    root = _repo(tmp_path, monkeypatch, lambda r: _review_file(r, {QUERY: {"by": "Ada", "date": "2026-01-01", "value": value_digest("<p>查询和键给出一个分数 </p>\n")}}))
    marks = {
        QUERY: {"by": "Mallory", "date": "2026-02-02", "value": value_digest("<p>查询和键给出一个分数 </p>\n")},  # changed
        HEADING: {"by": "Mallory", "date": "2026-02-02", "value": "0" * 16},  # added
    }
    _review_file(root, marks)
    code, out, captured = _review(root, capsys)
    report = out.read_text(encoding="utf-8")
    assert report.count("Mallory") >= 2 and "Ada" in report
    assert "page.zh.review.json" in report
    assert 'data-kind="review-mark"' in report
    code, _out, captured = _review(root, capsys, "--format", "github")
    lines = [l for l in captured.out.splitlines() if "review.json" in l]
    assert len(lines) >= 2 and all("Mallory" in l for l in lines)
    assert any("::warning" in l or "::error" in l for l in lines)


def test_removed_review_marks_and_other_sidecars_are_shown(tmp_path, monkeypatch, capsys):
    root = _repo(tmp_path, monkeypatch, lambda r: _review_file(r, {QUERY: {"by": "Ada", "date": "2026-01-01", "value": "1" * 16}}))
    (root / "tr/tut/page.zh.review.json").unlink()
    (root / "tr/tut/page.zh.fuzzy.json").write_text(json.dumps({QUERY: {"value": "<p>x</p>\n", "note": "planted"}}), encoding="utf-8")
    (root / "tr/notes.txt").write_text("anything", encoding="utf-8")
    code, out, _captured = _review(root, capsys)
    report = out.read_text(encoding="utf-8")
    assert "Ada" in report and "removed" in report
    assert "page.zh.fuzzy.json" in report and "notes.txt" in report


def test_a_linked_review_file_is_a_finding_not_a_traceback(tmp_path, monkeypatch, capsys):
    root = _repo(tmp_path, monkeypatch)
    os.symlink(_secret(root), root / "tr/tut/page.zh.review.json")
    code, out, _captured = _review(root, capsys)
    report = out.read_text(encoding="utf-8")
    assert SECRET not in report and "page.zh.review.json" in report and code == 1
