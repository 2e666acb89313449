"""What the translation editor saves a translator: a page of 15 keys (13 prose blocks, title,
summary) translated by hand in the JSON file vs in the editor (`translate`), driven through the
real UI in Chromium; and how fast the editor answers.

    python benchmarks/workbench_bench.py [--tutorial] [--memory DIR]

For each block the same Chinese words are entered both ways. By hand, a translator types the
whole value between the JSON quotes: the words, and also every tag, every placeholder
(`<span translate=no>_^_0_^_</span>`), the `\\n` escapes and the exact edge whitespace the
English has. In the editor the value starts as the English, Tab selects the next run of words and
the words are typed over it; Ctrl+Enter saves and opens the next untranslated block. The script
counts the keys pressed in the editor (it presses them), and the characters a hand edit would
have to type, and checks that the saved file passes every error-level check. It also times each
save (checks, atomic write, incremental rebuild, page updated in place).

Seconds per block are not a person's timings: they follow the keystroke-level model (Card, Moran
and Newell: 0.28 s per key for an average typist, 1.2 s to think before each block, plus what the
machine makes the translator wait: each save in the editor, one `check` run per block by hand).

`--tutorial` also times, on a copy of the real tutorial (source/ and translations/, copied to a
temporary folder; the repository is never written), saves of one block of `mha` (checks, write,
rebuild of the page, page updated: median of 9) and the checks after each keystroke on the
tutorial's longest block (from the input event to the findings shown).

`--memory DIR` times the translation memory over the `zh` entries of DIR (e.g. the labml corpus's
translate_cache), made up to 10,000 entries with recombined sentences when it has fewer: one
suggestion for each of 200 keys, and 50 concordance searches.
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

# ### Heads
#
# Each head has its own projections $W^Q_h$, $W^K_h$ and $W^V_h$.
heads = 8

# The outputs of the heads are concatenated and projected by $W^O$.
out = torch.zeros(4, 64)

# **Note:** `dropout` is applied to the weights, not to the scores.
dropout = 0.1

# We return the weights too, so that they can be *plotted*.
plot = True


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
    "Heads</h3>": ["多头", "每个头都有自己的投影 ", "、", " 和 ", "。"],
    "concatenated and projected": ["各个头的输出被拼接起来，再由 ", " 投影。"],
    "is applied to the weights": ["注意：", " 作用于权重，而不是分数。"],
    "so that they can be": ["我们也返回权重，以便把它们", "画出来", "。"],
}

KLM_KEY_S, KLM_THINK_S = 0.28, 1.2


def _words_for(key: str) -> list[str | None] | None:
    if key in WORDS:  # a title or summary
        return WORDS[key]
    for marker, words in WORDS.items():
        if marker in key and marker not in ("Attention scores", "Scores, scaling and the softmax."):
            return words
    return None


def _wait(page, predicate: str, timeout: float = 20.0) -> None:
    """Poll `predicate` (a function's source) in the page: the editor's policy refuses the
    `eval` that Playwright's wait_for_function uses."""
    end = time.perf_counter() + timeout
    while not page.evaluate(predicate):
        if time.perf_counter() > end:
            raise TimeoutError(predicate)
        time.sleep(0.003)


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
    keys, saves, by_hand, rows = 0, [], 0, []
    started = time.perf_counter()
    page.keyboard.press("Alt+n")
    keys += 1
    for _ in range(len(blocks)):
        page.wait_for_selector(".wb-editor")
        index = int(page.get_attribute(".wb-panel", "data-index"))
        key = blocks[index]["key"]
        words = _words_for(key)
        keys_before = keys
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
        _wait(page,
              f"() => (document.querySelector('.wb-panel').getAttribute('data-index') !== '{index}' || "
              f"(document.querySelector('.wb-message') || {{textContent: ''}}).textContent.indexOf('Every block') >= 0 || "
              f"(document.querySelector('.wb-message') || {{getAttribute: () => ''}}).getAttribute('data-kind') === 'error')")
        if page.locator(".wb-confirm-english").count():  # the English kept as it is: confirmed with Enter
            page.keyboard.press("Enter")
            keys += 1
            _wait(page, f"() => document.querySelector('.wb-panel').getAttribute('data-index') !== '{index}' || "
                        "(document.querySelector('.wb-message') || {textContent: ''}).textContent.indexOf('Every block') >= 0")
        if page.get_attribute(".wb-message", "data-kind") == "error":
            raise SystemExit(f"not saved: {page.inner_text('.wb-message')} {page.inner_text('.wb-findings')}")
        saves.append(time.perf_counter() - t0)
        value = json.loads((tmp / "tr/tut/page.zh.json").read_text(encoding="utf-8"))[key]
        hand = len(json.dumps(value, ensure_ascii=False)) - 2  # what a hand edit types between the quotes
        by_hand += hand
        rows.append({"editor_keys": keys - keys_before + (1 if not rows else 0), "hand_chars": hand, "save_s": saves[-1]})
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
    t = time.perf_counter()
    check_file(tmp / "tr/tut/page.zh.json", "zh", {b["key"] for b in blocks})
    check_s = time.perf_counter() - t  # what a hand edit waits for, once per block
    n = len(rows)
    editor_s = sum(KLM_THINK_S + KLM_KEY_S * r["editor_keys"] + r["save_s"] for r in rows) / n
    hand_s = sum(KLM_THINK_S + KLM_KEY_S * r["hand_chars"] + check_s for r in rows) / n
    return {
        "per_block": {
            "editor_keys": round(sum(r["editor_keys"] for r in rows) / n, 1),
            "hand_chars": round(sum(r["hand_chars"] for r in rows) / n, 1),
            "editor_s_klm": round(editor_s, 1),
            "hand_s_klm": round(hand_s, 1),
        },
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


# In the page: from the Ctrl+S keydown to the first frame painted after the saved block is shown
# ("Saving…" replaced), on the page's own clock, so the driver's round trips (Playwright asks the
# browser several times per wait) are not counted; `save_driver_ms` is that outside view.
_SAVE_CLOCK = """() => {
  window.__saveKey = null; window.__saveShown = null;
  window.addEventListener('keydown', e => {
    if (e.ctrlKey && (e.key === 's' || e.key === 'S')) window.__saveKey = performance.now(); }, {capture: true});
  const observer = new MutationObserver(() => {
    const m = document.querySelector('.wb-message');
    if (window.__saveKey !== null && m && m.dataset.kind && m.textContent.indexOf('Saving') < 0) {
      observer.disconnect();
      requestAnimationFrame(() => { window.__saveShown = performance.now(); });
    } });
  observer.observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
}"""


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
    times, outside = [], []
    for i in range(9):
        page.click('.wb-block[data-index="3"]')
        page.wait_for_selector(".wb-editor")
        page.evaluate("""() => { const ed = document.querySelector('.wb-editor');
            const w = document.createTreeWalker(ed, NodeFilter.SHOW_TEXT); let n;
            while ((n = w.nextNode())) { const i = n.nodeValue.indexOf('</p>');
              if (i >= 0) { const r = document.createRange(); r.setStart(n, i); r.collapse(true);
                getSelection().removeAllRanges(); getSelection().addRange(r); return; } } }""")
        page.keyboard.insert_text("。" if i % 2 == 0 else "")
        before = session.build_id
        page.evaluate(_SAVE_CLOCK)
        t = time.perf_counter()
        page.keyboard.press("Control+s")
        page.wait_for_selector('.wb-message[data-kind]', timeout=60000)
        _wait(page, "() => document.querySelector('.wb-message').textContent.indexOf('Saving') < 0", 60)
        _wait(page, "() => window.__saveShown !== null", 60)
        outside.append(time.perf_counter() - t)
        times.append(page.evaluate("window.__saveShown - window.__saveKey") / 1000)
        assert session.build_id > before or i % 2 == 1
    # The checks after each keystroke on the longest block: from the input event to the findings.
    state = session.page_state("annotated_attention/mha.html")
    longest = max(state["blocks"], key=lambda b: len(b["key"]))
    page.keyboard.press("Escape")
    page.click(f'.wb-block[data-index="{longest["index"]}"]')
    page.wait_for_selector(".wb-editor")
    page.wait_for_selector(".wb-panel[data-check-ms]")
    page.evaluate("""() => { const ed = document.querySelector('.wb-editor');
        const w = document.createTreeWalker(ed, NodeFilter.SHOW_TEXT); let n;
        while ((n = w.nextNode())) { const i = n.nodeValue.indexOf('</p>');
          if (i >= 0) { const r = document.createRange(); r.setStart(n, i); r.collapse(true);
            getSelection().removeAllRanges(); getSelection().addRange(r); return; } } }""")
    checks = []
    for ch in "注意力的分数":
        page.evaluate("document.querySelector('.wb-panel').removeAttribute('data-check-ms')")
        page.keyboard.insert_text(ch)
        page.wait_for_selector(".wb-panel[data-check-ms]", timeout=10000)
        checks.append(int(page.get_attribute(".wb-panel", "data-check-ms")))
        page.wait_for_timeout(150)  # a typist's pace: one key every 150 ms
    page.close()
    server.shutdown()
    server.server_close()
    return {"first_build_s": round(first, 2), "save_ms": [round(1000 * t) for t in times],
            "save_median_ms": round(1000 * statistics.median(times)),
            "save_driver_ms": [round(1000 * t) for t in outside], "pages": len(session.pages),
            "longest_block_chars": len(longest["key"]), "check_after_key_ms": checks,
            "check_median_ms": statistics.median(checks)}


def memory_bench(folder: Path, target: int = 10_000) -> dict:
    """Suggestions and concordance over `folder`'s zh entries, made up to `target` entries."""
    import random

    from labml_site.workbench.memory import Memory

    memory = Memory()
    t = time.perf_counter()
    read = memory.load_folder(folder, "zh")
    load_s = time.perf_counter() - t
    units = [u for u in memory.units if u is not None]
    rng = random.Random(1)
    made = 0
    while len(memory) < target and units:  # recombined sentences: new keys with real words
        a, b = rng.sample(units, 2)
        memory.add(a.key.rstrip() + " " + b.key, a.value.rstrip() + b.value, "made-up")
        made += 1
    keys = [u.key for u in rng.sample(units, min(200, len(units)))]
    times = []
    for key in keys:
        t = time.perf_counter()
        memory.suggest(key)
        times.append(time.perf_counter() - t)
    words = [w for u in rng.sample(units, 50) for w in u.english.split()[:1] if len(w) > 3] or ["attention"]
    conc = []
    for w in words:
        t = time.perf_counter()
        memory.concordance(w)
        conc.append(time.perf_counter() - t)
    times.sort()
    return {"entries": len(memory), "read_from_folder": read, "made_up": made, "load_s": round(load_s, 2),
            "suggest_median_ms": round(1000 * statistics.median(times), 1),
            "suggest_p95_ms": round(1000 * times[int(0.95 * len(times)) - 1], 1),
            "suggest_max_ms": round(1000 * times[-1], 1),
            "concordance_median_ms": round(1000 * statistics.median(conc), 2),
            "concordance_max_ms": round(1000 * max(conc), 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tutorial", action="store_true", help="also time saves on a copy of the real tutorial")
    parser.add_argument("--memory", type=Path, default=None, metavar="DIR",
                        help="also time the translation memory over DIR's zh entries (up to 10,000)")
    parser.add_argument("--no-editor", action="store_true", help="skip the 15-block comparison")
    args = parser.parse_args()
    if args.memory is not None:
        print(json.dumps(memory_bench(args.memory), indent=1))
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p, tempfile.TemporaryDirectory() as tmp:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"])
        if not args.no_editor:
            result = run(Path(tmp) / "fixture", browser)
            print(json.dumps(result, ensure_ascii=False, indent=1))
        if args.tutorial:
            print(json.dumps(tutorial_save(Path(tmp) / "tutorial", browser), indent=1))
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
