"""Issue 12, item 5: `extract` never loses or truncates what a translator wrote, whenever it stops.

Two kinds of fault: a run stopped before its k-th rename (os.replace raising: what a kill or a full
disk between two files looks like, for every k), and a real SIGKILL of a subprocess after a random
delay. After either, every value a translator wrote is still in the main, fuzzy or stale file,
every file parses, and the next run ends exactly where an uninterrupted run ends."""
from __future__ import annotations

import errno
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from labml_site.read import safe_files
from labml_site.translate.catalog import catalog_path, fuzzy_path, stale_path
from labml_site.translate.extract import confirm, dumps, extract

PAGE = "toy/page"
OLD_A = "<p>Compute the scores for all queries at once.</p>\n"
OLD_B = "<p>Softmax along the key axis.</p>\n"
GONE = "<p>A paragraph that was removed.</p>\n"
BACK = "<p>A paragraph that comes back.</p>\n"
NEW_A = "<p>Compute the attention scores for all queries at once.</p>\n"
TITLE = "Toy page"


def initial_state(root: Path) -> dict[Path, bytes]:
    """Files exercising every move: a value going stale, one revived from stale, a fuzzy
    suggestion dropped because the translator wrote the value, one with a reviewer's note."""
    main = catalog_path(root, PAGE, "zh")
    main.parent.mkdir(parents=True, exist_ok=True)
    main.write_text(dumps({TITLE: "玩具页", OLD_A: "<p>一次性计算所有查询的分数。</p>\n", OLD_B: "<p>沿键轴做 Softmax。</p>\n", GONE: "<p>被删除的段落。</p>\n", BACK: ""}), encoding="utf-8")
    stale_path(main).write_text(dumps({BACK: ["<p>回来的段落。</p>\n"], "<p>Old.</p>\n": ["<p>旧。</p>\n"]}), encoding="utf-8")
    fuzzy_path(main).write_text(dumps({
        OLD_B: {"from": "<p>Softmax.</p>\n", "suggestion": "<p>旧建议。</p>\n"},
        TITLE: {"from": "Toy", "suggestion": "玩具", "note": "审阅者的备注"},
    }), encoding="utf-8")
    return {p: p.read_bytes() for p in (main, stale_path(main), fuzzy_path(main))}


KEYS = [TITLE, NEW_A, OLD_B, BACK]


def stored_values(root: Path) -> list[str]:
    """Every string value in the page's three files (each must parse: none is ever truncated)."""
    main = catalog_path(root, PAGE, "zh")
    values: list[str] = []

    def walk(node) -> None:
        if isinstance(node, str):
            values.append(node)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for item in node.values():
                walk(item)

    for path in (main, fuzzy_path(main), stale_path(main)):
        if path.exists():
            walk(json.loads(path.read_text(encoding="utf-8")))
    return values


def written_by_translator(state: dict[Path, bytes]) -> set[str]:
    values: list[str] = []
    for data in state.values():
        node = json.loads(data)
        for v in node.values():
            if isinstance(v, str):
                values.append(v)
            elif isinstance(v, list):
                values.extend(v)
            else:
                values.extend(x for k, x in v.items() if k in ("suggestion", "note"))
    return {v for v in values if v.strip()}


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def clean(tmp_path) -> dict[str, bytes]:
    root = tmp_path / "clean"
    initial_state(root)
    extract({PAGE: KEYS}, root, "zh")
    return snapshot(root)


def test_an_uninterrupted_run_keeps_every_value_and_field(tmp_path, clean):
    root = tmp_path / "clean"
    state = initial_state(tmp_path / "fresh")
    assert written_by_translator(state) <= set(stored_values(root))
    fuzzy = json.loads(clean["toy/page.zh.fuzzy.json"])
    assert fuzzy[TITLE]["note"] == "审阅者的备注"  # a field a person wrote is kept


def test_extract_stopped_before_any_rename_loses_nothing_and_the_next_run_converges(tmp_path, clean, monkeypatch):
    real_replace = os.replace
    for stop_at in range(6):
        root = tmp_path / f"stop{stop_at}"
        state = initial_state(root)
        calls = {"n": 0}

        def failing_replace(src, dst, _stop=stop_at, _calls=calls):
            if _calls["n"] >= _stop:
                raise OSError(errno.ENOSPC, "No space left on device")
            _calls["n"] += 1
            return real_replace(src, dst)

        monkeypatch.setattr(safe_files.os, "replace", failing_replace)
        result = extract({PAGE: KEYS}, root, "zh")
        monkeypatch.setattr(safe_files.os, "replace", real_replace)
        assert written_by_translator(state) <= set(stored_values(root)), stop_at
        assert not list(root.rglob("*" + safe_files.TEMP_SUFFIX))  # no temporary left behind
        if not result.has_errors:  # it finished before the fault: nothing to recover
            assert calls["n"] <= stop_at and snapshot(root) == clean
            continue
        assert "extract-write-failed" in {f.code for f in result.findings}
        extract({PAGE: KEYS}, root, "zh")
        assert snapshot(root) == clean, stop_at


def test_confirm_stopped_between_its_writes_loses_nothing(tmp_path, monkeypatch):
    real_replace = os.replace
    root = tmp_path / "c"
    initial_state(root)
    extract({PAGE: KEYS}, root, "zh")
    suggestions = {v["suggestion"] for v in json.loads(fuzzy_path(catalog_path(root, PAGE, "zh")).read_text(encoding="utf-8")).values()}
    calls = {"n": 0}

    def failing_replace(src, dst):
        if calls["n"] >= 1:
            raise OSError(errno.EIO, "I/O error")
        calls["n"] += 1
        return real_replace(src, dst)

    monkeypatch.setattr(safe_files.os, "replace", failing_replace)
    with pytest.raises(OSError):
        confirm(root, PAGE, "zh")
    monkeypatch.setattr(safe_files.os, "replace", real_replace)
    assert suggestions <= set(stored_values(root))


_KILLABLE = """
import sys, time
from pathlib import Path
from labml_site.read import safe_files
real = safe_files.os.replace
def slow_replace(src, dst):  # widen the window between files so the kill lands inside a run
    time.sleep(0.02)
    return real(src, dst)
safe_files.os.replace = slow_replace
from labml_site.translate.extract import extract
keys = {sys.argv[2]: sys.argv[3:]}
print("ready", flush=True)
extract(keys, Path(sys.argv[1]), "zh")
"""


def test_extract_killed_at_random_points_loses_nothing(tmp_path, clean):
    rnd = random.Random(12)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    for attempt in range(6):
        root = tmp_path / f"kill{attempt}"
        state = initial_state(root)
        proc = subprocess.Popen(
            [sys.executable, "-c", _KILLABLE, str(root), PAGE, *KEYS],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
        )
        try:
            assert proc.stdout.readline().strip() == b"ready"
            time.sleep(rnd.uniform(0.0, 0.09))
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.wait(timeout=30)
            proc.stdout.close()
        assert written_by_translator(state) <= set(stored_values(root)), attempt
        extract({PAGE: KEYS}, root, "zh")
        after = {k: v for k, v in snapshot(root).items() if not k.endswith(safe_files.TEMP_SUFFIX)}
        assert after == clean, attempt
