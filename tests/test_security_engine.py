"""The build engine against hostile or broken input: a planted cache is never loaded, a damaged
one is a miss, the builder removes only what it wrote, published files get normal modes, a killed
build leaves the previous site or the new one, and a file that stops parsing keeps its page.

Each test reproduces the attack or the accident on a tree of its own and asserts that nothing
happened that should not have."""
from __future__ import annotations

import os
import pickle
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from labml_site.builder import cache as build_cache
from labml_site.builder.outputs import MARKER
from labml_site.builder.site import BuildConfig, build
from labml_site.errors import UserError

from conftest import ROOT, TOY_PAGE, write_tree

TOY_INDEX = '"""\n# Toy\n\nA folder of toy pages.\n"""\n'


def make_tree(root: Path, pages: int = 1) -> tuple[Path, Path]:
    files = {"toy/__init__.py": TOY_INDEX}
    for i in range(pages):
        files[f"toy/page{i}.py"] = TOY_PAGE.replace("Scaled scores", f"Scaled scores {i}")
    src = write_tree(root / "src", files)
    tr = root / "tr"
    tr.mkdir(parents=True, exist_ok=True)
    return src, tr


def config(src: Path, tr: Path, out: Path, **kw) -> BuildConfig:
    return BuildConfig(src, tr, out, langs=("en",), **kw)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


