"""The bounded build cache (`builder/cache_size.py`): a cap with least-recently-used eviction,
folders of outputs that are gone removed, never a folder a running build holds; and the
`labml-site cache` command."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import TOY_PAGE, write_tree
from labml_site.builder import cache_size
from labml_site.builder.cache import cache_dir_for


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "cache-home"
    monkeypatch.setenv("LABML_SITE_CACHE_DIR", str(home))
    monkeypatch.delenv(cache_size.MAX_ENV, raising=False)
    return home


def _used(out: Path, size: int, when: float) -> Path:
    """A cache folder for `out` holding `size` bytes, last used at `when`, as a build leaves it."""
    out.mkdir(parents=True, exist_ok=True)
    folder = cache_dir_for(out)
    with cache_size.in_use(out):
        (folder / "objects.bin").write_bytes(b"x" * size)
    (folder / "size").write_text(str(cache_size.folder_size(folder)))
    os.utime(folder / "lock", (when, when))
    return folder


def test_sizes_are_read_as_people_write_them() -> None:
    assert cache_size.parse_size("500M") == 500_000_000
    assert cache_size.parse_size("2G") == cache_size.parse_size("2GB") == 2_000_000_000
    assert cache_size.parse_size("1.5k") == 1500
    assert cache_size.parse_size("1MiB") == 2**20
    assert cache_size.parse_size("0") == 0
    with pytest.raises(ValueError, match="500M"):
        cache_size.parse_size("lots")


def test_the_cap_is_1_gb_unless_set(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cache_size.max_bytes() == 1_000_000_000
    cache_size.set_max_bytes(5_000)
    assert cache_size.max_bytes() == 5_000
    monkeypatch.setenv(cache_size.MAX_ENV, "2M")
    assert cache_size.max_bytes() == 2_000_000  # the variable wins


def test_over_the_cap_the_least_recently_used_go_first(home: Path, tmp_path: Path) -> None:
    now = time.time()
    old = _used(tmp_path / "a" / "site", 4000, now - 300)
    middle = _used(tmp_path / "b" / "site", 4000, now - 200)
    recent = _used(tmp_path / "c" / "site", 4000, now - 100)
    evicted = cache_size.enforce(cap=9000)
    assert evicted.over_cap == [old]
    assert not old.exists() and middle.exists() and recent.exists()
    assert sum(f.size for f in cache_size.folders()) <= 9000
    cache_size.enforce(cap=1)
    assert not middle.exists() and not recent.exists()


def test_the_folder_of_an_output_that_is_gone_is_removed(home: Path, tmp_path: Path) -> None:
    import shutil

    kept = _used(tmp_path / "kept" / "site", 100, time.time())
    gone = _used(tmp_path / "gone" / "site", 100, time.time())
    shutil.rmtree(tmp_path / "gone")
    evicted = cache_size.enforce()  # far under the cap
    assert evicted.orphaned == [gone] and not gone.exists() and kept.exists()


def test_a_folder_a_build_holds_is_never_removed(home: Path, tmp_path: Path) -> None:
    out = tmp_path / "busy" / "site"
    out.mkdir(parents=True)
    folder = cache_dir_for(out)
    with cache_size.in_use(out):
        (folder / "objects.bin").write_bytes(b"x" * 5000)
        assert cache_size.enforce(cap=1).over_cap == []
        assert cache_size.clear() == (0, 1)
        assert folder.exists()
        assert any("in use" in line for line in cache_size.describe())
    assert cache_size.remove(folder) and not folder.exists()


def test_a_lock_held_in_another_process_keeps_the_folder(home: Path, tmp_path: Path) -> None:
    out = tmp_path / "other" / "site"
    folder = _used(out, 1000, time.time() - 100)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR); "
         "fcntl.flock(fd, fcntl.LOCK_SH); print('held', flush=True); sys.stdin.read()", str(folder / "lock")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        assert cache_size.enforce(cap=1).over_cap == [] and folder.exists()
    finally:
        holder.communicate("")
    assert cache_size.enforce(cap=1).over_cap == [folder]


def test_a_build_after_an_eviction_makes_its_folder_again(home: Path, tmp_path: Path) -> None:
    out = tmp_path / "again" / "site"
    folder = _used(out, 100, time.time())
    assert cache_size.remove(folder) and not folder.exists()
    with cache_size.in_use(out):
        assert (folder / "lock").exists()
    assert (folder / "out").read_text() == str(out.resolve())


def test_a_build_notes_its_folder_and_keeps_the_cap(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from labml_site.builder.site import BuildConfig, build

    src = write_tree(tmp_path / "src", {"toy.py": TOY_PAGE})
    stale = _used(tmp_path / "stale" / "site", 10_000, time.time() - 1000)
    monkeypatch.setenv(cache_size.MAX_ENV, "8k")
    out = tmp_path / "site"
    result = build(BuildConfig(src, tmp_path / "translations", out, langs=("en",)))
    assert not result.report.errors
    folder = cache_dir_for(out)
    assert (folder / "out").read_text() == str(out.resolve())
    noted = (folder / "size").read_text()
    assert int(noted) == cache_size.folder_size(folder) - len(noted)  # (measured before it was written)
    assert not stale.exists()  # over the cap: the least recently used went
    assert folder.exists()  # the build's own folder stays, whatever the cap
    again = build(BuildConfig(src, tmp_path / "translations", out, langs=("en",)))
    assert again.stats.analysed == 0  # its cache is still there and used


def test_the_cache_command_shows_and_clears(home: Path, tmp_path: Path) -> None:
    from labml_site.cli.main import main

    folder = _used(tmp_path / "shown" / "site", 2000, time.time())
    env_run = lambda *a: subprocess.run([sys.executable, "-m", "labml_site", "cache", *a], capture_output=True,
                                        text=True, env={**os.environ}, check=False)
    shown = env_run()
    assert shown.returncode == 0, shown.stderr
    assert str(home) in shown.stdout and "1 folder" in shown.stdout and folder.name in shown.stdout
    assert str((tmp_path / "shown" / "site").resolve()) in shown.stdout
    assert main(["cache", "--max", "lots"]) == 2
    cleared = env_run("--clear")
    assert "removed 1 cache folder" in cleared.stdout and not folder.exists()
    assert "0 folders" in cleared.stdout
