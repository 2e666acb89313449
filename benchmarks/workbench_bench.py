"""What the translation editor saves a translator: a page of 11 keys (9 prose blocks, title,
summary) translated by hand in the JSON file vs in the editor (`translate`), driven through the
real UI in Chromium.

    python benchmarks/workbench_bench.py [--tutorial]

For each block the same Chinese words are entered both ways. By hand, a translator types the
whole value between the JSON quotes: the words, and also every tag, every placeholder
(`<span translate=no>_^_0_^_</span>`), the `\\n` escapes and the exact edge whitespace the
English has. In the editor the value starts as the English, Tab selects the next run of words and
the words are typed over it; Ctrl+Enter saves and opens the next untranslated block. The script
counts the keys pressed in the editor (it presses them), and the characters a hand edit would
have to type, and checks that the saved file passes every error-level check. It also times each
save (checks, atomic write, incremental rebuild, page updated in place).

`--tutorial` also times a save on a copy of the real tutorial (source/ and translations/, copied
to a temporary folder; the repository is never written).
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from labml_site.builder.config import BuildConfig  # noqa: E402
from labml_site.workbench.editor import start  # noqa: E402

# Nine prose blocks (headings, inline and display math, code spans, a link, a list, a docstring),
# a title and a summary.
PAGE = '''"""
---
title: Attention scores
summary: Scores, scaling and the softmax.
---

# Attention scores

