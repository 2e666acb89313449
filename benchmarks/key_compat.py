"""How many keys of real translation files our source format reproduces.

    python benchmarks/key_compat.py SOURCE_DIR TRANSLATIONS_DIR [--lang zh] [--quiet]

Walks SOURCE_DIR for .py and .md files, computes each file's translation keys with
labml_site.read.sections + labml_site.read.prose (and the original's key of a numbered list,
`translate.repair.legacy_key`, which the catalog looks up too), loads TRANSLATIONS_DIR/<path without ext>.<lang>.json
and prints, per file and overall, the share of the JSON's keys that the source reproduces.
Unmatched keys are listed next to the nearest produced key (difflib) with the first difference
marked.

A translation file may be older or newer than the source next to it. An unmatched key whose
English words no longer all occur in the source prose is counted as *stale* (the text changed;
not a format difference); the second share leaves stale keys out.
"""
from __future__ import annotations

import argparse
import contextlib
import difflib
import html
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from labml_site.read.prose import PLACEHOLDER_RE, page_title, section_blocks  # noqa: E402
from labml_site.read.rules import LINE_RULES  # noqa: E402
from labml_site.read.sections import ParsedSource, SourceError, parse_source  # noqa: E402

try:
    from labml_site.translate.repair import legacy_key  # noqa: E402
except ImportError:  # an older builder
    def legacy_key(key):
        return None


# Rules the original had not, whose keys' translations the catalog still finds by the original's
# key (`translate/untabled.py`): that key is the one the format makes without them.
BEYOND_ORIGINAL = ("table", "thematic_break")


@contextlib.contextmanager
def original_rules():
    """The prose rules without those the original lacked (restored after)."""
    saved = [(n, LINE_RULES[n], LINE_RULES.priority(n)) for n in BEYOND_ORIGINAL if n in LINE_RULES]
    for name, _, _ in saved:
        LINE_RULES.deregister(name)
    try:
        yield
    finally:
        for name, rule, priority in saved:
            LINE_RULES.register(rule, name, priority)


def source_keys(parsed: ParsedSource, path: str) -> list[str]:
    """Every key a source file produces: title, summary, then the sections' keys (and the keys
    the original's rules make of its tables and rules, which the catalog also finds)."""
    keys = [page_title(parsed.meta, parsed.sections, path)]
    if parsed.meta.get("summary"):
        keys.append(parsed.meta["summary"])
    for section in parsed.sections:
        ours = [b.key for b in section_blocks(section)]
        keys.extend(ours)
        if any("<table>" in k or "<hr>" in k for k in ours):
            with original_rules():
                keys.extend(b.key for b in section_blocks(section) if b.key not in ours)
    # the original's key of a numbered list (one paragraph), which the catalog also looks up
    keys.extend(legacy for k in list(keys) if (legacy := legacy_key(k)))
    return keys


_WORD_RE = re.compile(r"[A-Za-z0-9]+")
_STRIP_SOURCE = [
    re.compile(r"```.*?```", re.S),
    re.compile(r"\\begin\{([A-Za-z*]+)\}.*?\\end\{\1\}", re.S),
    re.compile(r"\$\$.*?\$\$", re.S),
    re.compile(r"\$[^$]*\$"),
    re.compile(r"`[^`]*`"),
    re.compile(r"!\[[^\]]*\]\([^)]*\)"),
    re.compile(r"\]\([^)]*\)"),
    re.compile(r"<[^>]*>"),
]


def key_words(key: str) -> list[str]:
    text = PLACEHOLDER_RE.sub(" ", key)
    text = html.unescape(re.sub(r"<[^>]*>", " ", text))
    return _WORD_RE.findall(text)


def prose_words(parsed: ParsedSource) -> list[str]:
    parts = [v for v in parsed.meta.values()]
    for s in parsed.sections:
        text = s.prose
        for rx in _STRIP_SOURCE:
            text = rx.sub(lambda m: "]" if m.group(0).startswith("](") else " ", text)
        parts.append(html.unescape(text))
    return _WORD_RE.findall(" ".join(parts))


