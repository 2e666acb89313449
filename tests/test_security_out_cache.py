"""Issue 22, what a build may delete and what it may load.

- `--out` is replaced by each build, so a folder git tracks files in is refused, marker or not: a
  pull request can commit a `.labml-site` marker into any folder (and a leftover-looking
  `.site-new-…` folder beside it), and a build must never delete what the repository holds.
- The cache holds pickles, which run code when loaded: its folder is used only when it is this
  user's and no one else can write to it (as ssh checks ~/.ssh), and it is created private (0700);
  otherwise the build runs without a cache and says why.
"""
from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from conftest import TOY_PAGE, git, write_tree
from labml_site.builder import cache as build_cache
from labml_site.builder.outputs import MARKER, MARKER_TEXT
from labml_site.builder.site import BuildConfig, build
from labml_site.errors import UserError

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")




def _project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write_tree(root, {"src/__init__.py": '"""\n# Home\n"""\n', "src/page.py": TOY_PAGE, "tr/.keep": ""})
    return root


def _config(root: Path, out: Path) -> BuildConfig:
    return BuildConfig(root / "src", root / "tr", out, langs=("en",), jobs=1)


@needs_git
@pytest.mark.parametrize("where", ["docs", "docs/deep/er"])
def test_a_planted_marker_in_a_tracked_folder_does_not_make_it_an_out(tmp_path, where):
    root = _project(tmp_path)
    write_tree(root, {"docs/README.md": "keep me\n", "docs/deep/er/notes.md": "and me\n"})
    (root / where / MARKER).write_bytes(MARKER_TEXT)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a pull request")
    before = sorted(p.relative_to(root).as_posix() for p in (root / "docs").rglob("*"))
    with pytest.raises(UserError) as caught:
        build(_config(root, root / where))
    assert "git" in str(caught.value) and "--out" in str(caught.value)
    assert sorted(p.relative_to(root).as_posix() for p in (root / "docs").rglob("*")) == before
    assert (root / "docs/README.md").read_text() == "keep me\n"


def _repository_with_an_ignored_site(tmp_path: Path) -> Path:
    root = _project(tmp_path)
    (root / ".gitignore").write_text("site/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "x")
    return root


@needs_git
def test_a_tracked_file_added_to_a_built_site_stops_the_next_build(tmp_path):
    root = _repository_with_an_ignored_site(tmp_path)
    first = build(_config(root, root / "site"))
    assert (first.out / "page.html").is_file()
    (root / "site/CNAME").write_text("example.org\n")
    git(root, "add", "-f", "site/CNAME")  # a pull request force-adds a file under the ignored site
    git(root, "commit", "-q", "-m", "y")
    (root / "src/page.py").write_text(TOY_PAGE.replace("Scaled scores", "Changed"), encoding="utf-8")
    with pytest.raises(UserError):
        build(_config(root, root / "site"))
    assert (root / "site/CNAME").read_text() == "example.org\n"


@needs_git
def test_an_untracked_site_in_a_repository_builds_again(tmp_path):
    root = _repository_with_an_ignored_site(tmp_path)
    build(_config(root, root / "site"))
    (root / "src/page.py").write_text(TOY_PAGE.replace("Scaled scores", "Changed"), encoding="utf-8")
    result = build(_config(root, root / "site"))
    assert "Changed" in (result.out / "page.html").read_text(encoding="utf-8")


@needs_git
def test_a_tracked_folder_that_looks_like_a_leftover_is_never_deleted(tmp_path):
    root = _project(tmp_path)
    (root / ".gitignore").write_text("site/\n")
    leftover = root / ".site-new-planted"
    write_tree(leftover, {"important.txt": "tracked\n"})
    (leftover / MARKER).write_bytes(MARKER_TEXT)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "x")
    build(_config(root, root / "site"))
    assert (leftover / "important.txt").read_text() == "tracked\n"


# ---------------------------------------------------------------------------------------------
# The cache folder


def _cache_root(tmp_path: Path, monkeypatch) -> Path:
    home = tmp_path / "cachehome"
    monkeypatch.setenv("LABML_SITE_CACHE_DIR", str(home))
    return home


def test_the_cache_folder_is_created_private(tmp_path, monkeypatch):
    home = _cache_root(tmp_path, monkeypatch)
    root = _project(tmp_path)
    result = build(_config(root, tmp_path / "site"))
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    site_cache = build_cache.cache_dir_for(tmp_path / "site")
    assert stat.S_IMODE(site_cache.stat().st_mode) == 0o700 and any(site_cache.iterdir())
    assert "cache-refused" not in {f.code for f in result.report.findings}


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o757, 0o722])
def test_a_cache_others_can_write_is_not_loaded(tmp_path, monkeypatch, mode):
    home = _cache_root(tmp_path, monkeypatch)
    root = _project(tmp_path)
    build(_config(root, tmp_path / "site"))  # a good cache first
    os.chmod(home, mode)
    loaded = []
    real = build_cache._decode
    monkeypatch.setattr(build_cache, "_decode", lambda data: loaded.append(1) or real(data))
    (root / "src/page.py").write_text(TOY_PAGE.replace("Scaled scores", "Changed"), encoding="utf-8")
    result = build(_config(root, tmp_path / "site"))
    assert loaded == []  # no pickle read from a folder another user could have written
    refused = [f for f in result.report.findings if f.code == "cache-refused"]
    assert refused and refused[0].severity == "warning" and str(home) in refused[0].message
    assert "Changed" in (result.out / "page.html").read_text(encoding="utf-8")


def test_a_site_cache_folder_others_can_write_is_not_loaded(tmp_path, monkeypatch):
    _cache_root(tmp_path, monkeypatch)
    root = _project(tmp_path)
    build(_config(root, tmp_path / "site"))
    os.chmod(build_cache.cache_dir_for(tmp_path / "site"), 0o777)
    result = build(_config(root, tmp_path / "site"))
    assert "cache-refused" in {f.code for f in result.report.findings}


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_cache_owned_by_another_user_is_not_loaded(tmp_path, monkeypatch):
    home = _cache_root(tmp_path, monkeypatch)
    root = _project(tmp_path)
    build(_config(root, tmp_path / "site"))
    for path in [home, *home.rglob("*")]:
        os.lchown(path, 12345, 12345)
    loaded = []
    real = build_cache._decode
    monkeypatch.setattr(build_cache, "_decode", lambda data: loaded.append(1) or real(data))
    monkeypatch.setattr(os, "getuid", lambda: 1000)  # this user is not the owner (nor is root)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    result = build(_config(root, tmp_path / "site"))
    assert loaded == []
    assert "cache-refused" in {f.code for f in result.report.findings}


def test_a_cache_under_a_folder_others_can_write_is_not_loaded(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)  # writable by all, no sticky bit: anyone can swap our folder for theirs
    monkeypatch.setenv("LABML_SITE_CACHE_DIR", str(shared / "mine"))
    root = _project(tmp_path)
    build(_config(root, tmp_path / "site"))
    result = build(_config(root, tmp_path / "site"))
    assert "cache-refused" in {f.code for f in result.report.findings}


def test_a_cache_folder_that_is_a_link_to_another_users_folder_is_refused(tmp_path, monkeypatch):
    target = tmp_path / "theirs"
    target.mkdir()
    os.chmod(target, 0o777)
    (tmp_path / "link").symlink_to(target)
    monkeypatch.setenv("LABML_SITE_CACHE_DIR", str(tmp_path / "link"))
    root = _project(tmp_path)
    result = build(_config(root, tmp_path / "site"))
    assert "cache-refused" in {f.code for f in result.report.findings}