class _Planted:
    """Unpickling this creates the file `path`: the code an attacker would run."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


# ---------------------------------------------------------------------------------------------
# 1. The cache is not input


def test_cache_lives_outside_the_work_tree(tmp_path):
    src, tr = make_tree(tmp_path)
    out = tmp_path / "site"
    build(config(src, tr, out))
    root = build_cache.cache_dir_for(out)
    assert root.is_dir()
    assert tmp_path not in root.parents, "the cache must not be where a commit can put files"
    assert not list(tmp_path.glob(".site-cache*"))
    assert root.stat().st_mode & 0o077 == 0, "the cache folder is private to its owner"


def test_a_cache_planted_in_the_work_tree_is_never_loaded(tmp_path):
    src, tr = make_tree(tmp_path)
    out = tmp_path / "site"
    sentinel = tmp_path / "code-ran"
    evil = pickle.dumps(_Planted(str(sentinel)))
    # Where earlier versions kept the cache, and every file name a cache of ours uses.
    for folder in (tmp_path / ".site-cache", src / ".site-cache", tmp_path / ".cache" / "labml-site"):
        (folder / "objects").mkdir(parents=True)
        (folder / "templates" / "jinja-x").mkdir(parents=True)
        for name in ("heads.pkl", "heads.log", "rendered.pkl", "rendered.log", "last-build.pkl", "objects/x.pkl", "templates/jinja-x/t.cache"):
            (folder / name).write_bytes(b"LSC2" + len(evil).to_bytes(8, "little") + bytes(4) + evil)
    build(config(src, tr, out))
    build(config(src, tr, out))
    assert not sentinel.exists()


@pytest.mark.parametrize("damage", ["truncate", "garble", "foreign pickle", "empty"])
def test_every_damaged_cache_file_is_a_miss(tmp_path, damage):
    src, tr = make_tree(tmp_path, pages=2)
    out = tmp_path / "site"
    clean = snapshot(build(config(src, tr, tmp_path / "clean", cache=False)).out)
    build(config(src, tr, out))
    root = build_cache.cache_dir_for(out)
    files = [p for p in root.rglob("*") if p.is_file()]
    assert any("jinja" in p.as_posix() for p in files), "compiled templates are cached too"
    rng = random.Random(7)
    for path in files:
        data = path.read_bytes()
        if damage == "truncate":
            path.write_bytes(data[: len(data) // 2])
        elif damage == "garble":
            path.write_bytes(bytes(b ^ rng.randrange(1, 256) if rng.random() < 0.05 else b for b in data))
        elif damage == "foreign pickle":
            path.write_bytes(pickle.dumps({"not": "ours"}))
        else:
            path.write_bytes(b"")
    (src / "toy/page0.py").write_text(TOY_PAGE.replace("Scaled scores", "Scaled scores 0"), encoding="utf-8")
    result = build(config(src, tr, out))
    assert not result.report.has_errors
    assert snapshot(out) == clean


# ---------------------------------------------------------------------------------------------
# 2. The builder only removes what it made


def test_a_folder_the_builder_did_not_write_is_refused_and_untouched(tmp_path):
    src, tr = make_tree(tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(UserError, match="not written by labml-site"):
        build(config(src, tr, docs))
    assert snapshot(docs) == {"notes.txt": b"mine"}


def test_out_holding_the_inputs_is_refused(tmp_path):
    src, tr = make_tree(tmp_path)
    (tmp_path / ".git").mkdir()
    before = snapshot(tmp_path)
    for out in (tmp_path, src, src / "site", tr, tmp_path / "src" / ".."):
        with pytest.raises(UserError):
            build(config(src, tr, out))
    assert snapshot(tmp_path) == before


def test_out_dot_in_a_checkout_deletes_nothing(tmp_path):
    """`labml-site --out .` from the repository root: refused, exit status 2, no traceback."""
    src, tr = make_tree(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    before = snapshot(tmp_path)
    run = subprocess.run(
        [sys.executable, str(ROOT / "build.py"), "--source", "src", "--translations", "tr", "--out", ".", "--langs", "en"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode != 0
    assert "Traceback" not in run.stderr and "--out" in run.stderr
    assert snapshot(tmp_path) == before


def test_a_symlinked_out_is_refused(tmp_path):
    src, tr = make_tree(tmp_path)
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep.txt").write_text("keep", encoding="utf-8")
    (tmp_path / "site").symlink_to(target)
    with pytest.raises(UserError, match="symbolic link"):
        build(config(src, tr, tmp_path / "site"))
    assert snapshot(target) == {"keep.txt": b"keep"}


def test_leftovers_of_killed_builds_are_removed_and_nothing_else(tmp_path):
    src, tr = make_tree(tmp_path)
    out = tmp_path / "site"
    build(config(src, tr, out))
    ours = tmp_path / ".site-new-abc123"
    ours.mkdir()
    (ours / MARKER).write_bytes((out / MARKER).read_bytes())
    (ours / "half.html").write_text("half", encoding="utf-8")
    old = tmp_path / ".site-old-4242"
    old.mkdir()
    (old / MARKER).write_bytes((out / MARKER).read_bytes())
    theirs = tmp_path / ".site-new-notours"
    theirs.mkdir()
    (theirs / "keep.txt").write_text("keep", encoding="utf-8")
    build(config(src, tr, out))
    assert not ours.exists() and not old.exists()
    assert (theirs / "keep.txt").read_text(encoding="utf-8") == "keep"


def test_published_files_get_normal_modes_whatever_the_umask(tmp_path):
    src, tr = make_tree(tmp_path)
    os.chmod(src / "toy/page0.py", 0o600)  # a private source is still published readable
    old = os.umask(0o077)
    try:
        out = build(config(src, tr, tmp_path / "site")).out
        (src / "toy/page0.py").write_text(TOY_PAGE + "\n# more\n", encoding="utf-8")
        build(config(src, tr, out))  # an update in place, too
    finally:
        os.umask(old)
    for path in [out, *out.rglob("*")]:
        mode = path.stat().st_mode & 0o777
        assert mode == (0o755 if path.is_dir() else 0o644), (path, oct(mode))


# ---------------------------------------------------------------------------------------------
# 5. Nothing lost: a killed build, a source that stops parsing


def _build_command(src: Path, tr: Path, out: Path) -> list[str]:
    return [sys.executable, str(ROOT / "build.py"), "--source", str(src), "--translations", str(tr), "--out", str(out), "--langs", "en"]


def test_a_killed_build_leaves_the_old_site_or_the_new_one(tmp_path):
    """SIGKILL at random moments of rebuilds that change every page: the site on disk is always
    exactly the old one or exactly the new one, and the next build equals a clean build."""
    src, tr = make_tree(tmp_path, pages=12)
    out = tmp_path / "site"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run(_build_command(src, tr, out), check=True, capture_output=True, env=env, timeout=120)
    rng = random.Random(11)
    for attempt in range(6):
        before = snapshot(out)
        for page in src.glob("toy/page*.py"):  # every page changes: a new site, swapped in
            page.write_text(page.read_text(encoding="utf-8") + f"\n# edit {attempt}\n", encoding="utf-8")
        proc = subprocess.Popen(_build_command(src, tr, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        time.sleep(rng.uniform(0.05, 0.6))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        now = snapshot(out)
        if now != before:  # it finished (or swapped) before the kill: the new site, whole
            clean = snapshot(build(config(src, tr, tmp_path / f"clean{attempt}", cache=False)).out)
            assert now == clean
    build(config(src, tr, out))
    assert snapshot(out) == snapshot(build(config(src, tr, tmp_path / "clean-final", cache=False)).out)


def test_a_file_that_stops_parsing_keeps_its_last_good_page(tmp_path):
    src, tr = make_tree(tmp_path, pages=2)
    out = tmp_path / "site"
    build(config(src, tr, out))
    good = (out / "toy/page0.html").read_text(encoding="utf-8")
    page = src / "toy/page0.py"
    page.write_text(page.read_text(encoding="utf-8") + "\nbroken = (\n", encoding="utf-8")
    result = build(config(src, tr, out))
    codes = [f.code for f in result.report.findings]
    assert result.report.has_errors and "source" in codes and "kept-last-good" in codes
    assert (out / "toy/page0.html").read_text(encoding="utf-8") == good
    assert 'href="page0.html"' in (out / "toy/index.html").read_text(encoding="utf-8")
    assert "broken" not in (out / "toy/page0.py").read_text(encoding="utf-8"), "View source shows the page's code"
    again = build(config(src, tr, out))  # nothing changed: still reported, still kept
    assert again.report.has_errors and (out / "toy/page0.html").read_text(encoding="utf-8") == good
    page.write_text(TOY_PAGE.replace("Scaled scores", "Fixed scores"), encoding="utf-8")
    fixed = build(config(src, tr, out))
    assert not fixed.report.has_errors and "Fixed scores" in (out / "toy/page0.html").read_text(encoding="utf-8")


def test_a_new_file_that_never_parsed_has_no_page(tmp_path):
    src, tr = make_tree(tmp_path)
    (src / "toy/new.py").write_text("x = (\n", encoding="utf-8")
    result = build(config(src, tr, tmp_path / "site"))
    assert result.report.has_errors and not (result.out / "toy/new.html").exists()


def test_a_full_disk_during_an_update_in_place_leaves_the_old_site(tmp_path, monkeypatch):
    import errno

    from labml_site.builder import outputs

    src, tr = make_tree(tmp_path, pages=30)
    out = tmp_path / "site"
    build(config(src, tr, out))
    before = snapshot(out)
    for i in range(3):  # a few pages change: the site is updated in place
        page = src / f"toy/page{i}.py"
        page.write_text(page.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    real, calls = outputs._stage, []

    def stage(target, data):
        calls.append(target)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(target, data)

    monkeypatch.setattr(outputs, "_stage", stage)
    with pytest.raises(OSError):
        build(config(src, tr, out))
    assert len(calls) == 3, "the failure came while staging an update in place"
    assert snapshot(out) == before
    monkeypatch.setattr(outputs, "_stage", real)
    build(config(src, tr, out))
    assert snapshot(out) == snapshot(build(config(src, tr, tmp_path / "clean", cache=False)).out)


def test_serve_shows_the_build_errors_over_the_last_good_page(tmp_path):
    """In `serve`, a file that stops parsing keeps its page (above), and the browser shows the
    build's errors over it instead of a 404; the message is text, never markup."""
    import http.client
    import threading

    from labml_site.builder.serve import make_server

    src, tr = make_tree(tmp_path)
    out = build(config(src, tr, tmp_path / "site")).out
    page = src / "toy/page0.py"
    page.write_text(page.read_text(encoding="utf-8") + "\nbroken = (\n", encoding="utf-8")
    result = build(config(src, tr, out))
    server, state = make_server(out, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        state.report([f.format() for f in result.report.errors] + ["x.py:1: error: <script>alert(1)</script>"])
        conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
        conn.request("GET", "/toy/page0.html", headers={"Host": "127.0.0.1"})
        response = conn.getresponse()
        body = response.read().decode("utf-8")
        assert response.status == 200
        assert "Scaled scores 0" in body and 'id="labml-build-errors"' in body
        assert "toy/page0.py:" in body and "invalid Python" in body  # (the source error, at its line)
        assert "<script>alert(1)" not in body and "&lt;script&gt;alert(1)" in body
        state.report([])
        conn.request("GET", "/toy/page0.html", headers={"Host": "127.0.0.1"})
        assert "labml-build-errors" not in conn.getresponse().read().decode("utf-8")
    finally:
        server.shutdown()
        server.server_close()
