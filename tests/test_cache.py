"""The build cache (cache.py) and the incremental builder: a stale cache never leaks into a page.

For each kind of input (source, translations, templates, UI catalogs, the builder itself) a test
builds, changes that input, rebuilds, and checks that the page shows the change, and that only
what depended on the change was computed again (the counters in `BuildResult.stats`). Damaged or
deleted caches must be harmless, and an incremental site must equal a build from scratch.
"""
from __future__ import annotations

import json
import os
import pickle
import shutil
import threading
import urllib.request
from pathlib import Path

import pytest

from labml_site.builder import cache as build_cache
from labml_site.builder import site as builder
from labml_site.builder import ui_catalogs as i18n
from labml_site.typeset import linking
from labml_site.builder import produce as engine_module
from labml_site.builder import pipeline
from labml_site.builder import workers
from labml_site.builder import prepare
from labml_site.builder.site import BuildConfig, build
from labml_site.typeset.page import analyse
from labml_site.builder.theme import DEFAULT_TEMPLATES

from conftest import TOY_PAGE, write_json, write_tree

INDEX = '''"""
---
title: Toy tutorial
summary: A tiny tutorial for the cache tests.
---

# Toy tutorial

Start with [the scores](page.html).
"""
'''

PAGE = TOY_PAGE

USER = '''"""
---
title: Using the scale
---

# Using the scale

This page calls the function from the other page.
"""

from toy.page import scale


def run(x):
    # Scale by four
    return scale(x, 16)
'''

LANGS = ("en", "zh")


def zh_value(key: str) -> str:
    """A valid translation: the text runs marked, tags and placeholders kept."""
    import re

    parts = re.split(r"(<span translate=no>_\^_\d+_\^_</span>|<[^>]+>)", key)
    return "".join(p if p.startswith("<") or not p.strip() else p.replace(p.strip(), "译" + p.strip(), 1) for p in parts)


def make_tree(tmp_path: Path, files: dict[str, str] | None = None) -> tuple[Path, Path]:
    files = files or {"toy/__init__.py": INDEX, "toy/page.py": PAGE, "toy/user.py": USER}
    src = write_tree(tmp_path / "src", files)
    tr = tmp_path / "tr"
    # page.py: everything but the last block translated; user.py: nothing translated.
    keys = analyse("toy/page.py", "toy/page.html", PAGE).keys
    write_json(tr / "toy/page.zh.json", {k: zh_value(k) for k in keys[:-1]})
    return src, tr


def config(src: Path, tr: Path, out: Path, **kw) -> BuildConfig:
    return BuildConfig(src, tr, out, langs=kw.pop("langs", LANGS), **kw)


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def edit(path: Path, old: str, new: str) -> None:
    content = text(path)
    assert old in content, f"{old!r} not in {path}"
    path.write_text(content.replace(old, new, 1), encoding="utf-8")


def build_reading(cfg: BuildConfig):
    """A build that reads its inputs, without first asking their metadata whether the site is up
    to date (builder/uptodate.py, tested in test_uptodate.py): these tests change an input by
    monkeypatching what reads it, which no file's metadata shows."""
    return builder.build_with(cfg, None)


def pages_of(result) -> int:
    return len(result.pages)


# ---------------------------------------------------------------------------------------------
# Reuse


def test_unchanged_rebuild_computes_nothing_and_keeps_files(tmp_path):
    src, tr = make_tree(tmp_path)
    first = build(config(src, tr, tmp_path / "site"))
    assert first.stats.analysed == 3 and first.stats.localized == 3 * len(LANGS)
    assert not first.stats.site_unchanged
    before = snapshot(first.out)
    inode = os.stat(first.out / "toy/page.html").st_ino

    again = build_reading(config(src, tr, tmp_path / "site"))
    s = again.stats
    assert s.site_unchanged and again.files_written == 0
    assert (s.analysed, s.localized, s.linked, s.rendered, s.copied) == (0, 0, 0, 0, 0)
    assert s.analysis_reused == 3 and s.localization_reused == 3 * len(LANGS)
    assert snapshot(again.out) == before and os.stat(again.out / "toy/page.html").st_ino == inode
    # The result still describes every page in every language, with the same findings.
    assert set(again.localized) == set(LANGS) and len(again.localized["zh"]) == 3
    assert again.localized["zh"]["toy/page.py"].title == first.localized["zh"]["toy/page.py"].title
    assert [f.format() for f in again.report.findings] == [f.format() for f in first.report.findings]


def test_touched_output_is_rendered_again_and_the_rest_hard_linked(tmp_path):
    src, tr = make_tree(tmp_path)
    first = build(config(src, tr, tmp_path / "site"))
    before = snapshot(first.out)
    inode = os.stat(first.out / "toy/page.html").st_ino
    os.utime(first.out / "zh/toy/user.html", ns=(1, 1))  # not the file that build wrote any more

    again = build(config(src, tr, tmp_path / "site"))
    s = again.stats
    assert not s.site_unchanged
    assert (s.analysed, s.localized, s.linked, s.rendered, s.copied) == (0, 0, 0, 1, 0)
    assert s.render_reused > 0 and s.copy_reused > 0
    assert snapshot(again.out) == before
    # Unchanged pages are the previous build's files, hard-linked into the new site.
    assert os.stat(again.out / "toy/page.html").st_ino == inode


