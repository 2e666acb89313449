"""Our site built from the real annotated-paper repository, measured against the original.

    python benchmarks/labml_fidelity.py CORPUS_DIR [--langs zh,ja] [--site DIR]

CORPUS_DIR holds `labml_nn/` (sources), `translate_cache/` (translations) and `docs/` (the
original published site), e.g. from
`git --git-dir=<mirror> archive HEAD labml_nn translate_cache docs | tar -x -C CORPUS_DIR`.
Never commit any of it. The site is built into `--site` (default CORPUS_DIR/_site). Prints, per
language:

- cache entries visible: non-empty cache values whose key one of our pages produces and which
  look up as translated (shown on the page), out of all non-empty values;
- prose blocks shown translated (p, h1-h6, li in the sections' docs column, with any CJK
  letter) on our pages and on the original's `docs/<lang>/` pages of the same path; and the same
  on the pages the original published from today's source, by two tests: its language page has
  as many sections as its English page (a drifted page was made from an older source, whose
  blocks no build of today's source has), and, stricter, also the same code in every section and
  the same link targets in the prose (an older source with as many sections still differs there:
  whole language sites were published from older sources);
- with `--differences`: per page, the blocks shown in English on one side only;
- junk a reader sees: leftover placeholders (`_%5e_0_%5e_`) and Markdown parse errors; pages
  where the original shows a parse error instead of the page are left out of the shares;
- values repaired and values rejected (not shown);
- formulas on the pages (our `<math>`, the original's KaTeX);
- internal links that do not resolve, split into broken in the sources (the href is written in
  a source file) and made by us;
- math (benchmarks/math_fidelity.py, English pages): rows of the sources' multi-row environments
  against the `<mtr>` rows built, formulas refused, formulas whose TeX is not the source's,
  numbered rows and empty numbered rows;
- `#section-N` anchors of the original pages that do not resolve on ours; those of a language
  page whose sections differ from the original's own English page of the same path (published
  from an older source: no build of today's source can have them) are counted apart.

Then, once for the site: every page URL of the original's published site (`docs/**/*.html`)
that answers on ours at the same path, compared case by case (a page, or a redirect page whose
target exists); the URLs of languages not built are counted apart.
"""
from __future__ import annotations

import argparse
import html
import json
import posixpath
import re
import subprocess
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from labml_site.builder.site import analyse_pages  # noqa: E402
from labml_site.read.structure import discover  # noqa: E402
from labml_site.translate.catalog import Catalog, is_sidecar  # noqa: E402

from math_fidelity import measure as measure_math  # noqa: E402  (benchmarks/math_fidelity.py)

try:
    from labml_site.translate.repair import legacy_key  # noqa: E402
except ImportError:  # an older builder
    def legacy_key(key):
        return None

try:
    from labml_site.translate.catalog import resolve_translation_path  # noqa: E402
except ImportError:  # an older builder, for the "before" figures
    from labml_site.translate.catalog import translation_path

    def resolve_translation_path(root, page, lang):
        return translation_path(root, page, lang), None

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_BLOCK = re.compile(r"<(p|h[1-6]|li)\b[^>]*>(.*?)</\1>", re.S)
_TAG = re.compile(r"<[^>]+>")
_MATH_RE = re.compile(r"<math[\s>]")
_KATEX_RE = re.compile(r'class="katex"')
_JUNK_PLACEHOLDER = re.compile(r"_(?:%5[eE]|\^)_\d+_(?:%5[eE]|\^)_")
_HREF = re.compile(r"""href=["']([^"']*)["']""")
_ID = re.compile(r"""\bid=["']([^"']+)["']""")


def docs_regions(page: str, original: bool) -> list[str]:
    """The prose column's HTML of each section."""
    if original:  # the sections only (not the header with its home link, badges, GitHub link)
        parts = re.split(r"<div class='section' id='section-\d+'>", page)[1:]
        return [p.split("<div class='code'>")[0] for p in parts]
    parts = re.split(r'<div class="docs">', page)[1:]
    return [re.split(r'<div class="code"|</section>', p)[0] for p in parts]


