"""A site already up to date, told from its inputs' metadata (builder/uptodate.py): nothing read,
nothing written, the pipeline not imported; and every kind of change that metadata can show
(contents, a restored modification time, a new file, the theme, the configuration, a library,
the site itself) still makes the build read its inputs."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from labml_site.builder import build, uptodate
from labml_site.builder.config import BuildConfig
from labml_site.builder.theme import DEFAULT_TEMPLATES

from test_cache import LANGS, config, edit, make_tree, snapshot, text

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def no_racy_window(monkeypatch):
    """Files written by the test a moment ago count as old (the window has its own test)."""
    monkeypatch.setattr(uptodate, "RACY_NS", -10**12)


def built_twice(src: Path, tr: Path, out: Path, **kw):
    first = build(config(src, tr, out, **kw))
    return first, build(config(src, tr, out, **kw))


def test_unchanged_site_is_told_by_metadata_and_reads_the_same(tmp_path, no_racy_window):
    src, tr = make_tree(tmp_path)
    first, again = built_twice(src, tr, tmp_path / "site")
    before = snapshot(first.out)
    assert again.stats.site_unchanged and again.stats.metadata_only and again.files_written == 0
    assert (again.stats.analysed, again.stats.analysis_reused, again.stats.rendered) == (0, 0, 0)
    assert snapshot(again.out) == before
    assert [f.format() for f in again.report.findings] == [f.format() for f in first.report.findings]
    assert again.built == first.built and set(again.localized) == set(LANGS)
    # Reading a page builds it (from contents and the cache): the same page as the first build's.
    assert list(again.pages) == list(first.pages)
    assert again.localized["zh"]["toy/page.py"].title == first.localized["zh"]["toy/page.py"].title
    assert again.pages["toy/page.py"].rel == "toy/page.py"
    assert snapshot(again.out) == before


def test_an_edit_that_restores_the_modification_time_is_still_seen(tmp_path, no_racy_window):
    src, tr = make_tree(tmp_path)
    first, _ = built_twice(src, tr, tmp_path / "site")
    page = src / "toy/page.py"
    st = os.stat(page)
    edit(page, "Scale", "Sca1e")  # same size
    os.utime(page, ns=(st.st_atime_ns, st.st_mtime_ns))  # as cp -p / rsync -t would leave it
    assert os.stat(page).st_size == st.st_size and os.stat(page).st_mtime_ns == st.st_mtime_ns
    again = build(config(src, tr, tmp_path / "site"))
    assert not again.stats.metadata_only and not again.stats.site_unchanged
    assert "Sca1e" in text(again.out / "toy/page.html")


def test_touched_but_unchanged_inputs_read_once_then_trusted_again(tmp_path, no_racy_window):
    src, tr = make_tree(tmp_path)
    built_twice(src, tr, tmp_path / "site")
    os.utime(src / "toy/user.py")  # new times, same bytes (a git checkout, a save without edits)
    second = build(config(src, tr, tmp_path / "site"))
    assert second.stats.site_unchanged and not second.stats.metadata_only  # read, found equal
    third = build(config(src, tr, tmp_path / "site"))
    assert third.stats.metadata_only  # the record took the new times


@pytest.mark.parametrize("change", ["new source", "new translation", "translation edited", "glossary added",
                                    "glossary added above the translations", "hidden file only", "config", "theme", "output touched", "output added"])
def test_each_kind_of_change(tmp_path, no_racy_window, change):
    src, tr = make_tree(tmp_path)
    templates = tmp_path / "theme"
    import shutil

    shutil.copytree(DEFAULT_TEMPLATES, templates)
    first, again = built_twice(src, tr, tmp_path / "site", templates=templates)
    assert again.stats.metadata_only
    kw = {"templates": templates}
    if change == "new source":
        (src / "toy/third.py").write_text('"""# Third"""\nx = 1\n', encoding="utf-8")
    elif change == "new translation":
        (tr / "toy/user.zh.json").write_text("{}", encoding="utf-8")
    elif change == "translation edited":
        path = tr / "toy/page.zh.json"
        path.write_text(path.read_text(encoding="utf-8").replace("译", "訳", 1), encoding="utf-8")
    elif change == "glossary added":
        (tr / "glossary.zh.md").write_text("| en | zh |\n|---|---|\n| scale | 缩放 |\n", encoding="utf-8")
    elif change == "glossary added above the translations":  # (it applies: glossary_files.py)
        (tr.parent / "glossary.zh.md").write_text("| en | zh |\n|---|---|\n| scale | 缩放 |\n", encoding="utf-8")
    elif change == "hidden file only":
        (src / "toy/.page.py.swp").write_text("editor state", encoding="utf-8")
    elif change == "config":
        kw["site_title"] = "Another title"
    elif change == "theme":
        path = templates / "page.html"
        path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    elif change == "output touched":
        os.utime(first.out / "zh/toy/user.html", ns=(1, 1))
    elif change == "output added":
        (first.out / "stray.html").write_text("not ours", encoding="utf-8")
    result = build(config(src, tr, tmp_path / "site", **kw))
    if change == "hidden file only":  # never an input: the site is still up to date
        assert result.stats.metadata_only
    else:
        assert not result.stats.metadata_only
    if change == "new source":
        assert (result.out / "toy/third.html").is_file()
    if change == "config":
        assert "Another title" in text(result.out / "toy/page.html")
    if change == "output added":
        assert not (result.out / "stray.html").exists()