def test_extra_file_in_the_site_means_a_real_build(tmp_path):
    src, tr = make_tree(tmp_path)
    build(config(src, tr, tmp_path / "site"))
    (tmp_path / "site/stray.html").write_text("not ours", encoding="utf-8")
    again = build(config(src, tr, tmp_path / "site"))
    assert not again.stats.site_unchanged and not (again.out / "stray.html").exists()


def test_site_swap_still_happens_and_old_folders_are_cleaned(tmp_path):
    src, tr = make_tree(tmp_path)
    build(config(src, tr, tmp_path / "site"))
    build(config(src, tr, tmp_path / "site"))
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".site-") and p.name != ".site-cache"]
    assert leftovers == []


# ---------------------------------------------------------------------------------------------
# Each kind of input change shows up


def test_source_change_shows_and_only_that_file_is_analysed(tmp_path):
    src, tr = make_tree(tmp_path)
    out = tmp_path / "site"
    build(config(src, tr, out))
    user_inode = os.stat(out / "toy/user.html").st_ino

    edit(src / "toy/page.py", "# Divide once", "# Divide exactly once")
    result = build(config(src, tr, out))
    assert "Divide exactly once" in text(out / "toy/page.html")
    assert "Divide exactly once" in text(out / "zh/toy/page.html")  # shown in English, marked
    assert result.stats.analysed == 1 and result.stats.localized == len(LANGS)
    # A page that does not depend on the edited text was not rendered again.
    assert os.stat(out / "toy/user.html").st_ino == user_inode


def test_a_folder_s_translated_notebook_prose_is_made_again_only_for_the_edited_page(tmp_path, monkeypatch):
    import functools

    src, tr = make_tree(tmp_path)
    out = tmp_path / "site"
    build(config(src, tr, out))
    made: list[tuple[str, bool]] = []
    real = builder.prose_markdown

    @functools.wraps(real)  # (the same stage: its name is its identity)
    def counted(local, base):
        made.append((local.data.rel, base))
        return real(local, base)

    monkeypatch.setattr(builder, "prose_markdown", counted)
    edit(src / "toy/page.py", "# Divide once", "# Divide exactly once")
    build(config(src, tr, out))
    # The folder's zh script was written again, with the other pages' prose from the store.
    script = next(p for p in (out / "zh").rglob("*.js") if "Divide exactly once" in text(p))
    assert "Using the scale" in text(script)  # (user.py, untranslated: its English prose)
    assert made == [("toy/page.py", False)]


def test_translation_change_shows_and_nothing_is_analysed(tmp_path):
    src, tr = make_tree(tmp_path)
    out = tmp_path / "site"
    build(config(src, tr, out))
    en_inode = os.stat(out / "toy/page.html").st_ino
    path = tr / "toy/page.zh.json"
    catalog = json.loads(text(path))
    key = next(k for k in catalog if k.startswith("<h1>"))
    catalog[key] = catalog[key].replace("译", "新译", 1)
    write_json(path, catalog)

    result = build(config(src, tr, out))
    assert "新译" in text(out / "zh/toy/page.html")
    assert result.stats.analysed == 0 and result.stats.localized == 1
    assert os.stat(out / "toy/page.html").st_ino == en_inode  # the English page is untouched


def test_fuzzy_sidecar_change_shows(tmp_path):
    src, tr = make_tree(tmp_path)
    out = tmp_path / "site"
    build(config(src, tr, out))
    missing = analyse("toy/page.py", "toy/page.html", PAGE).keys[-1]
    assert 'data-status="untranslated"' in text(out / "zh/toy/page.html")

    write_json(tr / "toy/page.zh.fuzzy.json", {missing: {"suggestion": zh_value(missing), "from": "old"}})
    result = build(config(src, tr, out))
    assert 'data-status="fuzzy"' in text(out / "zh/toy/page.html")
    assert result.stats.localized == 1


def test_template_change_shows_everywhere(tmp_path):
    src, tr = make_tree(tmp_path)
    templates = tmp_path / "theme"
    shutil.copytree(DEFAULT_TEMPLATES, templates)
    out = tmp_path / "site"
    build(config(src, tr, out, templates=templates))
    inodes = {p: p.stat().st_ino for p in out.rglob("*.html")}

    edit(templates / "base.html", "</footer>", "<p>TEMPLATE-EDIT</p></footer>")
    edit(templates / "static" / "style.css", "", "/* STYLE-EDIT */\n")
    result = build(config(src, tr, out, templates=templates))
    for page in ("index.html", "toy/page.html", "zh/toy/user.html", "zh/translation-status.html"):
        assert "TEMPLATE-EDIT" in text(out / page), page
    assert "STYLE-EDIT" in text(out / "static/style.css")
    assert result.stats.analysed == 0 and result.stats.localized == 0
    # Every HTML page was rendered again; only template-free outputs (notebooks, search indexes)
    # were reused.
    assert all(p.stat().st_ino != inode for p, inode in inodes.items())
    assert result.stats.rendered >= len(inodes)


