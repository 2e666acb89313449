"""Writing a new site's files (`builder/outputs.py`): every file 0644 and every folder 0755
whatever the umask, from the first build on; a link found where an output goes is replaced, never
written through; a folder another writer made first (a render worker) is used as it is."""
from __future__ import annotations

import os
from pathlib import Path

from labml_site.builder.outputs import MARKER, MARKER_TEXT, new_site_folder, write_outputs
from labml_site.builder.site import BuildConfig, build

from conftest import TOY_PAGE, write_tree


def _modes(root: Path) -> dict[str, int]:
    return {os.path.relpath(p, root): p.lstat().st_mode & 0o777 for p in [root, *root.rglob("*")]}


def _private_umask():
    class Umask:
        def __enter__(self):
            self.old = os.umask(0o077)

        def __exit__(self, *exc):
            os.umask(self.old)

    return Umask()


def test_a_cold_build_publishes_normal_modes_under_a_private_umask(tmp_path):
    src = write_tree(tmp_path / "src", {"toy/__init__.py": '"""\n# Toy\n"""\n', "toy/page.py": TOY_PAGE})
    (tmp_path / "tr").mkdir()
    with _private_umask():
        out = build(BuildConfig(source=src, translations=tmp_path / "tr", out=tmp_path / "site", langs=("en",))).out
    modes = _modes(out)
    assert MARKER in modes and "toy/page.html" in modes
    wrong = {rel: oct(mode) for rel, mode in modes.items() if mode != (0o755 if (out / rel).is_dir() else 0o644)}
    assert not wrong


def test_outputs_get_their_folders_and_normal_modes_under_a_private_umask(tmp_path):
    root = tmp_path / "new"
    root.mkdir()
    with _private_umask():
        write_outputs({"a/b/c/page.html": "<p>é</p>", "a/top.js": b"x = 1;\n"}, root)
        write_outputs({"a/b/other.html": b"2", "a/b/c/more.html": b"3", "d/e.css": ""}, root)  # folders made before
    assert (root / "a/b/c/page.html").read_bytes() == "<p>é</p>".encode("utf-8")
    assert (root / "a/b/c/more.html").read_bytes() == b"3" and (root / "d/e.css").read_bytes() == b""
    modes = _modes(root)
    del modes["."]  # (the caller's folder)
    assert modes == {
        "a": 0o755, "a/b": 0o755, "a/b/c": 0o755, "d": 0o755,
        "a/b/c/page.html": 0o644, "a/top.js": 0o644, "a/b/other.html": 0o644, "a/b/c/more.html": 0o644, "d/e.css": 0o644,
    }


def test_a_link_where_an_output_goes_is_replaced_not_written_through(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"keep")
    root = tmp_path / "new"
    (root / "a").mkdir(parents=True)
    os.symlink(outside, root / "a/page.html")
    os.symlink(tmp_path / "missing.txt", root / "dangling.html")
    write_outputs({"a/page.html": b"new", "dangling.html": b"also new"}, root)
    assert outside.read_bytes() == b"keep" and not (tmp_path / "missing.txt").exists()
    for rel, data in (("a/page.html", b"new"), ("dangling.html", b"also new")):
        assert not (root / rel).is_symlink() and (root / rel).read_bytes() == data
        assert (root / rel).stat().st_mode & 0o777 == 0o644


def test_the_marker_written_first_is_replaced_by_the_sites_own(tmp_path):
    out = tmp_path / "site"
    with _private_umask():
        tmp = new_site_folder(out)
        assert (tmp / MARKER).read_bytes() == MARKER_TEXT  # ours from the start
        write_outputs({MARKER: MARKER_TEXT, "index.html": b"<p>"}, tmp)
    assert (tmp / MARKER).read_bytes() == MARKER_TEXT and (tmp / MARKER).stat().st_mode & 0o777 == 0o644
    assert tmp.stat().st_mode & 0o777 == 0o755 and not [p for p in tmp.iterdir() if p.name.startswith(".tmp-")]