def test_a_library_reinstalled_is_seen(tmp_path, no_racy_window, monkeypatch):
    lib = tmp_path / "libs" / "fakelib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text("VERSION = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(lib.parent))
    monkeypatch.setattr(uptodate, "OUTPUT_MODULES", ("fakelib",))
    src, tr = make_tree(tmp_path)
    _, again = built_twice(src, tr, tmp_path / "site")
    assert again.stats.metadata_only
    (lib / "__init__.py").unlink()  # pip replaces a library's files
    (lib / "__init__.py").write_text("VERSION = 2\n", encoding="utf-8")
    assert not build(config(src, tr, tmp_path / "site")).stats.metadata_only


def test_files_written_a_moment_ago_are_vouched_for_by_their_bytes(tmp_path, monkeypatch):
    src, tr = make_tree(tmp_path)  # just written: their times cannot vouch for them
    first, again = built_twice(src, tr, tmp_path / "site")
    assert again.stats.metadata_only
    from labml_site.builder.cache import cache_dir_for, load_record

    record_path = cache_dir_for(first.out) / uptodate.LAST_BUILD
    record = load_record(record_path)
    page = str(src / "toy/page.py")
    assert page in record.snapshot.contents  # compared by its bytes
    # Rewritten within the same clock tick: same size and times (forced into the record here, as
    # a file system with coarse times would leave them), other bytes.
    edit(src / "toy/page.py", "Scale", "Sca1e")
    now = uptodate.take_snapshot(config(src, tr, tmp_path / "site"))
    forged = uptodate.Snapshot(now.entries, record.snapshot.contents, record.snapshot.trusted)
    import dataclasses, pickle
    from labml_site.builder.cache import _encode

    record_path.write_bytes(_encode(pickle.dumps(dataclasses.replace(record, snapshot=forged))))
    result = build(config(src, tr, tmp_path / "site"))
    assert not result.stats.metadata_only and "Sca1e" in text(result.out / "toy/page.html")


def test_old_files_are_not_read_again(tmp_path, no_racy_window, monkeypatch):
    src, tr = make_tree(tmp_path)
    built_twice(src, tr, tmp_path / "site")
    read = []
    monkeypatch.setattr(uptodate, "_content", lambda path: read.append(path))
    assert build(config(src, tr, tmp_path / "site")).stats.metadata_only and read == []


def test_no_cache_no_shortcut(tmp_path, no_racy_window):
    src, tr = make_tree(tmp_path)
    _, again = built_twice(src, tr, tmp_path / "site", cache=False)
    assert not again.stats.metadata_only and again.files_written > 0


def test_a_damaged_record_is_a_full_build(tmp_path, no_racy_window):
    src, tr = make_tree(tmp_path)
    first, _ = built_twice(src, tr, tmp_path / "site")
    from labml_site.builder.cache import cache_dir_for

    record = cache_dir_for(first.out) / uptodate.LAST_BUILD
    record.write_bytes(record.read_bytes()[:-5])
    again = build(config(src, tr, tmp_path / "site"))
    assert not again.stats.metadata_only and snapshot(again.out) == snapshot(first.out)


def test_the_up_to_date_build_does_not_import_the_pipeline(tmp_path):
    src, tr = make_tree(tmp_path)
    prelude = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from labml_site.builder import build
        from labml_site.builder.config import BuildConfig
        config = BuildConfig(Path({str(src)!r}), Path({str(tr)!r}), Path({str(tmp_path / 'site')!r}), langs={LANGS!r})
    """)
    # The first process builds; the second is the rebuild a user runs with nothing changed.
    steps = [prelude + "build(config)\n",
             prelude + "r = build(config)\nprint(r.stats.metadata_only, len(r.pages), sorted(m for m in sys.modules "
                       "if m.startswith(('jinja2', 'pygments', 'markdown', 'labml_site.typeset', 'labml_site.render', 'labml_site.translate'))"
                       # (where glossaries can be, which the snapshot watches: two names and a walk up)
                       " and m not in ('labml_site.translate', 'labml_site.translate.glossary_files')))\n"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for script in steps:
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
        assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "3", "[]"], out.stdout


def test_a_change_to_the_builder_itself_is_seen(tmp_path, no_racy_window, monkeypatch):
    package = tmp_path / "labml_site"  # stands in for the builder's own package folder
    (package / "theme").mkdir(parents=True)
    (package / "module.py").write_text("X = 1\n", encoding="utf-8")
    monkeypatch.setattr(uptodate, "_PACKAGE", package)
    src, tr = make_tree(tmp_path)
    _, again = built_twice(src, tr, tmp_path / "site")
    assert again.stats.metadata_only
    (package / "module.py").write_text("X = 2\n", encoding="utf-8")
    assert not build(config(src, tr, tmp_path / "site")).stats.metadata_only
