"""One verdict per entry: `build`, `check`, `review`, `stats` and the editor give every entry of a
page the same state and the same findings (`Catalog.verdict`, translate/verdict.py).

The fixture page has an entry in each state: translated, repaired (a stray tag; text after
`</p>`; an unclosed `<em>`), fuzzy, untranslated (an empty value, and no value at all), invalid,
stale, and figure entries (an SVG label, an image's alt text), which are entries of the page for
every tool, never stale."""
from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from bs4 import BeautifulSoup

from conftest import git, write_tree
from labml_site.builder.config import BuildConfig
from labml_site.builder.site import build
from labml_site.cli.translation import _keys_by_page
from labml_site.translate.catalog import Catalog, check_file, file_verdicts
from labml_site.translate.stats import page_stats
from labml_site.translate.verdict import STATES, judge, tally

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="review needs git")

PAGE = '''"""
---
title: Scaled attention
summary: How scores are scaled.
---

# Scaled attention

We divide the scores by $\\\\sqrt{d_k}$ before the softmax.

![Two boxes of scores](fig.svg)
"""

import math


# Each score is divided by the same number.
a = 1

# The scale keeps the softmax soft.
b = 2

# Large scores make the softmax peaked.
c = 3

# Small scores make it flat.
d = 4

# The query meets every key.
e = 5

# Every key gives one score.
f = 6

# The scores of one query form a row.
g = 7
'''

FIGURE = ('<svg xmlns="http://www.w3.org/2000/svg" width="100" height="40"><title>Score boxes</title>'
          '<text x="5" y="20">keys</text><text x="60" y="20">queries</text></svg>')


def soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _key(keys: list[str], words: str) -> str:
    (found,) = [k for k in keys if words in k]
    return found


def _project(root: Path) -> tuple[BuildConfig, str, list[str], dict[str, str]]:
    write_tree(root / "src", {"tut/page.py": PAGE, "tut/fig.svg": FIGURE})
    config = BuildConfig(source=root / "src", translations=root / "tr", out=root / "site", langs=("en", "zh"))
    (root / "tr/tut").mkdir(parents=True)
    _, by_page, _ = _keys_by_page(config)
    keys = by_page["tut/page"]
    heading = _key(keys, "<h1>")
    values = {
        heading: heading.replace("Scaled attention", "缩放注意力").replace("We divide the scores by", "分数除以")
                        .replace(" before the softmax.", "，再做 softmax。"),
        "Scaled attention": "缩放注意力",
        _key(keys, "same number"): "<p>每个分数都除以同一个数。</p>\n</a>",  # a stray tag: repaired
        _key(keys, "keeps the softmax"): "<p>缩放让 softmax 保持柔和。</p>\n之后的文字\n",  # text after </p>: repaired
        _key(keys, "peaked"): "<p>分数大，softmax 就<em>尖锐。</p>\n",  # an unclosed <em>: repaired
        _key(keys, "flat"): "",  # untranslated
        _key(keys, "query meets"): "",  # fuzzy: a suggestion waits
        _key(keys, "one score"): '<p onclick="alert(1)">每个键给出一个分数。</p>\n',  # unsafe: invalid
        "keys": "键",  # an SVG label
        "<p>An English block that is gone.</p>\n": "<p>一个已经不在的段落。</p>\n",  # stale
    }
    # not in the file at all: the summary, a block, the figure's title and other label, the alt text
    return config, "tut/page", keys, values


def _write(root: Path, values: dict[str, str], fuzzy: str) -> Path:
    path = root / "tr/tut/page.zh.json"
    path.write_text(json.dumps(values, ensure_ascii=False, indent=2), encoding="utf-8")
    suggestion = {"suggestion": "<p>查询遇到每个键。</p>\n", "from": "<p>The query meets a key.</p>\n"}
    (root / "tr/tut/page.zh.fuzzy.json").write_text(json.dumps({fuzzy: suggestion}, ensure_ascii=False), encoding="utf-8")
    return path




def _codes(findings) -> list[str]:
    return sorted(f.code if hasattr(f, "code") else f["code"] for f in findings)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("verdict")
    config, page, keys, values = _project(root)
    fuzzy = _key(keys, "query meets")
    # the base of `review`: every entry empty, so every value of the fixture is a change
    path = _write(root, {k: "" for k in values}, fuzzy)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    _write(root, values, fuzzy)
    catalog = Catalog.load(path, "zh", root / "tr")
    entries = set(keys)
    verdicts = {key: catalog.verdict(key, entries) for key in dict.fromkeys([*keys, *values])}
    return root, config, page, keys, values, path, verdicts


def test_the_fixture_has_an_entry_in_every_state(project):
    _root, _config, _page, keys, values, _path, verdicts = project
    states = Counter(v.state for v in verdicts.values())
    assert set(states) == set(STATES), states
    assert states["repaired"] == 3 and verdicts["keys"].state == "translated"
    assert {"keys", "queries", "Score boxes", "Two boxes of scores"} <= set(keys)  # figure entries
    assert verdicts["<p>An English block that is gone.</p>\n"].state == "stale"


