"""Checks the fast path of `translate/fast_html.py` against html5lib on every key and value of a corpus.

    python benchmarks/fast_html_check.py [--generated] [PATH …]   (translation folders; default: the project's)

For every string key and value of every `*.json` under each PATH (a real checkout's
`translate_cache/`) and, with --generated, of `build_bench.py`'s generated corpus, the repair's readers of a fragment's
top-level structure (`units`, `top_blocks`, the key's top level) are computed with the fast path
and with html5lib alone, and must be equal wherever the fast path answers. Prints how many
fragments took the fast path, the time of each path, and every difference; exits 1 on any.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from labml_site.translate import fast_html, repair  # noqa: E402


def slow(fragment: str):
    real = fast_html.tree
    fast_html.tree = lambda _f: None
    try:
        return repair.units(fragment), repair.top_blocks(fragment), repair._key_top_level(fragment)
    finally:
        fast_html.tree = real


def fast(fragment: str):
    return repair.units(fragment), repair.top_blocks(fragment), repair._key_top_level(fragment)


def fragments(folders: list[Path]):
    for folder in folders:
        for path in sorted(folder.rglob("*.json")):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if not isinstance(data, dict):
                continue
            for key, value in data.items():
                yield key
                if isinstance(value, str):
                    yield value
                elif isinstance(value, dict) and isinstance(value.get("suggestion"), str):
                    yield value["suggestion"]


def main(argv: list[str]) -> int:
    generated = "--generated" in argv
    folders = [Path(a) for a in argv if a != "--generated"] or [ROOT / "translations"]
    if generated:
        import tempfile

        sys.path.insert(0, str(ROOT / "benchmarks"))
        import build_bench

        work = Path(tempfile.mkdtemp(prefix="fast-html-check-"))
        folders.append(build_bench.generate(work, 250, 7)[1])
    seen = set(f for f in fragments(folders) if "<" in f)
    taken = differ = 0
    t_fast = t_slow = 0.0
    for f in sorted(seen):
        t = time.perf_counter()
        tree = fast_html.tree(f)
        t_fast += time.perf_counter() - t
        if tree is None:
            continue
        taken += 1
        got = fast(f)
        t = time.perf_counter()
        want = slow(f)
        t_slow += time.perf_counter() - t
        if got != want:
            differ += 1
            print(f"DIFFERENT: {f[:300]!r}\n  fast {got!r:.400}\n  slow {want!r:.400}")
    if generated:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    print(f"{len(seen)} distinct fragments with tags; fast path taken by {taken} ({100 * taken / max(len(seen), 1):.1f} %), "
          f"{differ} different; fast tree {1e6 * t_fast / max(len(seen), 1):.0f} µs/fragment, "
          f"html5lib {1e6 * t_slow / max(taken, 1) / 3:.0f} µs/parse")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
