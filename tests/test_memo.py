"""The memo layer (builder/memo.py): a digest names the stage and every input it declares, and a
stage that reads what it did not declare fails the call in audit mode."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from labml_site.builder import memo as memo_layer
from labml_site.builder.memo import Memo, UndeclaredInput
from labml_site.builder.site import BuildConfig, build

ROOT = Path(__file__).resolve().parent.parent


def _count_words(text: str) -> int:
    return len(text.split())


def _read_declared(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


_SNEAKY: dict[str, str] = {}


def _read_undeclared(name: str) -> str:
    with open(_SNEAKY["path"], encoding="utf-8") as f:  # a file the call does not name
        return name + f.read()


@pytest.fixture
def memo(tmp_path, monkeypatch):
    monkeypatch.setenv("LABML_SITE_CACHE_DIR", str(tmp_path / "cache"))
    return Memo.open(tmp_path / "site")


def test_a_digest_names_the_stage_and_every_input(memo):
    base = memo.digest(_count_words, "a b c")
    assert memo.digest(_count_words, "a b c") == base
    assert memo.digest(_count_words, "a b d") != base
    assert memo.digest(_read_declared, "a b c") != base  # another stage, same inputs
    assert memo.digest(_count_words, b"a b c") != base  # bytes and text never hash alike
    assert memo.digest(_count_words, memo.value("a b c")) != base  # nor a value and its digest


def test_call_computes_once_then_finds_it_in_every_tier(memo, tmp_path, monkeypatch):
    assert memo.call(_count_words, "one two three", counter="analysed") == 3
    assert memo.call(_count_words, "one two three", counter="analysed") == 3
    assert memo.stats.analysed == 1
    fresh = Memo.open(tmp_path / "site")  # a new build: found in the store, not computed
    assert fresh.call(_count_words, "one two three", counter="analysed") == 3 and fresh.stats.analysed == 0


def test_forgetting_drops_from_memory_what_was_found_or_computed_meanwhile(memo):
    memo.call(_count_words, "before the block")
    with memo.forgetting():
        memo.call(_count_words, "in the block", counter="analysed")
        assert memo.digest(_count_words, "in the block") in memo.memory
    assert memo.digest(_count_words, "before the block") in memo.memory
    assert memo.digest(_count_words, "in the block") not in memo.memory
    assert memo.call(_count_words, "in the block", counter="analysed") == 3 and memo.stats.analysed == 1  # (from the store)


def test_a_long_lived_process_hashes_a_named_value_again_only_when_it_changed(tmp_path, monkeypatch):
    from labml_site.builder import cache as store

    monkeypatch.setenv("LABML_SITE_CACHE_DIR", str(tmp_path / "cache"))
    hashed: list = []
    real = store.value_digest
    monkeypatch.setattr(store, "value_digest", lambda value: hashed.append(value) or real(value))
    served = Memo.open(tmp_path / "site", keep_in_memory=True)
    first = served.value({"a": [1, 2]}, last="symbols")
    again = Memo.open(tmp_path / "site", keep_in_memory=True).value({"a": [1, 2]}, last="symbols")  # the next rebuild
    assert again.digest == first.digest == real({"a": [1, 2]}) and len(hashed) == 1
    assert again.value() == {"a": [1, 2]}
    changed = served.value({"a": [1, 3]}, last="symbols")
    assert changed.digest == real({"a": [1, 3]}) != first.digest and len(hashed) == 2
    # A one-shot build hashes every time (it keeps nothing for a next build).
    once = Memo.open(tmp_path / "site")
    assert once.value({"a": [1, 3]}, last="symbols").digest == changed.digest and len(hashed) == 3


def test_a_damaged_entry_is_a_miss(memo, tmp_path):
    memo.call(_count_words, "x y")
    digest = memo.digest(_count_words, "x y")
    entry = memo.cache.store._path(digest)
    entry.write_bytes(entry.read_bytes()[:-3] + b"!!!")
    fresh = Memo.open(tmp_path / "site")
    assert fresh.call(_count_words, "x y", counter="analysed") == 2 and fresh.stats.analysed == 1


def test_a_closure_is_not_a_stage(memo):
    hidden = "a value the digest would not see"
    with memo_layer.audit(), pytest.raises(TypeError, match="module-level"):
        memo.call(lambda text: text + hidden, "x")


def test_a_stage_that_reads_an_undeclared_file_fails_in_audit_mode(memo, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("!", encoding="utf-8")
    _SNEAKY["path"] = str(secret)
    with memo_layer.audit():
        with pytest.raises(UndeclaredInput, match="secret.txt"):
            memo.call(_read_undeclared, "name")
    assert memo.call(_read_undeclared, "other") == "other!"  # (outside audit mode, unchecked)


def test_a_declared_file_may_be_read_and_its_edit_changes_the_digest(memo, tmp_path):
    path = tmp_path / "declared.txt"
    path.write_text("first", encoding="utf-8")
    with memo_layer.audit():
        assert memo.call(_read_declared, memo.files([path], str(path))) == "first"
    before = memo.files([path], str(path)).digest
    path.write_text("second!", encoding="utf-8")
    assert Memo.open(tmp_path / "site").files([path], str(path)).digest != before


def test_every_stage_of_a_real_build_declares_what_it_reads(tmp_path, monkeypatch):
    """The shipped tutorial, in three languages, with every stage audited (inline: jobs=1)."""
    monkeypatch.setenv("LABML_SITE_CACHE_DIR", str(tmp_path / "cache"))
    config = BuildConfig(ROOT / "source", ROOT / "translations", tmp_path / "site", jobs=1, markdown=True)
    with memo_layer.audit():
        result = build(config)
    assert result.ok and result.stats.analysed > 0 and result.stats.localized > 0
    sections = json.loads((tmp_path / "site" / "zh" / "annotated_attention" / "index.sections.json").read_text(encoding="utf-8"))
    assert sections["lang"] == "zh" and sections["sections"]


def test_an_audited_build_in_a_fresh_interpreter_declares_what_it_reads(tmp_path):
    """As `LABML_SITE_AUDIT_STAGES=1 python build.py` runs it: libraries first imported inside a
    stage (the pipeline imports them on first use) read only their own and the system's files."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "LABML_SITE_AUDIT_STAGES": "1", "LABML_SITE_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, str(ROOT / "build.py"), "--out", str(tmp_path / "site"), "--jobs", "1"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "UndeclaredInput" not in out.stderr, out.stderr[-3000:]
    assert "0 errors, 0 warnings" in out.stdout + out.stderr


