"""Math on a real corpus: how many formulas convert, which are refused, and how fast.

    python benchmarks/math_corpus.py CORPUS_DIR [--show N] [--repeat 3]

Reads every `.py`/`.md` file under CORPUS_DIR the way the builder does (`parse_source`, then
`section_blocks`), collects every formula placeholder (inline `$…$`, display `$$…$$`, environments)
and converts each distinct one with `tex_to_mathml`, uncached. Prints occurrences and distinct
formulas, how many are refused (with the first --show of them and their errors), formulas per
CPU-second (best of --repeat), and the KaTeX-set coverage of `tests/data/katex_functions.tsv`.
It also builds the corpus cold (English, one process, no cache) and prints the share of its CPU
time spent on math, and the math errors of that build. Exits 0 either way.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from labml_site.read.prose import section_blocks  # noqa: E402
from labml_site.read.sections import SourceError, parse_source  # noqa: E402
from labml_site.typeset import math as tm  # noqa: E402

GOAL_PER_CPU_S = 45_000  # the floor the project holds math to (docs/math.md)


def corpus_formulas(corpus: Path) -> list[tuple[str, bool, str, int]]:
    """(tex, display, file, line) for every math placeholder the builder would typeset."""
    out = []
    for path in sorted(corpus.rglob("*")):
        if path.suffix not in (".py", ".md") or not path.is_file():
            continue
        rel = str(path.relative_to(corpus))
        try:
            parsed = parse_source(path.read_text(encoding="utf-8"), rel)
        except (SourceError, UnicodeDecodeError):
            continue
        for section in parsed.sections:
            for block in section_blocks(section):
                for ph in block.placeholders:
                    if ph.kind in ("math", "display_math", "env"):
                        out.append((ph.text, ph.kind != "math", rel, ph.line))
    return out


def convert_uncached(tex: str, display: bool) -> str:
    return tm.tex_to_mathml.__wrapped__(tex, display)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--show", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    found = corpus_formulas(args.corpus)
    distinct = list(dict.fromkeys((tex, display) for tex, display, _, _ in found))
    refused: dict[tuple[str, bool], str] = {}
    for tex, display in distinct:
        try:
            convert_uncached(tex, display)
        except tm.MathError as error:
            refused[(tex, display)] = str(error)
    occurrences = sum(1 for tex, display, _, _ in found if (tex, display) in refused)
    print(f"formulas: {len(found)} occurrences, {len(distinct)} distinct")
    print(f"refused: {len(refused)} distinct, {occurrences} occurrences")
    for (tex, display), message in list(refused.items())[: args.show]:
        where = next(f"{f}:{line}" for t, d, f, line in found if (t, d) == (tex, display))
        print(f"  {where}: {tex[:100]!r}\n      {message[:160]}")
    best = float("inf")
    for _ in range(args.repeat):
        start = time.process_time()
        for tex, display in distinct:
            try:
                convert_uncached(tex, display)
            except tm.MathError:
                pass
        best = min(best, time.process_time() - start)
    rate = len(distinct) / best if best else float("inf")
    print(f"speed: {rate:,.0f} distinct formulas per CPU-second ({best:.3f} CPU-s for {len(distinct)})"
          f" — goal {GOAL_PER_CPU_S:,}: {'met' if rate >= GOAL_PER_CPU_S else 'NOT met'}")
    # A cold build's per-file work (parse, prose, math, highlighting: typeset.page.analyse), math
    # caches cleared, and the part of it spent typesetting math (an upper bound of its share).
    from labml_site.typeset import page as typeset_page

    files = [p for p in sorted(args.corpus.rglob("*")) if p.suffix in (".py", ".md") and p.is_file()]
    texts = [(str(p.relative_to(args.corpus)), p.read_text(encoding="utf-8", errors="replace")) for p in files]
    spent = [0.0]
    original = typeset_page.typeset_page

    def timed(*a, **k):
        t = time.process_time()
        try:
            return original(*a, **k)
        finally:
            spent[0] += time.process_time() - t

    tm.tex_to_mathml.cache_clear()
    tm._typeset_together.cache_clear()
    typeset_page.typeset_page = timed
    start = time.process_time()
    for rel, text in texts:
        typeset_page.analyse(rel, rel.rsplit(".", 1)[0] + ".html", text)
    whole = time.process_time() - start
    typeset_page.typeset_page = original
    share = spent[0] / whole if whole else 0.0
    print(f"analysis alone: math {spent[0]:.3f} of {whole:.3f} CPU-s for {len(texts)} files = {share:.1%}")
    # A real cold build of the corpus (English, one process, no cache), and its math.
    import shutil
    import tempfile

    from labml_site.builder.config import BuildConfig
    from labml_site.builder.site import build

    tm.tex_to_mathml.cache_clear()
    tm._typeset_together.cache_clear()
    spent[0] = 0.0
    typeset_page.typeset_page = timed
    with tempfile.TemporaryDirectory() as scratch:
        (Path(scratch) / "translations").mkdir()
        start = time.process_time()
        result = build(BuildConfig(args.corpus, Path(scratch) / "translations", Path(scratch) / "site",
                                   langs=("en",), jobs=1, cache=False))
        whole = time.process_time() - start
        shutil.rmtree(Path(scratch) / "site", ignore_errors=True)
    typeset_page.typeset_page = original
    math_errors = [f for f in result.report.errors if f.code == "math"]
    share = spent[0] / whole if whole else 0.0
    print(f"cold build (en, one process): math {spent[0]:.3f} of {whole:.2f} CPU-s = {share:.1%}"
          f" — goal under 5 %: {'met' if share < 0.05 else 'NOT met'}; math errors in the build: {len(math_errors)}")
    try:
        sys.path.insert(0, str(ROOT / "tests"))
        from katex_coverage import coverage  # type: ignore

        converted, total, missing = coverage()
        print(f"KaTeX set: {converted}/{total} = {100 * converted / total:.1f} % convert"
              f" ({len(missing)} not: {' '.join(missing[:30])}{' …' if len(missing) > 30 else ''})")
    except ImportError:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
