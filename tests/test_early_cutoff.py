"""A file's preparation taken from the last build's record (builder/early_cutoff.py): only when
none of the files it read changed, and never where metadata cannot vouch for them. Each test
counts the files prepared (`prepare._file_job`) and compares the site with a build from scratch."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from labml_site.builder import prepare, uptodate
from labml_site.builder.site import BuildConfig, build
from labml_site.typeset.page import analyse

from conftest import TOY_PAGE, write_json, write_tree

OTHER = '''"""
# Another page

It reads the scores.
"""

def other(x):
    # Twice
    return 2 * x
'''

INDEX = '"""\n# Toy\n\nStart with [the scores](page.html).\n"""\n'


def zh(key: str) -> str:
    return key.replace("<p>", "<p>译", 1)


@pytest.fixture
def no_racy_window(monkeypatch):
    """Files written by the test a moment ago count as old (the window has its own test)."""
    monkeypatch.setattr(uptodate, "RACY_NS", -10**12)


@pytest.fixture
def prepared(monkeypatch) -> list[str]:
    """The rels of the files each build prepares (the rest come from records)."""
    seen: list[str] = []
    real = prepare._file_job

    def counting(prepared_, memo, config, file, markers):
        seen.append(file.rel)
        return real(prepared_, memo, config, file, markers)

    monkeypatch.setattr(prepare, "_file_job", counting)
    return seen


def tree(tmp_path: Path) -> tuple[Path, Path]:
    src = write_tree(tmp_path / "src", {"toy/__init__.py": INDEX, "toy/page.py": TOY_PAGE, "toy/other.py": OTHER})
    tr = tmp_path / "tr"
    for rel, text in (("toy/page", TOY_PAGE), ("toy/other", OTHER)):
        keys = analyse(rel + ".py", rel + ".html", text).keys
        write_json(tr / f"{rel}.zh.json", {k: zh(k) for k in keys})
    return src, tr


def config(src: Path, tr: Path, out: Path, **kw) -> BuildConfig:
    return BuildConfig(src, tr, out, langs=("en", "zh"), **kw)


def files_of(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def rebuilt(tmp_path: Path, src: Path, tr: Path, seen: list[str]):
    """A rebuild of the site, which must equal a build of the same tree from scratch."""
    seen.clear()
    result = build(config(src, tr, tmp_path / "site"))
    done = list(seen)
    scratch = build(config(src, tr, tmp_path / "scratch", cache=False))
    assert files_of(result.out) == files_of(scratch.out)
    assert [f.format() for f in result.report.findings] == [f.format() for f in scratch.report.findings]
    seen[:] = done
    return result


def test_an_edit_prepares_that_file_alone(tmp_path, no_racy_window, prepared):
    src, tr = tree(tmp_path)
    build(config(src, tr, tmp_path / "site"))
    assert sorted(prepared) == ["toy/__init__.py", "toy/other.py", "toy/page.py"]
    (src / "toy/other.py").write_text(OTHER.replace("# Twice", "# Twice the value"), encoding="utf-8")
    result = rebuilt(tmp_path, src, tr, prepared)
    assert prepared == ["toy/other.py"]
    assert result.stats.analysed == 1 and result.stats.analysis_reused == 2
    assert result.stats.localization_reused == 4  # (two languages of the two files taken as recorded)


def test_a_translation_edit_prepares_its_page_again(tmp_path, no_racy_window, prepared):
    src, tr = tree(tmp_path)
    build(config(src, tr, tmp_path / "site"))
    catalog = json.loads((tr / "toy/page.zh.json").read_text(encoding="utf-8"))
    write_json(tr / "toy/page.zh.json", {k: v.replace("译", "翻译") for k, v in catalog.items()})
    result = rebuilt(tmp_path, src, tr, prepared)
    assert set(prepared) == {"toy/page.py"}
    assert "翻译" in (result.out / "zh/toy/page.html").read_text(encoding="utf-8")


def test_a_new_fuzzy_sidecar_is_seen(tmp_path, no_racy_window, prepared):
    src, tr = tree(tmp_path)
    build(config(src, tr, tmp_path / "site"))
    write_json(tr / "toy/other.zh.fuzzy.json", {})  # (a new name in the tree: every record is stale)
    rebuilt(tmp_path, src, tr, prepared)
    assert set(prepared) == {"toy/__init__.py", "toy/other.py", "toy/page.py"}


def test_a_glossary_above_the_translations_folder_is_seen(tmp_path, no_racy_window, prepared):
    src, tr = tree(tmp_path)
    build(config(src, tr, tmp_path / "site"))
    write_json(tmp_path / "glossary.zh.json", {"scores": "分数"})  # outside every walked tree
    rebuilt(tmp_path, src, tr, prepared)
    assert {"toy/other.py", "toy/page.py"} <= set(prepared)


def test_files_written_a_moment_ago_are_not_taken_from_records(tmp_path, prepared):
    src, tr = tree(tmp_path)
    build(config(src, tr, tmp_path / "site"))
    (src / "toy/other.py").write_text(OTHER + "\n# more\n", encoding="utf-8")
    rebuilt(tmp_path, src, tr, prepared)
    # Every file is seconds old: its metadata cannot tell an edit within the clock's tick.
    assert set(prepared) == {"toy/__init__.py", "toy/other.py", "toy/page.py"}


def test_a_translation_found_by_case_keeps_its_finding(tmp_path, no_racy_window, prepared):
    src, tr = tree(tmp_path)
    (tr / "toy").rename(tr / "Toy")
    first = build(config(src, tr, tmp_path / "site"))
    (src / "toy/__init__.py").write_text(INDEX + "\n# an edit\n", encoding="utf-8")
    result = rebuilt(tmp_path, src, tr, prepared)
    assert "toy/page.py" not in prepared
    codes = [f.code for f in result.report.findings]
    assert codes.count("path-case") == [f.code for f in first.report.findings].count("path-case") == 2


def test_heads_gone_from_the_cache_mean_the_file_is_prepared(tmp_path, no_racy_window, prepared, monkeypatch):
    src, tr = tree(tmp_path)
    build(config(src, tr, tmp_path / "site"))
    real = prepare.Memo.head

    def forgetful(memo, digest):
        head = real(memo, digest)
        return prepare.MISS if getattr(head, "rel", "") == "toy/page.py" else head

    monkeypatch.setattr(prepare.Memo, "head", forgetful)
    (src / "toy/other.py").write_text(OTHER.replace("# Twice", "# Twice over"), encoding="utf-8")
    prepared.clear()
    build(config(src, tr, tmp_path / "site"))
    assert {"toy/other.py", "toy/page.py"} <= set(prepared)


def test_no_cache_no_records(tmp_path, no_racy_window, prepared):
    src, tr = tree(tmp_path)
    build(config(src, tr, tmp_path / "site", cache=False))
    prepared.clear()
    build(config(src, tr, tmp_path / "site", cache=False))
    assert len(prepared) == 3
    assert not os.path.exists(tmp_path / ".site-cache")