def test_a_long_lived_process_knows_outputs_by_value_with_the_same_digests(tmp_path, monkeypatch):
    from dataclasses import dataclass

    from labml_site.render.outputs.base import Output

    @dataclass(frozen=True)
    class Shown(Output):
        title: str
        crumbs: tuple
        extra: object = None

    monkeypatch.setenv("LABML_SITE_CACHE_DIR", str(tmp_path / "cache"))
    once = Memo.open(tmp_path / "site")
    first = Memo.open(tmp_path / "site", keep_in_memory=True)
    a, b = Shown("A", ("x", ("y", 1))), Shown("B", ("x", ("y", 1)))
    assert first.output_digest(a) == once.output_digest(a) != once.output_digest(b)
    first.finish(tmp_path / "site", set())
    served = Memo.open(tmp_path / "site", keep_in_memory=True)  # the next build of `serve`
    assert Shown("A", ("x", ("y", 1))) in served.described[0]  # known from the build before
    assert served.output_digest(Shown("A", ("x", ("y", 1)))) == once.output_digest(a)
    assert served.output_digest(Shown("A", ("x", ("y", 2)))) == once.output_digest(Shown("A", ("x", ("y", 2)))) != once.output_digest(a)
    # A field that cannot be hashed is hashed by value, as elsewhere.
    assert served.output_digest(Shown("A", (), {"k": [1]})) == once.output_digest(Shown("A", (), {"k": [1]}))
    # Only the last build's outputs are remembered.
    served.finish(tmp_path / "site", set())
    assert set(Memo.open(tmp_path / "site", keep_in_memory=True).described[0]) == {Shown("A", ("x", ("y", 1))), Shown("A", ("x", ("y", 2)))}