def test_ui_catalog_change_shows(tmp_path, monkeypatch):
    src, tr = make_tree(tmp_path)
    out = tmp_path / "site"
    build(config(src, tr, out))
    assert "尚未翻译" in text(out / "zh/toy/page.html")

    locales = tmp_path / "locales"
    shutil.copytree(i18n.LOCALES_DIR, locales)
    po = locales / "zh/LC_MESSAGES/messages.po"
    content = text(po)
    for msgid in ("Not yet translated", "View source"):
        start = content.index(f'msgid "{msgid}"\nmsgstr "') + len(f'msgid "{msgid}"\nmsgstr "')
        content = content[:start] + "改" + content[start:]
    po.write_text(content, encoding="utf-8")
    for module in (builder, prepare):  # each stage that reads UI strings
        monkeypatch.setattr(module, "load_ui", lambda lang, _locales=None: i18n.load_ui(lang, locales))

    result = build_reading(config(src, tr, out))
    zh = text(out / "zh/toy/page.html")
    assert "改尚未翻译" in zh  # the marker inside localized text
    assert "改" in text(out / "zh/toy/user.html").split("View source")[0] or "改查看" in zh
    assert result.stats.analysed == 0
    assert "改" not in text(out / "toy/page.html")  # English has no catalog change


def test_builder_change_invalidates_everything(tmp_path, monkeypatch):
    src, tr = make_tree(tmp_path)
    out = tmp_path / "site"
    build(config(src, tr, out))

    # A new builder (different fingerprint) whose analysis renders titles differently.
    real = pipeline.analyse

    def new_analyse(rel, url, source):
        from dataclasses import replace

        page = real(rel, url, source)
        return replace(page, title=page.title + " (v2)")

    monkeypatch.setattr(pipeline, "analyse", new_analyse)
    monkeypatch.setattr(build_cache, "builder_fingerprint", lambda: "a-new-builder")
    result = build_reading(config(src, tr, out))
    assert "Scaled scores (v2)" in text(out / "toy/page.html")
    assert result.stats.analysed == 3 and result.stats.render_reused == 0


def test_after_a_builder_change_the_heads_record_holds_one_generation(tmp_path, monkeypatch):
    src, tr = make_tree(tmp_path)
    out = tmp_path / "site"
    build(config(src, tr, out))
    root = build_cache.cache_dir_for(out)
    before = build_cache.DictFile(root).load()
    monkeypatch.setattr(build_cache, "builder_fingerprint", lambda: "a-new-builder")
    build_reading(config(src, tr, out))
    # Every entry of the build before is gone, and the record written again without them (not
    # a log of their removal that each later build would load them all to replay).
    assert not (root / "heads.log").exists()
    on_disk = pickle.loads((root / "heads.pkl").read_bytes()[16:])
    assert on_disk == build_cache.DictFile(root).load()
    common = {key for key in set(on_disk) & set(before) if not key.startswith(("file:", "record:"))}  # (by name)
    assert not common, [(k, type(on_disk[k]).__name__, before[k] == on_disk[k]) for k in sorted(common)][:8]