def test_check_gives_each_entry_its_verdict(project):
    _root, _config, _page, keys, values, path, verdicts = project
    by_key: dict[str, list[str]] = {}
    for f in check_file(path, "zh", set(keys)):
        by_key.setdefault(f.key, []).append(f.code)
    for key in values:
        found = verdicts[key]
        expected = _codes(found.findings) + (["empty-value"] if found.state in ("untranslated", "fuzzy") else [])
        assert sorted(by_key.get(key, [])) == sorted(expected), (key, found.state)
    assert not any(f.severity == "error" for f in check_file(path, "zh", set(keys)) if verdicts[f.key].state != "invalid")


def test_stats_counts_each_entry_by_its_verdict(project):
    root, _config, page, keys, _values, path, verdicts = project
    row = page_stats(page, keys, Catalog.load(path, "zh", root / "tr"))
    counts = tally(verdicts[k] for k in keys)
    assert row.blocks == len(set(keys))
    assert (row.translated, row.repaired, row.fuzzy, row.untranslated, row.invalid) == (
        counts["translated"], counts["repaired"], counts["fuzzy"], counts["untranslated"], counts["invalid"])
    assert row.stale == sum(v.state == "stale" for v in verdicts.values()) == 1


def test_the_build_shows_and_counts_each_entry_by_its_verdict(project):
    root, config, page, keys, _values, _path, verdicts = project
    result = build(config)
    local = result.localized["zh"]["tut/page.py"]
    for data, section in zip(local.data.sections, local.sections):
        for block, (state, html) in zip(data.blocks, section.texts):
            assert state == verdicts[block.key].state, block.key
            assert (html != "") is verdicts[block.key].shown
    warned = Counter(f.code for f in result.report.findings if f.key in verdicts)
    expected = Counter(f.code for k, v in verdicts.items() if k in keys for f in v.findings)
    assert warned == expected
    # the page: an untranslated block is marked with its state
    marked = Counter(div["data-status"] for div in soup(root / "site/zh/tut/page.html").select(".docs div.untranslated"))
    assert marked == Counter(v.state for k, v in verdicts.items() if k in keys and "<p>" in k and not v.shown)
    # the status page: one total per page, as `stats` counts it
    row = page_stats(page, keys, Catalog.load(root / "tr/tut/page.zh.json", "zh", root / "tr"))
    cells = [td.get_text() for td in soup(root / "site/zh/translation-status.html").select(".status-table tbody td")]
    assert cells[1] == f"{row.shown} / {row.blocks}" and cells[2:5] == [str(row.fuzzy), str(row.untranslated), str(row.invalid)]


def test_review_gives_each_changed_entry_its_verdict(project, monkeypatch):
    from labml_site.builder.review import changed_entries

    root, config, _page, _keys, values, _path, verdicts = project
    monkeypatch.chdir(root)
    (change,) = changed_entries(config, "main")
    shown = {e.key: e for e in change.entries}
    assert set(shown) == {k for k, v in values.items() if v}  # the entries whose value changed
    for key, entry in shown.items():
        assert entry.new.status == verdicts[key].state, key
        assert _codes(entry.new.findings) == _codes(verdicts[key].findings), key
    assert shown["keys"].new.status == "translated"  # a figure's label is no stale key


def test_the_editor_gives_each_entry_its_verdict(project):
    from labml_site.workbench.session import Refused, Session

    root, config, _page, keys, values, _path, verdicts = project
    session = Session(config, "zh")
    session.rebuild()
    state = session.page_state("tut/page.html")
    blocks = {b["key"]: b for b in state["blocks"]}
    assert set(blocks) == set(keys)  # the figures' entries too
    for key in keys:
        assert blocks[key]["status"] == verdicts[key].state, key
        assert _codes(blocks[key]["findings"]) == _codes(verdicts[key].findings), key
    assert [s["key"] for s in state["stale"]] == ["<p>An English block that is gone.</p>\n"]
    # the page's one total, as the build and stats count it: its entries, and the file's stale one
    assert state["counts"] == tally(verdicts[k] for k in keys) | {"stale": 1, "total": len(set(keys))}
    # typed in the editor, each value gets the same verdict; only what the page shows as written
    # (or an emptied value) is saved: a value that needs a repair is refused, its repair offered
    for key, value in values.items():
        if key not in keys:
            continue
        checked = session.check("tut/page.html", key, value)
        assert checked["status"] == verdicts[key].state
        assert checked["saveable"] is (verdicts[key].state in ("translated", "untranslated", "fuzzy"))
        if verdicts[key].state == "repaired":
            assert checked["repaired"] == judge(key, value).repaired and checked["repaired"] is not None
            with pytest.raises(Refused) as refused:
                session.save("tut/page.html", key, value, value)
            assert refused.value.status == 422 and refused.value.extra["repaired"] == checked["repaired"]
