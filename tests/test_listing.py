"""A build asks its snapshot's listing of the translations folder, not the disk, where each page's
translation file is (read/listing.py): the answers must be the disk's, for every kind of tree."""
from __future__ import annotations

import os
from pathlib import Path

from labml_site.builder.config import BuildConfig
from labml_site.builder.uptodate import Snapshot, take_snapshot
from labml_site.read.structure import discover
from labml_site.translate.catalog import resolve_translation_file

LANGS = ("en", "zh", "ru")


def _tree(tmp_path: Path) -> BuildConfig:
    src, tr = tmp_path / "src", tmp_path / "tr"
    pages = ["a.py", "rwkv/model.py", "twice/x.py", "dir/p.py", "linked/q.py", "hidden/h.py", "Node_Modules/n.py",
             "Stra\u00dfe/s.py", "deep/er/page.py", "none/z.py"]
    for rel in pages:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text('"""# Title"""\nx = 1\n', encoding="utf-8")
    files = {
        "a.zh.json": "{}",  # exact
        "RWKV/model.zh.json": "{}",  # the source's path but for case: found, with a warning
        "twice/X.zh.json": "{}", "Twice/x.zh.json": "{}",  # two by case: neither
        "linked/target.json": "{}",
        "node_modules/n.zh.json": "{}",  # a folder the walk leaves out, matched by case
        "STRASSE/s.zh.json": "{}",  # casefold makes ß "ss": matched as the disk matches it
        "deep/ER/page.ru.json": "{}",
        "hidden/.h.zh.json": "{}",
    }
    for rel, text in files.items():
        (tr / rel).parent.mkdir(parents=True, exist_ok=True)
        (tr / rel).write_text(text, encoding="utf-8")
    (tr / "dir" / "p.zh.json").mkdir(parents=True)  # a folder with a translation file's name
    (tr / "linked" / "q.zh.json").symlink_to(tr / "linked" / "target.json")  # a link: the disk decides
    (tr / "linked" / "Q.ru.json").symlink_to(tr / "nowhere.json")  # a dangling one, by case
    return BuildConfig(src, tr, tmp_path / "site", langs=LANGS)


def test_the_listing_answers_as_the_disk_does(tmp_path: Path) -> None:
    config = _tree(tmp_path)
    listing = take_snapshot(config).listing("translations")
    assert listing is not None and listing.complete
    pages = discover(config.source, LANGS).pages
    assert len(pages) == 10
    asked = 0
    for page in pages:
        for lang in LANGS[1:]:
            expected = resolve_translation_file(os.fspath(config.translations), page.base, lang)
            assert resolve_translation_file(os.fspath(config.translations), page.base, lang, listing) == expected, (page.rel, lang)
            asked += 1
    assert asked == 20
    found = {page.base: resolve_translation_file(os.fspath(config.translations), page.base, "zh", listing) for page in pages}
    assert found["rwkv/model"][0].endswith("RWKV/model.zh.json") and found["rwkv/model"][1].code == "path-case"
    assert found["twice/x"][1] is None and found["a"] == (os.path.join(config.translations, "a.zh.json"), None)


def test_what_the_listing_cannot_vouch_for_is_left_to_the_disk(tmp_path: Path) -> None:
    config = _tree(tmp_path)
    listing = take_snapshot(config).listing("translations")
    assert listing.exists("a.zh.json") is True and listing.exists("gone.zh.json") is False
    assert listing.is_file("dir/p.zh.json") is False and listing.is_file("a.zh.json") is True
    assert listing.exists("linked/q.zh.json") is None  # a link
    assert listing.files_by_case("linked/q.ru.json") is None  # a link among the matches
    assert listing.exists(".git/x.zh.json") is None and listing.files_by_case("NODE_MODULES/n.zh.json") is None
    assert sorted(listing.files_by_case("TWICE/X.zh.json")) == ["Twice/x.zh.json", "twice/X.zh.json"]


def test_a_folder_the_walk_could_not_list_makes_the_listing_ask_the_disk() -> None:
    snapshot = Snapshot((("translations", "deep", "unlisted", 13), ("translations", "a.zh.json", 0o100644, 2, 0, 0, 1)),
                        roots=(("translations", "/tr"),))
    listing = snapshot.listing("translations")
    assert not listing.complete
    assert listing.exists("a.zh.json") is True  # (what it did see, it saw)
    assert listing.exists("gone.zh.json") is None and listing.files_by_case("A.zh.json") is None
    assert snapshot.listing("source") is None  # (not walked)
    assert snapshot.file_stats() == {"/tr/a.zh.json": (2, 0, 0, 1)}


def _discovered(files) -> tuple:
    return ([(p.rel, str(p.path), p.url, p.is_index) for p in files.pages], [(a.rel, str(a.path)) for a in files.assets.values()],
            sorted((f.rel, f.index.rel if f.index else None, [p.rel for p in f.pages], list(f.subfolders)) for f in files.folders.values()),
            [f.format() for f in files.findings])


def test_discovery_from_the_listing_is_the_disk_s(tmp_path: Path) -> None:
    config = _tree(tmp_path)
    (config.source / "fig.png").write_bytes(b"png")
    # Sorted as strings `img-2/` would come first ("-" < "/"); as paths (by parts) `img/` does.
    for rel in ("deep-er/page.py", "deep-er.py", "a-b/c.py", "a_b.md", "img/x.png", "img-2/y.png"):
        (config.source / rel).parent.mkdir(parents=True, exist_ok=True)
        (config.source / rel).write_text('"""# Title"""\nx = 1\n', encoding="utf-8")
    (config.source / "model.pt").write_bytes(b"weights")  # skipped by its suffix
    (config.source / ".hidden.py").write_text("x = 1\n")
    (config.source / "__pycache__").mkdir()
    (config.source / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"")
    listing = take_snapshot(config).listing("source")
    assert _discovered(discover(config.source, LANGS, "en", listing)) == _discovered(discover(config.source, LANGS, "en"))
    # What the disk walk would report (a link, a name that cannot be published, an oversized page)
    # is left to it, so the findings and their order are the disk's.
    (config.source / "link.py").symlink_to(config.source / "a.py")
    (config.source / "bad\u202ename.py").write_text("x = 1\n")
    (config.source / "big.md").write_bytes(b"#" * (4 * 1024 * 1024 + 1))
    listing = take_snapshot(config).listing("source")
    with_listing = _discovered(discover(config.source, LANGS, "en", listing))
    assert with_listing == _discovered(discover(config.source, LANGS, "en")) and len(with_listing[3]) == 3