def ngrams(words: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


_HREF_RE = re.compile(r'href="([^"]*)"')


def english_present(key: str, source_ngrams: dict[int, set], source_text: str) -> bool:
    """Whether every word trigram of the key (fewer words: the whole key) and every link target
    is in the source."""
    for href in map(html.unescape, _HREF_RE.findall(key)):
        if not any(f"{a}{href}{b}" in source_text for a, b in ("()", '""', "<>")):
            return False
    words = key_words(key)
    if not words:
        return True
    n = min(3, len(words))
    return ngrams(words, n) <= source_ngrams[n]


def first_difference(a: str, b: str) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def show_difference(key: str, nearest: str, width: int = 70) -> str:
    i = first_difference(key, nearest)
    lo = max(0, i - width // 2)
    return (f"      real:    …{key[lo:i + width // 2]!r}\n"
            f"      ours:    …{nearest[lo:i + width // 2]!r}\n"
            f"      first difference at char {i}")


@dataclass
class FileResult:
    path: str
    total: int = 0
    matched: int = 0
    stale: int = 0
    missing: list[tuple[str, str, bool]] = field(default_factory=list)  # (key, nearest, stale)
    error: str = ""


def compare(source: Path, translation: Path, rel: str) -> FileResult:
    result = FileResult(rel)
    real = list(json.loads(translation.read_text(encoding="utf-8")))
    result.total = len(real)
    try:
        parsed = parse_source(source.read_text(encoding="utf-8"), str(source))
    except SourceError as e:
        result.error = str(e)
        return result
    produced = source_keys(parsed, str(source))
    produced_set = set(produced)
    words = prose_words(parsed)
    grams = {n: ngrams(words, n) for n in (1, 2, 3)}
    for key in real:
        if key in produced_set:
            result.matched += 1
            continue
        stale = not english_present(key, grams, source.read_text(encoding="utf-8"))
        result.stale += stale
        nearest = difflib.get_close_matches(key, produced, n=1, cutoff=0.0)
        result.missing.append((key, nearest[0] if nearest else "", stale))
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source_dir", type=Path)
    ap.add_argument("translations_dir", type=Path)
    ap.add_argument("--lang", default="zh")
    ap.add_argument("--quiet", action="store_true", help="only the per-file and overall shares")
    ap.add_argument("--show-stale", action="store_true", help="also list stale keys")
    args = ap.parse_args(argv)

    results: list[FileResult] = []
    for source in sorted(args.source_dir.rglob("*")):
        if source.suffix not in (".py", ".md") or not source.is_file():
            continue
        rel = source.relative_to(args.source_dir).with_suffix("")
        translation = args.translations_dir / f"{rel}.{args.lang}.json"
        if not translation.exists():
            print(f"-- {rel}: no {translation.name}, skipped")
            continue
        results.append(compare(source, translation, str(rel)))

    total = matched = stale = 0
    for r in results:
        total += r.total
        matched += r.matched
        stale += r.stale
        live = r.total - r.stale
        line = (f"{r.path}: {r.matched}/{r.total} keys ({100 * r.matched / max(r.total, 1):.1f}%), "
                f"excluding {r.stale} stale: {r.matched}/{live} ({100 * r.matched / max(live, 1):.1f}%)")
        print(line + (f"  ERROR {r.error}" if r.error else ""))
        if args.quiet:
            continue
        for key, nearest, is_stale in r.missing:
            if is_stale and not args.show_stale:
                continue
            print(f"   {'[stale]' if is_stale else '[MISS] '} {key[:100]!r}")
            print(show_difference(key, nearest))
    live = total - stale
    print(f"\nOVERALL: {matched}/{total} keys reproduced ({100 * matched / max(total, 1):.2f}%); "
          f"{stale} stale keys (English no longer in source); "
          f"excluding them: {matched}/{live} ({100 * matched / max(live, 1):.2f}%) in {len(results)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