class _Blocks(HTMLParser):
    """The visible text of each p, h1-h6 and li, without formulas (MathML, KaTeX) and without
    the "not yet translated" marker."""

    BLOCKS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "li"}
    VOID = {"br", "img", "hr", "input", "meta", "link", "col", "area", "wbr", "source"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool]] = []  # (tag, skipped)
        self.texts: list[list[str]] = []  # open blocks' texts
        self.done: list[str] = []

    def _skipping(self) -> bool:
        return any(skip for _, skip in self.stack)

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        cls = dict(attrs).get("class") or ""
        # formulas, the marker, and the alt text standing in for an outside image (the original
        # shows the image: no text)
        skip = tag == "math" or cls.startswith("katex") or "untranslated-marker" in cls or "outside-image" in cls
        self.stack.append((tag, skip))
        if tag in self.BLOCKS and not self._skipping():
            self.texts.append([])

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        while self.stack:
            open_tag, _ = self.stack.pop()
            if open_tag in self.BLOCKS and not self._skipping() and self.texts:
                self.done.append("".join(self.texts.pop()))
            if open_tag == tag:
                break

    def handle_data(self, data):
        if self.texts and not self._skipping():
            self.texts[-1].append(data)


def block_counts(page: str, original: bool) -> tuple[int, int]:
    """(blocks with a CJK letter, blocks with any text) in the docs column of the sections."""
    total = translated = 0
    for region in docs_regions(page, original):
        parser = _Blocks()
        parser.feed(region)
        parser.close()
        for text in parser.done:
            if not text.strip():
                continue
            total += 1
            translated += bool(_CJK.search(text))
    return translated, total


def code_columns(page: str) -> list[str]:
    """The code column's text of each section of an original page (line numbers included)."""
    parts = re.split(r"<div class='section' id='section-\d+'>", page)[1:]
    return [_TAG.sub("", p.split("<div class='code'>", 1)[1]).strip() if "<div class='code'>" in p else ""
            for p in parts]


def prose_hrefs(page: str) -> list[str]:
    """The link targets in the prose of an original page (never translated), sorted."""
    return sorted(h for region in docs_regions(page, True) for h in _HREF.findall(region))


def english_blocks(page: str, original: bool) -> Counter:
    """The blocks of the docs column shown without a CJK letter, whitespace collapsed."""
    found: Counter = Counter()
    for region in docs_regions(page, original):
        parser = _Blocks()
        parser.feed(region)
        parser.close()
        found.update(" ".join(t.split()) for t in parser.done if t.strip() and not _CJK.search(t))
    return found


_REFRESH = re.compile(r"""<meta http-equiv="refresh" content="0; url=([^"]*)">""")


def exact_file(root: Path, rel: str) -> Path | None:
    """`root/rel` when every component exists with exactly that case (a case-insensitive file
    system answers `RWKV/` with `rwkv/`; a web server on Linux does not), else None."""
    path = root
    for part in rel.split("/"):
        try:
            if part not in {p.name for p in path.iterdir()}:
                return None
        except OSError:
            return None
        path = path / part
    return path if path.is_file() else None


def redirected(root: Path, rel: str, text: str) -> str | None:
    """The text of the page a redirect page at `root/rel` leads to, if it is one of ours."""
    m = _REFRESH.search(text[:2000])
    if m is None:
        return None
    target = html.unescape(m.group(1)).split("#")[0]
    if urlsplit(target).scheme:
        return None
    found = exact_file(root, posixpath.normpath(posixpath.join(posixpath.dirname(rel), unquote(target))))
    return found.read_text(encoding="utf-8") if found else None


def original_urls(docs: Path, site: Path, source: Path, langs: list[str]) -> str:
    """How many page URLs of the original site answer on ours at the same path."""
    built = set(langs)
    others: Counter = Counter()
    page = redirect = 0
    missing: list[str] = []
    for path in sorted(docs.rglob("*.html")):
        rel = path.relative_to(docs).as_posix()
        top = rel.split("/", 1)[0]
        lang_folder = "/" in rel and re.fullmatch(r"[a-z]{2,3}", top) and not (source / top).exists()
        if lang_folder and top not in built:
            others[top] += 1
            continue
        found = exact_file(site, rel)
        if found is None:
            missing.append(rel)
            continue
        m = _REFRESH.search(found.read_text(encoding="utf-8", errors="replace")[:2000])
        if m is None:
            page += 1
            continue
        target = html.unescape(m.group(1)).split("#")[0]
        if urlsplit(target).scheme or exact_file(site, posixpath.normpath(posixpath.join(posixpath.dirname(rel), unquote(target)))):
            redirect += 1
        else:
            missing.append(f"{rel} (redirects to {target}, which is missing)")
    total = page + redirect + len(missing)
    lines = [f"original page URLs answering at the same case-sensitive path: {pct(page + redirect, total)} "
             f"({page} pages, {redirect} redirects)"]
    lines += [f"    missing: {rel}" for rel in missing[:10]]
    if others:
        lines.append("    (not counted, languages not built: " + ", ".join(f"{k} {v}" for k, v in sorted(others.items())) + ")")
    return "\n".join(lines)


def pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / max(b, 1):.2f} %)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--langs", default="zh,ja")
    ap.add_argument("--site", type=Path)
    ap.add_argument("--no-build", action="store_true", help="measure the site already in --site")
    ap.add_argument("--differences", action="store_true",
                    help="list, per page both sites have, the blocks shown in English on one side only")
    args = ap.parse_args(argv)
    langs = args.langs.split(",")
    source, cache, docs = args.corpus / "labml_nn", args.corpus / "translate_cache", args.corpus / "docs"
    site = args.site or args.corpus / "_site"
    if not args.no_build:
        subprocess.run(
            [sys.executable, "-m", "labml_site", "build", "--source", str(source), "--translations",
             str(cache), "--langs", ",".join(["en", *langs]), "--out", str(site), "--quiet"],
            check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
    files = discover(source)
    pages = analyse_pages(files.pages, 0)
    by_base = {f.base: f for f in files.pages}
    source_text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in source.rglob("*") if p.suffix in (".py", ".md"))

    for lang in langs:
        entries = visible = repaired = rejected = 0
        used: set[Path] = set()
        for f in files.pages:
            path, _ = resolve_translation_path(cache, f, lang)
            if not path.exists():
                continue
            used.add(path.resolve())
            catalog = Catalog.load(path, lang)
            produced = set(pages[f.rel].keys) if pages.get(f.rel) else set()
            # a key written for the original's rule of a numbered list is used for the list
            produced |= {legacy for k in produced if (legacy := legacy_key(k))}
            for key, entry in catalog.entries.items():
                if not entry.value.strip():
                    continue
                entries += 1
                if key not in produced:
                    continue
                found = catalog.verdict(key)  # (a legacy key looks up the same value)
                if found.shown:
                    visible += 1
                    repaired += found.state == "repaired"
                else:
                    rejected += 1
        for path in cache.rglob(f"*.{lang}.json"):
            if is_sidecar(path) or path.resolve() in used:
                continue
            entries += sum(1 for v in json.loads(path.read_text(encoding="utf-8")).values() if isinstance(v, str) and v.strip())

        ours_t = ours_n = orig_t = orig_n = 0
        math_ours = math_orig = 0
        broken_src = broken_ours = 0
        missing_ids = drift_ids = 0
        junk_ours = junk_orig = broken_pages = 0
        moved = [0, 0, 0, 0]  # the same on the old URLs ours answers with a redirect page
        same = [0, 0, 0, 0]  # ours translated, blocks; original translated, blocks: same-source pages
        strict = [0, 0, 0, 0, 0]  # the same on pages with the same code and links too; pages
        differences: list[str] = []
        broken_examples: Counter = Counter()
        missing_examples: list[str] = []
        for page_path in sorted((site / lang).rglob("*.html")):
            rel = page_path.relative_to(site / lang)
            own = page_path.read_text(encoding="utf-8")
            # an old URL's redirect page (RWKV/ for rwkv/) is compared as the page it leads to,
            # its blocks counted apart (the shares compare the pages both sites publish as pages)
            target_text = redirected(site / lang, rel.as_posix(), own)
            text = target_text or own
            ours_counts = block_counts(text, False)
            math_ours += len(_MATH_RE.findall(own))
            original = docs / lang / rel
            junk_ours += len(_JUNK_PLACEHOLDER.findall(own)) + own.count("MarkdownException")
            if original.exists():  # the shares compare the pages both sites have
                otext = original.read_text(encoding="utf-8", errors="replace")
                junk_orig += len(_JUNK_PLACEHOLDER.findall(otext))
                if "MarkdownException" in otext:
                    broken_pages += 1  # the original shows a parse error there: no prose to compare
                    continue
                t, n = block_counts(otext, True)
                if target_text is not None:
                    for i, v in enumerate((*ours_counts, t, n)):
                        moved[i] += v
                else:
                    ours_t, ours_n = ours_t + ours_counts[0], ours_n + ours_counts[1]
                    orig_t, orig_n = orig_t + t, orig_n + n
                math_orig += len(_KATEX_RE.findall(otext))
                ours_ids = set(_ID.findall(text))
                wanted = {i for i in _ID.findall(otext) if i.startswith("section-")}
                english = docs / rel
                same_source = not english.exists() or wanted == {
                    i for i in _ID.findall(english.read_text(encoding="utf-8", errors="replace"))
                    if i.startswith("section-")}
                if same_source and target_text is None:
                    same[0] += ours_counts[0]
                    same[1] += ours_counts[1]
                    same[2] += t
                    same[3] += n
                    etext = english.read_text(encoding="utf-8", errors="replace") if english.exists() else ""
                    if etext and code_columns(otext) == code_columns(etext) and prose_hrefs(otext) == prose_hrefs(etext):
                        for i, v in enumerate((*ours_counts, t, n, 1)):
                            strict[i] += v
                if args.differences and (ours_counts[0], ours_counts[1]) != (t, n):
                    ours_en, orig_en = english_blocks(text, False), english_blocks(otext, True)
                    differences.append(f"    {rel}{'' if same_source else ' (older source)'}: ours "
                                       f"{ours_counts[0]}/{ours_counts[1]}, original {t}/{n}")
                    differences.extend(f"      in English on ours only: {b[:100]}" for b in ours_en - orig_en)
                    differences.extend(f"      in English on the original only: {b[:100]}" for b in orig_en - ours_en)
                for ident in sorted(wanted - ours_ids):
                    if not same_source:
                        drift_ids += 1  # the original's page was made from another source version
                        continue
                    missing_ids += 1
                    if len(missing_examples) < 5:
                        missing_examples.append(f"{rel}#{ident}")
            for href in set(_HREF.findall(own)):
                href = html.unescape(href)
                parts = urlsplit(href)
                if parts.scheme or parts.netloc or not parts.path:
                    continue
                if parts.path.startswith("/"):
                    target = (site / unquote(parts.path).lstrip("/")).resolve()
                else:
                    target = (page_path.parent / unquote(parts.path)).resolve()
                if target.is_dir():
                    target = target / "index.html"
                if target.exists():
                    continue
                if f"({href}" in source_text or f'"{href}"' in source_text or f"({parts.path}" in source_text:
                    broken_src += 1
                else:
                    broken_ours += 1
                    broken_examples[f"{rel} -> {href}"] += 1
        print(f"[{lang}]")
        print(f"  cache entries visible on their pages: {pct(visible, entries)}")
        print(f"  prose blocks shown translated: ours {pct(ours_t, ours_n)}, original {pct(orig_t, orig_n)}")
        print(f"    on the pages the original published from today's source (as many sections as "
              f"its English page): ours {pct(same[0], same[1])}, original {pct(same[2], same[3])}")
        print(f"    and with the same code and link targets as its English page too ({strict[4]} pages): "
              f"ours {pct(strict[0], strict[1])}, original {pct(strict[2], strict[3])}")
        print(f"    (left out: old URLs ours redirects, compared as their targets: ours {pct(moved[0], moved[1])}, "
              f"original {pct(moved[2], moved[3])})")
        print(f"    (left out: {broken_pages} pages where the original shows a Markdown parse error "
              "instead of the page)")
        print(f"  junk shown (encoded placeholders like _%5e_0_%5e_, parse errors): ours {junk_ours}, "
              f"original {junk_orig + broken_pages}")
        print(f"  values repaired: {repaired}, rejected: {rejected}")
        print(f"  formulas: ours {math_ours}, original {math_orig}")
        print(f"  internal links not resolving: broken in sources {broken_src}, made by us {broken_ours}")
        for example, _ in broken_examples.most_common(5):
            print(f"      e.g. {example}")
        print(f"  #section-N anchors of the original missing on ours: {missing_ids} "
              f"(and {drift_ids} on pages the original published from an older source, whose "
              "sections differ from its own English page)")
        for example in missing_examples:
            print(f"      e.g. {example}")
        if args.differences:
            print("  pages whose blocks shown translated differ:")
            for line in differences:
                print(line)
    print("[site]")
    print("  " + original_urls(docs, site, source, ["en", *langs]))
    # Math, on the English pages (the site's root; the languages' pages have the same formulas)
    print("[en]")
    print("\n".join(measure_math(site, [(f.url, f.path) for f in files.pages]).lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
