"""The tutorial ships fully translated: every prose block, title and summary in zh and ru."""
from __future__ import annotations

import pytest

from conftest import ROOT
from labml_site.builder.site import analyse_pages
from labml_site.translate.catalog import check_file
from labml_site.read.structure import discover
from labml_site.translate.catalog import translation_path
from labml_site.translate.catalog import Catalog

LANGS = ("zh", "ru")


@pytest.fixture(scope="module")
def tutorial_pages():
    files = discover(ROOT / "source")
    pages = analyse_pages(files.pages)
    return [(f, pages[f.rel]) for f in files.pages]


@pytest.mark.parametrize("lang", LANGS)
def test_every_block_is_translated_and_valid(tutorial_pages, lang):
    problems = []
    for file, page in tutorial_pages:
        catalog = Catalog.load(translation_path(ROOT / "translations", file, lang), lang)
        for key in page.keys:
            status = catalog.verdict(key).state
            if status != "translated":
                problems.append(f"{file.base}.{lang}.json: {status}: {key[:70]!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lang", LANGS)
def test_translation_files_pass_check(tutorial_pages, lang):
    from labml_site.builder.entries import asset_reader, entry_keys
    read = asset_reader(discover(ROOT / "source"))
    findings = []
    for file, page in tutorial_pages:
        path = translation_path(ROOT / "translations", file, lang)
        # the page's entries: its own keys and its figures' labels and alt texts
        keys = set(entry_keys(page, read))
        findings += [f.format() for f in check_file(path, lang, keys) if f.severity == "error" or f.code == "stale-key"]
    assert not findings, "\n".join(findings)


@pytest.mark.parametrize("lang", LANGS)
def test_glossary_exists(lang):
    glossary = ROOT / "translations" / f"glossary.{lang}.md"
    text = glossary.read_text(encoding="utf-8")
    for term in ("attention", "query", "key", "value", "head", "mask", "softmax"):
        assert term in text.lower(), f"{glossary} lacks {term}"


# ---- the shipped tutorial as a user meets it: the CLI, in a fresh copy of the tree ----

@pytest.fixture(scope="module")
def fresh_tree(tmp_path_factory):
    import shutil
    root = tmp_path_factory.mktemp("tree")
    for part in ("source", "translations"):
        shutil.copytree(ROOT / part, root / part, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _cli(args, cwd):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "labml_site", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def test_the_shipped_tutorial_is_fully_translated_figures_included(fresh_tree):
    """`labml-site stats` counts every entry, the figures' labels and alt texts included."""
    import json
    done = _cli(["stats", "--json"], fresh_tree)
    assert done.returncode == 0, done.stderr
    totals = {row["lang"]: row for row in json.loads(done.stdout)["totals"]}
    assert set(totals) == set(LANGS)
    for lang, row in totals.items():
        assert row["percent"] == 100.0 and row["shown"] == row["blocks"], (lang, row)


def test_the_shipped_tutorial_builds_and_checks_without_a_warning(fresh_tree, tmp_path):
    built = _cli(["--out", str(tmp_path / "site")], fresh_tree)
    assert built.returncode == 0, built.stderr[-2000:]
    out = built.stdout + built.stderr
    assert "0 errors, 0 warnings" in out, out[-3000:]
    checked = _cli(["check", "--langs", ",".join(LANGS)], fresh_tree)
    assert checked.returncode == 0 and "0 errors, 0 warnings" in checked.stdout + checked.stderr, checked.stdout[-3000:]


def test_figure_tokens_are_marked_and_offered_to_no_translator():
    """The tutorial's token labels and sampled text carry `translate="no"`; labels without a
    letter are no keys (render/figures.py)."""
    from labml_site.render.figures import svg_labels
    figures_dir = ROOT / "source" / "annotated_attention" / "figures"
    samples = (figures_dir / "learned_samples.svg").read_text(encoding="utf-8")
    assert svg_labels(samples) == ["Text sampled at several steps of training", "step 0", "step 100",
                                   "step 200", "step 400", "step 600"]
    causal = svg_labels((figures_dir / "causal_mask.svg").read_text(encoding="utf-8"))
    assert "read" not in causal and "keys" in causal and "masked: weight 0" in causal
    assert not any(label in causal for label in ("0.50", "1.00"))
