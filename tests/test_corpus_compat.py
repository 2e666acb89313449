"""Compatibility with the original labml site and its translation caches, on small trees of our
own in the corpus's shapes: summaries keyed as written, old URLs kept, Markdown tables and rules."""
from __future__ import annotations

from pathlib import Path

from bs4 import BeautifulSoup

from labml_site.builder.site import BuildConfig, build

from conftest import write_json, write_tree

DOUBLE_SPACED = '"""\n---\ntitle: Train\nsummary: >\n  This trains is a  Graph network\n---\n\n# Train\n"""\n\nx = 1\n'


def _build(tmp_path: Path, files: dict[str, str], translations: dict[str, dict] | None = None,
           langs: tuple[str, ...] = ("en", "zh"), **config) -> Path:
    src = write_tree(tmp_path / "src", files)
    tr = tmp_path / "tr"
    tr.mkdir(exist_ok=True)
    for rel, entries in (translations or {}).items():
        write_json(tr / rel, entries)
    return build(BuildConfig(src, tr, tmp_path / "site", langs=langs, **config)).out


def _description(page: Path) -> str:
    soup = BeautifulSoup(page.read_text("utf-8"), "html.parser")
    return soup.find("meta", attrs={"name": "description"})["content"]


def test_a_summary_with_a_double_space_finds_the_translation_keyed_with_it(tmp_path):
    site = _build(tmp_path, {"g/train.py": DOUBLE_SPACED},
                  {"g/train.zh.json": {"This trains is a  Graph network": "训练图网络", "Train": "训练"}})
    assert _description(site / "zh/g/train.html") == "训练图网络"
    assert _description(site / "g/train.html") == "This trains is a  Graph network"


def test_a_folded_summary_keeps_its_line_break_in_the_key(tmp_path):
    folded = DOUBLE_SPACED.replace("summary: >\n  This trains is a  Graph network",
                                   'summary: "An annotated tutorial of\\n Improved Training."')
    site = _build(tmp_path, {"g/train.py": folded},
                  {"g/train.zh.json": {"An annotated tutorial of\n Improved Training.": "带注释的教程。"}})
    assert _description(site / "zh/g/train.html") == "带注释的教程。"