Each query $q_i$ is compared with every key $k_j$ by a dot product.
"""

import torch

# ## Scaling
#
# We divide by $\\sqrt{d_k}$ so that the scores keep unit variance.
d_k = 64

# $$s_{ij} = \\frac{q_i \\cdot k_j}{\\sqrt{d_k}}$$
scale = d_k ** -0.5

# The scores of `q` against `k` have the shape `[seq, seq]`.
scores = torch.zeros(4, 4)

# * Rows are queries.
# * Columns are keys.
rows = 4

# The [softmax](https://en.wikipedia.org/wiki/Softmax_function) turns each row into weights.
weights = scores.softmax(-1)

# Masked positions get $-\\infty$ before the softmax.
masked = scores.masked_fill(torch.ones(4, 4, dtype=torch.bool).triu(1), float("-inf"))


def attend(v):
    """
    The output is the weighted average of the values `v`.
    """
    # Multiply the weights by the values
    return weights @ v
'''

# The words typed for each block, one string per run of words (in the editor's Tab order).
WORDS = {
    "Attention scores": ["注意力分数"],
    "Scores, scaling and the softmax.": ["分数、缩放与 softmax。"],
    "Attention scores</h1>": ["注意力分数", "每个查询 ", " 都通过点积与每个键 ", " 比较。"],
    "Scaling</h2>": ["缩放", "我们除以 ", "，使分数保持单位方差。"],
    "The scores of": ["", "对 ", " 的分数形状为 ", "。"],
    "Rows are queries": ["行是查询。", "列是键。"],
    "turns each row": ["", None, " 把每一行变成权重。"],  # None: the run stays (Tab passes it)
    "Masked positions": ["被屏蔽的位置在 softmax 之前得到 ", "。"],
    "weighted average": ["输出是值 ", " 的加权平均。"],
    "Multiply the weights": ["把权重乘以值 "],
}


def _words_for(key: str) -> list[str | None] | None:
    if key in WORDS:  # a title or summary
        return WORDS[key]
    for marker, words in WORDS.items():
        if marker in key and marker not in ("Attention scores", "Scores, scaling and the softmax."):
            return words
    return None


def run(tmp: Path, browser) -> dict:
    (tmp / "src/tut").mkdir(parents=True)
    (tmp / "src/tut/page.py").write_text(PAGE, encoding="utf-8")
    config = BuildConfig(source=tmp / "src", translations=tmp / "tr", out=tmp / "site", langs=("en", "zh"))
    from labml_site.cli.main import main

    main(["extract", "--lang", "zh", "--source", str(tmp / "src"), "--translations", str(tmp / "tr")])
    session, server, url = start(config, "zh")
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(url.replace("/?token=", "/zh/tut/page.html?token="))
    page.wait_for_selector("html[data-workbench=ready]")
    blocks = page.evaluate("fetch('/__workbench/api/page?url=tut/page.html',{headers:{'X-Workbench-Token':"
                           "document.querySelector('meta[name=labml-workbench-token]').content}}).then(r=>r.json())")["blocks"]
    keys, saves, by_hand = 0, [], 0
    started = time.perf_counter()
    page.keyboard.press("Alt+n")
    keys += 1
    for _ in range(len(blocks)):
        page.wait_for_selector(".wb-editor")
        index = int(page.get_attribute(".wb-panel", "data-index"))
        key = blocks[index]["key"]
        words = _words_for(key)
        if words is None:  # a display-math block: nothing to translate, the English copy is right
            words = []
        for i, text in enumerate(words):
            if i:
                page.keyboard.press("Tab")
                keys += 1
            if text is None:
                continue
            if text:
                page.keyboard.insert_text(text)  # like an input method: one commit per run
                keys += len(text)
            else:
                page.keyboard.press("Delete")
                keys += 1
        t0 = time.perf_counter()
        page.keyboard.press("Control+Enter")
        keys += 1
        page.wait_for_function(
            f"(document.querySelector('.wb-panel').getAttribute('data-index') !== '{index}' || "
            f"(document.querySelector('.wb-message') || {{textContent: ''}}).textContent.indexOf('Every block') >= 0 || "
            f"(document.querySelector('.wb-message') || {{getAttribute: () => ''}}).getAttribute('data-kind') === 'error')",
            timeout=20000)
        if page.get_attribute(".wb-message", "data-kind") == "error":
            raise SystemExit(f"not saved: {page.inner_text('.wb-message')} {page.inner_text('.wb-findings')}")
        saves.append(time.perf_counter() - t0)
        value = json.loads((tmp / "tr/tut/page.zh.json").read_text(encoding="utf-8"))[key]
        by_hand += len(json.dumps(value, ensure_ascii=False)) - 2  # what a hand edit types between the quotes
        if page.get_attribute(".wb-panel", "data-index") == str(index):
            break
    elapsed = time.perf_counter() - started
    from labml_site.translate.catalog import check_file

    findings = check_file(tmp / "tr/tut/page.zh.json", "zh", {b["key"] for b in blocks})
    data = json.loads((tmp / "tr/tut/page.zh.json").read_text(encoding="utf-8"))
    words_chars = sum(len(t) for ws in WORDS.values() for t in ws if t)
    page.close()
    server.shutdown()
    server.server_close()
    return {
        "blocks": len(blocks),
        "translated": sum(1 for v in data.values() if v.strip()),
        "editor_keys": keys,
        "hand_chars": by_hand,
        "word_chars": words_chars,
        "errors": [f.code for f in findings if f.severity == "error"],
        "warnings": sorted({f.code for f in findings if f.severity == "warning"}),
        "save_median_ms": 1000 * statistics.median(saves),
        "session_s": elapsed,
    }


def tutorial_save(tmp: Path, browser) -> dict:
    """Time saves on the real tutorial (a copy): open mha.html, change one block, save."""
    shutil.copytree(ROOT / "source", tmp / "source")
    shutil.copytree(ROOT / "translations", tmp / "translations")
    config = BuildConfig(source=tmp / "source", translations=tmp / "translations", out=tmp / "site", langs=("en", "zh"))
    t0 = time.perf_counter()
    session, server, url = start(config, "zh")
    first = time.perf_counter() - t0
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(url.replace("/?token=", "/zh/annotated_attention/mha.html?token="))
    page.wait_for_selector("html[data-workbench=ready]", timeout=60000)
    times = []
    for i in range(3):
        page.click('.wb-block[data-index="3"]')
        page.wait_for_selector(".wb-editor")
        page.evaluate("""() => { const ed = document.querySelector('.wb-editor');
            const w = document.createTreeWalker(ed, NodeFilter.SHOW_TEXT); let n;
            while ((n = w.nextNode())) { const i = n.nodeValue.indexOf('</p>');
              if (i >= 0) { const r = document.createRange(); r.setStart(n, i); r.collapse(true);
                getSelection().removeAllRanges(); getSelection().addRange(r); return; } } }""")
        page.keyboard.insert_text("。" if i % 2 == 0 else "")
        before = session.build_id
        t = time.perf_counter()
        page.keyboard.press("Control+s")
        page.wait_for_selector('.wb-message[data-kind]', timeout=60000)
        page.wait_for_function("document.querySelector('.wb-message').textContent.indexOf('Saving') < 0", timeout=60000)
        times.append(time.perf_counter() - t)
        assert session.build_id > before or i % 2 == 1
    page.close()
    server.shutdown()
    server.server_close()
    return {"first_build_s": first, "save_ms": [round(1000 * t) for t in times], "pages": len(session.pages)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tutorial", action="store_true", help="also time saves on a copy of the real tutorial")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p, tempfile.TemporaryDirectory() as tmp:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"])
        result = run(Path(tmp) / "fixture", browser)
        print(json.dumps(result, ensure_ascii=False, indent=1))
        if args.tutorial:
            print(json.dumps(tutorial_save(Path(tmp) / "tutorial", browser), indent=1))
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
