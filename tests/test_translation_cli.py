"""The translators' commands end to end: extract → translate → check → stats → build."""
from __future__ import annotations

import json

from bs4 import BeautifulSoup

from conftest import write_json, write_tree
from labml_site.cli.main import main
from labml_site.read.prose import placeholder

SOURCE = '''"""
---
title: Tiny
summary: A tiny page.
---

# Tiny

Scores are $QK^\\top$.
"""

# Apply the mask
x = 1
'''


def run(tmp_path, *args: str) -> int:
    out = ["--out", str(tmp_path / "site")] if args[0] in ("build", "serve") else []
    return main([*args, "--source", str(tmp_path / "src"), "--translations", str(tmp_path / "tr"), *out])


def test_extract_translate_check_stats_build(tmp_path, capsys):
    write_tree(tmp_path / "src", {"t/page.py": SOURCE})
    assert run(tmp_path, "extract", "--lang", "ja") == 0
    path = tmp_path / "tr/t/page.ja.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    heading_key = "<h1>Tiny</h1>\n<p>Scores are " + placeholder(0) + ".</p>\n"
    assert set(data) == {"Tiny", "A tiny page.", heading_key, "<p>Apply the mask </p>\n"}

    data["Tiny"] = "小さな"
    data[heading_key] = "<h1>小さな</h1>\n<p>スコアは " + placeholder(0) + " です。</p>\n"
    data["<p>Apply the mask </p>\n"] = "<p>マスクを適用 <script>alert(1)</script></p>\n"
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")

    capsys.readouterr()
    assert run(tmp_path, "check", "--langs", "en,ja") == 1
    out = capsys.readouterr().out
    # The unsafe value is reported with the file and its line in the JSON.
    line = next(i for i, l in enumerate(path.read_text().splitlines(), 1) if "script" in l)
    assert f"t/page.ja.json:{line}" in out and "script" in out

    assert run(tmp_path, "stats", "--json", "--langs", "en,ja") == 0
    stats = json.loads(capsys.readouterr().out)
    row = next(r for r in stats["pages"] if r["page"] == "t/page")
    assert (row["lang"], row["blocks"], row["translated"], row["invalid"], row["untranslated"]) == ("ja", 4, 2, 1, 1)

    assert run(tmp_path, "build", "--langs", "en,ja", "-q") == 0
    page = BeautifulSoup((tmp_path / "site/ja/t/page.html").read_text(encoding="utf-8"), "html.parser")
    assert page.title.string.startswith("小さな")
    assert "スコアは" in page.get_text()
    assert page.find("script", string=lambda s: s and "alert" in s) is None
    assert any("Apply the mask" in d.get_text() for d in page.select(".untranslated"))


def test_check_reports_stale_and_orphans(tmp_path, capsys):
    write_tree(tmp_path / "src", {"t/page.py": SOURCE})
    write_json(tmp_path / "tr/t/page.zh.json", {"<p>Old English</p>\n": "<p>旧</p>\n"})
    write_json(tmp_path / "tr/t/gone.zh.json", {})
    assert run(tmp_path, "check", "--langs", "en,zh") == 0  # warnings only
    out = capsys.readouterr().out
    assert "stale" in out and "t/gone.zh.json" in out and "orphan-file" in out


def test_a_redirect_page_counts_as_a_page_in_stats_check_and_extract(tmp_path, capsys):
    moved = '"""\n---\ntitle: Old Place\nsummary: It moved.\nredirect: https://example.org/new.html\n---\n"""\n'
    write_tree(tmp_path / "src", {"t/page.py": SOURCE, "t/old.py": moved})
    write_json(tmp_path / "tr/t/old.ja.json", {"Old Place": "旧い場所"})
    assert run(tmp_path, "stats", "--json", "--langs", "en,ja") == 0
    stats = json.loads(capsys.readouterr().out)
    row = next(r for r in stats["pages"] if r["page"] == "t/old")
    assert (row["lang"], row["blocks"], row["translated"], row["untranslated"], row["stale"]) == ("ja", 2, 1, 1, 0)
    total = next(r for r in stats["totals"] if r["lang"] == "ja")
    assert total["blocks"] == 4 + 2  # the page's four keys and the redirect page's two
    assert run(tmp_path, "check", "--langs", "en,ja") == 0
    assert "stale" not in capsys.readouterr().out  # its title is no stale entry
    assert run(tmp_path, "extract", "--lang", "ja") == 0
    assert json.loads((tmp_path / "tr/t/old.ja.json").read_text("utf-8")) == {"Old Place": "旧い場所", "It moved.": ""}