def test_fingerprint_covers_version_and_source_files(tmp_path):
    package = tmp_path / "pkg"
    shutil.copytree(Path(build_cache.__file__).parent.parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    base = build_cache.fingerprint_of(package, "1.0")
    assert build_cache.fingerprint_of(package, "1.0") == base
    assert build_cache.fingerprint_of(package, "1.1") != base
    edit(package / "render/localize.py", "def localize(", "def localize(  ")
    assert build_cache.fingerprint_of(package, "1.0") != base
    edit(package / "locales/zh/LC_MESSAGES/messages.po", 'msgid "View source"', 'msgid "View source" ')
    assert build_cache.fingerprint_of(package, "1.0") != base
    # The real one is what builds use.
    assert build_cache.BuildCache.open(tmp_path / "site").fingerprint == build_cache.builder_fingerprint()


def test_fingerprint_reads_the_package_only(tmp_path):
    """Modules and catalogs only, in a fixed order, and nothing through a linked folder: a link
    inside the package to a tree elsewhere changes neither the fingerprint nor its key."""
    package = tmp_path / "pkg"
    shutil.copytree(Path(build_cache.__file__).parent.parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "module.py").write_text("x = 1\n")
    listed = [rel for rel, _, _ in build_cache._fingerprinted(package)]
    assert listed == sorted(listed, key=lambda rel: rel.split("/")) and "builder/cache.py" in listed
    assert all(rel.endswith((".py", ".po")) for rel in listed)
    before = build_cache.fingerprint_of(package, "1.0")
    (package / "linked").symlink_to(outside, target_is_directory=True)
    (package / "notes.txt").write_text("not a module\n")
    assert [rel for rel, _, _ in build_cache._fingerprinted(package)] == listed
    assert build_cache.fingerprint_of(package, "1.0") == before


def test_the_fingerprint_is_remembered_by_its_files_metadata(tmp_path, monkeypatch):
    package, home = tmp_path / "pkg", tmp_path / "home"
    shutil.copytree(Path(build_cache.__file__).parent.parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    computed = []
    real = build_cache.fingerprint_of
    monkeypatch.setattr(build_cache, "fingerprint_of", lambda *a: computed.append(a) or real(*a))
    # Files written moments ago are not vouched for by their metadata: computed, not remembered.
    first = build_cache.remembered_fingerprint(package, "1.0", home)
    assert first == real(package, "1.0") and len(computed) == 1 and not (home / build_cache.FINGERPRINTS).exists()
    monkeypatch.setattr(build_cache, "RACY_NS", 0)
    assert build_cache.remembered_fingerprint(package, "1.0", home) == first and len(computed) == 2
    assert build_cache.remembered_fingerprint(package, "1.0", home) == first and len(computed) == 2  # remembered
    assert build_cache.remembered_fingerprint(package, "1.1", home) != first and len(computed) == 3
    # An edit changes the file's metadata, so the package is read again.
    edit(package / "render/localize.py", "def localize(", "def localize(  ")
    edited = build_cache.remembered_fingerprint(package, "1.0", home)
    assert edited != first and edited == real(package, "1.0")
    # What is remembered is text, a line per key, and a damaged memo is only a miss.
    lines = (home / build_cache.FINGERPRINTS).read_text().splitlines()
    assert len(lines) == 3 and all(len(line.split(" ")) == 2 for line in lines)
    (home / build_cache.FINGERPRINTS).write_bytes(b"\xff\xfe garbage")
    assert build_cache.remembered_fingerprint(package, "1.0", home) == edited
    # `labml-site cache --clear` forgets them.
    from labml_site.builder import cache_size
    cache_size.clear(home)
    assert not (home / build_cache.FINGERPRINTS).exists()


# ---------------------------------------------------------------------------------------------
# Pages that show other pages' titles, and linked code


def test_titles_reach_listings_and_breadcrumbs(tmp_path):
    src, tr = make_tree(tmp_path)
    out = tmp_path / "site"
    build(config(src, tr, out))

    edit(src / "toy/page.py", "title: Scaled scores", "title: Scores, scaled")
    build(config(src, tr, out))
    assert "Scores, scaled" in text(out / "toy/index.html")  # the folder lists its pages

    edit(src / "toy/__init__.py", "title: Toy tutorial", "title: Toy course")
    result = build(config(src, tr, out))
    assert "Toy course" in text(out / "toy/user.html")  # breadcrumbs name the folder
    assert result.stats.analysed == 1


def test_code_links_follow_definitions_on_other_pages(tmp_path):
    src, tr = make_tree(tmp_path)
    out = tmp_path / "site"
    result = build(config(src, tr, out))
    hrefs = [href for s in result.pages["toy/user.py"].sections for href, name in linking.iter_links(s.code_html) if name == "scale"]
    assert hrefs and all(h.startswith("page.html#") for h in hrefs)

    # Renaming the definition on page.py changes what user.py links to, though user.py is unchanged.
    edit(src / "toy/page.py", "def scale(", "def rescale(")
    result = build(config(src, tr, out))
    assert result.stats.analysed == 1
    assert not [n for s in result.pages["toy/user.py"].sections for _, n in linking.iter_links(s.code_html) if n == "scale"]
    unlinked = {rel: prepare._analyse_file((rel, p.url, str(src / rel))) for rel, p in result.pages.items()}
    assert result.pages == linking.link_code(unlinked)


def test_incremental_site_equals_a_build_from_scratch(tmp_path):
    src, tr = make_tree(tmp_path)
    out = tmp_path / "site"
    build(config(src, tr, out))
    edit(src / "toy/page.py", "# Divide once", "# Divide once, then return")
    edit(src / "toy/__init__.py", "title: Toy tutorial", "title: Toy course")
    catalog = json.loads(text(tr / "toy/page.zh.json"))
    write_json(tr / "toy/page.zh.json", {k: v.replace("译", "翻译") for k, v in catalog.items()})
    incremental = build(config(src, tr, out))
    scratch = build(config(src, tr, tmp_path / "scratch", cache=False))
    assert incremental.stats.render_reused > 0
    assert snapshot(incremental.out) == snapshot(scratch.out)
    assert not (tmp_path / ".scratch-cache").exists()  # --no-cache neither reads nor writes


# ---------------------------------------------------------------------------------------------
# Damage


def test_corrupted_cache_files_are_ignored_and_rebuilt(tmp_path):
    src, tr = make_tree(tmp_path)
    out = tmp_path / "site"
    first = snapshot(build(config(src, tr, out)).out)
    cache_dir = build_cache.cache_dir_for(out)
    # A pack of the source files' analyses and texts, each page's linked code, heads, manifest,
    # last build.
    entries = sorted(cache_dir.rglob("*.pkl"))
    assert len(entries) >= 1 + 3 + 3
    for i, entry in enumerate(entries):
        data = entry.read_bytes()
        if i % 3 == 0:
            entry.write_bytes(data[: len(data) // 2])  # torn write
        elif i % 3 == 1:
            entry.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))  # a flipped bit
        else:
            entry.write_bytes(build_cache._encode(pickle.dumps("not what was stored")))  # valid, wrong type
    (cache_dir / "rendered.pkl").write_bytes(b"garbage")

    result = build(config(src, tr, out))
    assert result.stats.analysed == 3 and result.stats.localized == 3 * len(LANGS)
    assert result.stats.render_reused == 0
    assert snapshot(result.out) == first
    # …and the cache works again afterwards.
    assert build(config(src, tr, out)).stats.analysed == 0


def test_damaged_objects_behind_intact_heads_are_computed_again(tmp_path):
    """Heads say what a page is without loading it; when a page must be rendered and its cached
    object is gone or damaged, it is analysed and localized again, not shown stale or empty."""
    src, tr = make_tree(tmp_path)
    out = tmp_path / "site"
    first = snapshot(build(config(src, tr, out)).out)
    for entry in (build_cache.cache_dir_for(out) / "objects").glob("*.pkl"):
        entry.write_bytes(entry.read_bytes()[:10])
    shutil.rmtree(out)  # every page must be rendered again, from objects that are all damaged

    result = build(config(src, tr, out))
    assert result.stats.analysed == 3 and result.stats.localized == 3 * len(LANGS)
    assert snapshot(result.out) == first


def test_deleting_the_cache_is_safe(tmp_path):
    src, tr = make_tree(tmp_path)
    out = tmp_path / "site"
    first = snapshot(build(config(src, tr, out)).out)
    shutil.rmtree(build_cache.cache_dir_for(out))
    result = build(config(src, tr, out))
    assert result.stats.analysed == 3 and result.stats.rendered > 0 and result.stats.render_reused == 0
    assert snapshot(result.out) == first


def test_hand_edited_output_is_replaced(tmp_path):
    src, tr = make_tree(tmp_path)
    out = tmp_path / "site"
    build(config(src, tr, out))
    good = text(out / "toy/page.html")
    (out / "toy/page.html").write_text("edited by hand", encoding="utf-8")
    build(config(src, tr, out))
    assert text(out / "toy/page.html") == good


def test_failed_build_keeps_the_previous_site_and_a_usable_cache(tmp_path):
    src, tr = make_tree(tmp_path)
    templates = tmp_path / "theme"
    shutil.copytree(DEFAULT_TEMPLATES, templates)
    out = tmp_path / "site"
    first = snapshot(build(config(src, tr, out, templates=templates)).out)

    edit(src / "toy/page.py", "# Divide once", "# Divide twice")
    edit(templates / "page.html", "{% block main %}", "{% block main %}{{ no_such_variable }}")
    with pytest.raises(Exception):
        build(config(src, tr, out, templates=templates))
    assert snapshot(out) == first

    edit(templates / "page.html", "{{ no_such_variable }}", "")
    result = build(config(src, tr, out, templates=templates))
    assert "Divide twice" in text(out / "toy/page.html")
    assert result.stats.analysed == 0  # the failed build's analysis was kept


def test_value_digest_is_stable_and_distinguishes(tmp_path):
    ui = i18n.load_ui("zh")
    context = {"title": "T", "n": 1, "items": [{"a": "x"}], "_": ui.gettext, "none": None}
    assert build_cache.value_digest(context) == build_cache.value_digest(dict(context))
    for changed in ({**context, "n": 2}, {**context, "n": "1"}, {**context, "n": True}, {**context, "items": [{"a": "y"}]},
                    {**context, "_": i18n.load_ui("ru").gettext}, {**context, "extra": ""}):
        assert build_cache.value_digest(changed) != build_cache.value_digest(context)


# ---------------------------------------------------------------------------------------------
# Parallel builds


def test_parallel_build_equals_serial_build(tmp_path, monkeypatch):
    files = {"toy/__init__.py": INDEX, "toy/page.py": PAGE, "toy/user.py": USER}
    for i in range(prepare.PARALLEL_MIN_FILES):
        files[f"toy/more/p{i}.py"] = PAGE.replace("Scaled scores", f"Scaled scores {i}")
    src, tr = make_tree(tmp_path, files)
    monkeypatch.setattr(engine_module, "PARALLEL_MIN_OUTPUTS", 1)  # pages rendered (and linked) in workers too
    # (A thread another test left running in this process makes the builder render here instead
    # of in forked workers, as it must: then the links are not stored per task.)
    render_workers = workers.can_fork()
    parallel = build(config(src, tr, tmp_path / "a", jobs=2))
    serial = build(config(src, tr, tmp_path / "b", jobs=1, cache=False))
    assert parallel.stats.workers == 2 and serial.stats.workers == 1
    assert snapshot(parallel.out) == snapshot(serial.out)
    # With a cache, the render workers load what the analysis workers stored; without one, the
    # analysis workers send it all back.
    uncached = build(config(src, tr, tmp_path / "c", jobs=2, cache=False))
    assert uncached.stats.workers == 2 and snapshot(uncached.out) == snapshot(serial.out)
    # The workers' counts reach the result, and what they computed reached the cache.
    assert parallel.stats.linked == serial.stats.linked == len(files)
    assert parallel.stats.rendered == serial.stats.rendered
    again = build_reading(config(src, tr, tmp_path / "a", jobs=2))
    assert again.stats.analysed == 0 and again.stats.localized == 0 and again.stats.rendered == 0
    assert again.stats.linked == 0 and again.stats.link_reused == len(files)
    # Each render task stored its pages' links in one file, not one file per page.
    objects = list((build_cache.cache_dir_for(tmp_path / "a") / "objects").iterdir())
    assert len(objects) <= len(files) + 2 * 6 or not render_workers, (len(objects), len(files))


# ---------------------------------------------------------------------------------------------
# serve


def test_serve_rebuilds_incrementally_and_wakes_waiting_pages(tmp_path):
    from labml_site.builder.serve import RELOAD_PATH, make_server, watch_and_rebuild

    src, tr = make_tree(tmp_path)
    cfg = config(src, tr, tmp_path / "site", live_reload=True)
    results = [build(cfg)]
    server, state = make_server(cfg.out, 0)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    stop = threading.Event()
    watcher = threading.Thread(target=watch_and_rebuild, args=([src, tr], lambda: results.append(build(cfg)), state, stop), daemon=True)
    watcher.start()
    try:
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/toy/page.html").read().decode()
        assert RELOAD_PATH in page  # the reload script is injected
        answer: list[str] = []
        waiter = threading.Thread(target=lambda: answer.append(urllib.request.urlopen(f"http://127.0.0.1:{port}{RELOAD_PATH}?after=0").read().decode()))
        waiter.start()
        # Save until the watcher sees it (it may start watching a moment after this point).
        for n in range(50):
            edit(src / "toy/page.py", "# Divide once" if n == 0 else f"# Divide once ({n - 1})", f"# Divide once ({n})")
            if state.wait_for_change(0, timeout=0.5) != 0:
                break
        waiter.join(timeout=30)
        assert answer and answer[0] != "0"  # the long poll answered with the new build number
        with state.lock:  # wait for any rebuild still running
            pass
        assert "Divide once (" in urllib.request.urlopen(f"http://127.0.0.1:{port}/toy/page.html").read().decode()
        assert all(r.stats.analysed <= 1 for r in results[1:]) and len(results) > 1
        assert results[-1].stats.render_reused > 0
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
        watcher.join(timeout=10)


def _serve_rebuild_after_an_edit(tmp_path, monkeypatch, finish_for):
    """A built, settled site, then one `serve` rebuild after an edit of the toy page, with
    `Production.finish` (which records the build's outputs) replaced by `finish_for(state)`, given
    the server's state: the config and that state."""
    from labml_site.builder import settle
    from labml_site.builder.serve import make_server, rebuild_now

    src, tr = make_tree(tmp_path)
    cfg = config(src, tr, tmp_path / "site", live_reload=True)
    build(cfg)
    settle()
    server, state = make_server(cfg.out, 0)
    monkeypatch.setattr(engine_module.Production, "finish", finish_for(state))
    try:
        edit(src / "toy/page.py", "# Divide once", "# Divide twice")
        rebuild_now(lambda: build(cfg), state)
    finally:
        server.server_close()
    return cfg, state


def test_a_serve_rebuild_wakes_the_pages_before_it_records_what_the_next_build_reads(tmp_path, monkeypatch):
    """The reload waits only for the site: the records (heads, manifest, the nothing-changed
    record) are saved after the pages are told, and before the next build reads them."""
    from labml_site.builder.uptodate import up_to_date

    woken_before_recorded: list[bool] = []
    real_finish = engine_module.Production.finish

    def finish_for(state):
        def finish(self):
            woken_before_recorded.append(state.build_id == 1)
            real_finish(self)
        return finish

    cfg, _state = _serve_rebuild_after_an_edit(tmp_path, monkeypatch, finish_for)
    assert woken_before_recorded == [True]
    assert "Divide twice" in text(cfg.out / "toy/page.html")
    # Recorded once the rebuild is done: the next build knows the site is up to date from the
    # inputs' metadata alone, without building.
    assert up_to_date(cfg, lambda *a: pytest.fail("built again"))[0] is not None


def test_a_live_reload_build_left_unrecorded_is_recorded_before_the_next_build_reads(tmp_path):
    src, tr = make_tree(tmp_path)
    cfg = config(src, tr, tmp_path / "site", live_reload=True)
    build(cfg)
    edit(src / "toy/page.py", "# Divide once", "# Divide twice")
    build(cfg)  # (not settled: no `serve` around it)
    again = build(cfg)  # settles the build before, then finds the site as it would write it
    assert again.files_written == 0 and again.stats.rendered == 0 and again.stats.analysed == 0


def test_a_serve_rebuild_whose_records_cannot_be_saved_still_serves_and_says_why(tmp_path, monkeypatch, capsys):
    def finish(self):
        raise OSError(28, "No space left on device")

    cfg, state = _serve_rebuild_after_an_edit(tmp_path, monkeypatch, lambda state: finish)
    assert state.build_id == 1 and "Divide twice" in text(cfg.out / "toy/page.html")
    assert "the build cache could not be updated" in capsys.readouterr().err
    monkeypatch.undo()
    edit(cfg.source / "toy/page.py", "# Divide twice", "# Divide thrice")
    assert build(cfg).ok and "Divide thrice" in text(cfg.out / "toy/page.html")


def test_each_language_names_the_site_in_that_language(tmp_path):
    """Pages are rendered after every language's outputs are known (possibly in workers): each
    must still carry its own language's site name, however the renders are ordered."""
    src, tr = make_tree(tmp_path)
    index_keys = analyse("toy/__init__.py", "toy/index.html", INDEX).keys
    write_json(tr / "toy/__init__.zh.json", {index_keys[0]: "玩具教程"})
    home = src / "__init__.py"
    home.write_text('"""\n# Home of the toys\n"""\n', encoding="utf-8")
    write_json(tr / "__init__.zh.json", {"Home of the toys": "玩具之家"})
    out = build(config(src, tr, tmp_path / "site")).out
    assert 'content="Home of the toys"' in text(out / "toy/page.html")
    assert 'content="玩具之家"' in text(out / "zh/toy/page.html")
    assert "玩具教程" in text(out / "zh/toy/page.html")  # the folder's title in the breadcrumbs


def test_file_digests_read_a_file_again_only_when_it_may_have_changed(tmp_path, monkeypatch):
    out = tmp_path / "site"
    path = tmp_path / "a.txt"
    path.write_text("one", encoding="utf-8")
    reads: list[Path] = []
    real_read = build_cache.read_regular
    monkeypatch.setattr(build_cache, "read_regular", lambda p, limit: reads.append(Path(p)) or real_read(p, limit))

    def digest_in_a_new_build() -> str:
        cache = build_cache.BuildCache.open(out)
        found = cache.files.digest(path)
        cache.save_heads()
        return found

    monkeypatch.setattr(build_cache, "RACY_NS", -1)  # as if the file was written long ago
    first = digest_in_a_new_build()
    assert first == build_cache.digest(b"one") and reads.count(path) == 1
    assert digest_in_a_new_build() == first and reads.count(path) == 1  # remembered: not read again
    path.write_text("two", encoding="utf-8")  # same size, new times and content
    assert digest_in_a_new_build() == build_cache.digest(b"two") and reads.count(path) == 2
    # A file changed within the racy window could change again within the same clock tick with
    # the same size and times: it is read every time until it is older.
    monkeypatch.setattr(build_cache, "RACY_NS", 3600 * 10**9)
    path.write_text("six", encoding="utf-8")
    assert digest_in_a_new_build() == build_cache.digest(b"six") and reads.count(path) == 3
    assert digest_in_a_new_build() == build_cache.digest(b"six") and reads.count(path) == 4
    path.unlink()
    assert digest_in_a_new_build() == build_cache.FileDigests.MISSING
    # What is not a regular file is never opened, and digests as a value of its own.
    os.mkfifo(path)
    assert digest_in_a_new_build().startswith("refused:") and reads.count(path) == 4


def _pager(path: Path) -> dict[str, tuple[str, str]]:
    """rel → (href, title) of the page's previous/next links (the top pager)."""
    import re

    found = {}
    for rel, href, title in re.findall(r'<a class="pager-\w+" rel="(prev|next)" href="([^"]*)">.*?<span class="pager-title">([^<]*)</span>', text(path)):
        found.setdefault(rel, (href, title))
    return found


def test_prev_next_follow_titles_and_the_reading_order(tmp_path):
    """Previous/next links are inputs of the pages that show them: renaming a page updates its
    neighbours, and reordering the folder page's list reorders every link."""
    src, tr = make_tree(tmp_path)
    out = tmp_path / "site"
    build(config(src, tr, out))
    assert _pager(out / "toy/user.html")["prev"] == ("page.html", "Scaled scores")
    assert _pager(out / "toy/index.html")["next"] == ("page.html", "Scaled scores")
    assert '<link rel="prev" href="page.html">' in text(out / "toy/user.html")

    edit(src / "toy/page.py", "title: Scaled scores", "title: Scores, scaled")
    result = build(config(src, tr, out))
    assert result.stats.analysed == 1
    assert _pager(out / "toy/user.html")["prev"] == ("page.html", "Scores, scaled")  # a neighbour, re-rendered
    assert _pager(out / "toy/index.html")["next"] == ("page.html", "Scores, scaled")
    assert _pager(out / "zh/toy/user.html")["prev"][0] == "page.html"

    # The folder page now lists user.html first: the order of cards and links follows it.
    edit(src / "toy/__init__.py", "Start with [the scores](page.html).", "Start with [the user](user.html), then [the scores](page.html).")
    build(config(src, tr, out))
    assert _pager(out / "toy/index.html")["next"] == ("user.html", "Using the scale")
    assert _pager(out / "toy/user.html")["next"] == ("page.html", "Scores, scaled")
    assert "next" not in _pager(out / "toy/page.html")
    index = text(out / "toy/index.html")
    assert index.index('href="user.html">Using the scale') < index.index('href="page.html">Scores, scaled')


def test_the_render_manifest_grows_by_what_an_edit_changed(tmp_path):
    extra = {f"toy/extra{i}.py": f'"""\n# Extra page {i}\n\nSome text.\n"""\nx = {i}\n' for i in range(30)}
    src, tr = make_tree(tmp_path, {"toy/__init__.py": INDEX, "toy/page.py": PAGE, "toy/user.py": USER, **extra})
    out = tmp_path / "site"
    first = build(config(src, tr, out))
    root = build_cache.cache_dir_for(out)
    base = (root / "rendered.pkl").read_bytes()
    edit(src / "toy/user.py", "# Scale by four", "# Scale by four, as the other page does")
    second = build(config(src, tr, out))
    assert 0 < second.stats.rendered < first.stats.rendered
    assert (root / "rendered.pkl").read_bytes() == base  # not written again: the change is appended
    assert 0 < (root / "rendered.log").stat().st_size * 4 < len(base)
    loaded = build_cache.RenderManifest.load(root).entries  # (as the next process reads it)
    assert set(loaded) <= set(snapshot(out)) and len(loaded) > 10
    # Each entry names the very file in the site: the next rebuild keeps them all.
    for rel, written in loaded.items():
        st = (out / rel).stat()
        assert (st.st_size, st.st_mtime_ns, st.st_ino) == (written.size, written.mtime_ns, written.inode), rel
    assert build_cache.RenderManifest.load(root, keep_in_memory=True).entries == loaded


class _FailsToLoad:
    """Pickles, but raises when unpickled (as a class renamed since the pack was written would)."""

    def __reduce__(self):
        return (_raise_on_load, ())


def _raise_on_load():
    raise RuntimeError("this entry does not load")


def test_a_pack_entry_is_read_alone(tmp_path: Path) -> None:
    """Each entry of a pack unpickles on its own: one that no longer loads is a miss, the others
    are still found, and one that does not pickle is left out of the pack, not the whole pack."""
    store = build_cache.ObjectStore(tmp_path)
    pack, keys = store.put_pack({"a": {"x": 1}, "broken": _FailsToLoad(), "b": [2, 3], "lambda": lambda: None})
    assert pack and keys == ("a", "broken", "b")  # (a lambda does not pickle)
    reader = build_cache.ObjectStore(tmp_path)  # (a later build: nothing in memory)
    assert reader.get_from_pack(pack, "b") == [2, 3]
    assert reader.get_from_pack(pack, "broken") is build_cache.MISS
    assert reader.get_from_pack(pack, "a") == {"x": 1}
    assert reader.get_from_pack(pack, "lambda") is build_cache.MISS


def test_packs_read_in_turn_are_each_loaded_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page's entries come from a few packs in turn (its analysis and texts, its folder's other
    pages): each is opened once, not again whenever another was read in between."""
    store = build_cache.ObjectStore(tmp_path)
    packs = [store.put_pack({f"{n}-{i}": i for i in range(3)})[0] for n in range(build_cache._PACKS_KEPT)]
    reader = build_cache.ObjectStore(tmp_path)
    opened: list[str] = []
    real_open = build_cache._PackReader.open
    monkeypatch.setattr(build_cache._PackReader, "open", lambda path: opened.append(Path(path).stem) or real_open(path))
    for i in range(3):
        for n, pack in enumerate(packs):
            assert reader.get_from_pack(pack, f"{n}-{i}") == i
    assert sorted(opened) == sorted(packs)
    reader.get_from_pack(store.put_pack({"new": 1})[0], "new")  # one more: the least recently used goes
    reader.get_from_pack(packs[-1], f"{len(packs) - 1}-0")
    reader.get_from_pack(packs[0], "0-0")
    assert opened[-1] == packs[0] and opened.count(packs[-1]) == 1


@pytest.mark.parametrize("whole", [True, False])
def test_a_damaged_pack_entry_is_a_miss_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, whole: bool) -> None:
    """A flipped bit in one entry's bytes, in a pack read whole or (a large one) entry by entry,
    is a miss for that entry; the others are found."""
    if not whole:
        monkeypatch.setattr(build_cache, "_PACK_READ_WHOLE", 64)
    store = build_cache.ObjectStore(tmp_path)
    values = {f"k{i}": f"value {i} " * 20 for i in range(5)}
    pack, _ = store.put_pack(values)
    path = store._path(pack)
    data = bytearray(path.read_bytes())
    at = data.index(b"value 2 ")  # (inside the third entry's pickle)
    data[at] ^= 0x01
    path.write_bytes(bytes(data))
    reader = build_cache.ObjectStore(tmp_path)
    assert reader.get_from_pack(pack, "k2") is build_cache.MISS
    assert [reader.get_from_pack(pack, key) for key in ("k0", "k1", "k3", "k4")] == [values[k] for k in ("k0", "k1", "k3", "k4")]
    opened = reader.packs[pack]
    assert (opened.data is not None) == whole
    if not whole:
        assert path.stat().st_size > 5 * 100 and len(opened.index) == 5
    path.write_bytes(bytes(data[: len(data) // 2]))  # torn: what lies past the tear is missed
    torn = build_cache.ObjectStore(tmp_path)
    assert torn.get_from_pack(pack, "k4") is build_cache.MISS
    # A length past the file's end (damage) is a miss, not a read of that many bytes.
    path.write_bytes(bytes(data[:4]) + (1 << 60).to_bytes(8, "little") + bytes(data[12:]))
    assert build_cache.ObjectStore(tmp_path).get_from_pack(pack, "k0") is build_cache.MISS


def test_repairs_are_remembered_from_one_build_to_the_next(tmp_path, monkeypatch):
    """A translation value that needs a repair is repaired once: the next build that localizes
    its page again (here after an edit of the page)
    takes the repair from the cache, and shows what a build without that record shows."""
    from labml_site.translate import repair

    src, tr = make_tree(tmp_path)
    keys = analyse("toy/page.py", "toy/page.html", PAGE).keys
    first = next(k for k in keys if k.startswith("<p>") and k.endswith("</p>\n"))
    values = json.loads((tr / "toy/page.zh.json").read_text(encoding="utf-8"))
    values[first] = zh_value(first).rstrip("\n") + "。\n"  # text after </p>: a benign defect
    write_json(tr / "toy/page.zh.json", values)
    assert repair.review(first, values[first], lang="zh").repaired is not None
    cfg = config(src, tr, tmp_path / "site", jobs=1)
    build(cfg)
    edit(src / "toy/page.py", "# Divide once", "# Divide twice")
    monkeypatch.setattr(repair, "_repair_html", lambda *a: pytest.fail("repaired again"))
    again = build(cfg)
    assert again.stats.localized == len(LANGS) and "Divide twice" in text(again.out / "toy/page.html")
    monkeypatch.undo()
    fresh = build(config(src, tr, tmp_path / "fresh", jobs=1, cache=False))
    assert snapshot(again.out) == snapshot(fresh.out)


def test_a_repairs_record_of_another_builder_is_not_used(tmp_path):
    mine, theirs = build_cache.RepairsRecord(tmp_path, "mine"), build_cache.RepairsRecord(tmp_path, "theirs")
    theirs.save({"d1": "<p>theirs</p>\n"})
    assert build_cache.RepairsRecord(tmp_path, "theirs").get("d1") == "<p>theirs</p>\n"
    assert mine.get("d1") is None and len(mine) == 0
    mine.save({"d2": "<p>mine</p>\n"})
    again = build_cache.RepairsRecord(tmp_path, "mine")
    assert dict(again) == {"d2": "<p>mine</p>\n"} and build_cache.RepairsRecord(tmp_path, "theirs").get("d1") is None
