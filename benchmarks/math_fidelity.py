"""Math on a built site against the TeX its sources hold.

    python benchmarks/math_fidelity.py CORPUS_DIR [--site DIR] [--show N]

(also the math section of `benchmarks/labml_fidelity.py`). For the English pages (at the root) of a site
built from CORPUS_DIR/labml_nn (default CORPUS_DIR/_site, built with `--langs en` if missing)
it prints:

- rows of multi-row environments: the rows the sources' TeX has (read from the source files
  themselves, not from our reading of them: `\\` separators at each environment's own level, a
  trailing empty row not counted) against the `<mtr>` rows our MathML has for those formulas;
- formulas refused (shown as their TeX in an error box);
- formulas whose TeX (the `<annotation>`) is not the source's: each line of it, trimmed, must be
  the trimmed text of consecutive source lines (comment signs removed), as the author wrote them;
- numbered rows (an equation number shown) and numbered rows that are empty.

The source's rows are counted by a reading of TeX of its own (this file), so a reader that
drops or doubles backslashes shows here as lost rows and differing formulas.
"""
from __future__ import annotations

import argparse
import html
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# Environments that are tables (rows and columns) in TeX, and so <mtable> in MathML.
TABLE_ENVIRONMENTS = frozenset(
    """align align* aligned alignat alignat* alignedat gather gather* gathered equation equation*
    split multline multline* flalign flalign* eqnarray eqnarray* array darray subarray matrix
    matrix* pmatrix pmatrix* bmatrix bmatrix* Bmatrix Bmatrix* vmatrix vmatrix* Vmatrix Vmatrix*
    smallmatrix cases cases* dcases rcases drcases CD""".split()
)
_TOKEN = re.compile(r"\\(begin|end)\s*\{([A-Za-z*]+)\}|\\substack\s*\{|\\\\|\\.|[{}]", re.S)
_MATH = re.compile(r"<math\b[^>]*>(.*?)</math>", re.S)
_ANNOTATION = re.compile(r'<annotation encoding="application/x-tex">(.*?)</annotation>', re.S)
_ERROR = re.compile(r'class="math-error"')


@dataclass
class Environment:
    name: str
    rows: list[str] = field(default_factory=list)  # the text of each row


def environments(tex: str) -> list[Environment]:
    """Every table environment (and `\\substack`) of `tex`, outer before inner, with its rows:
    split at the `\\` of its own level (not inside an inner environment), a last row holding only
    spaces or `\\hline` not counted (TeX and KaTeX draw no row for it)."""
    found: list[Environment] = []
    stack: list[tuple[Environment | None, int, int]] = []  # (env or None for a brace, row start, depth)
    depth = 0
    for m in _TOKEN.finditer(tex):
        token = m.group(0)
        if m.group(1) == "begin":
            env = Environment(m.group(2)) if m.group(2) in TABLE_ENVIRONMENTS else None
            if env:
                found.append(env)
            stack.append((env, m.end(), depth))
        elif m.group(1) == "end":
            if stack and stack[-1][2] == depth:
                env, start, _ = stack.pop()
                if env:
                    env.rows.append(tex[start:m.start()])
        elif token.startswith("\\substack"):
            env = Environment("substack")
            found.append(env)
            depth += 1
            stack.append((env, m.end(), depth))
        elif token == "{":
            depth += 1
        elif token == "}":
            if stack and stack[-1][0] is not None and stack[-1][0].name == "substack" and stack[-1][2] == depth:
                env, start, _ = stack.pop()
                env.rows.append(tex[start:m.start()])
            depth -= 1
        elif token == "\\\\":
            for k in range(len(stack) - 1, -1, -1):
                env, start, d = stack[k]
                if env is not None or d == depth:
                    if env is not None and d == depth:
                        env.rows.append(tex[start:m.start()])
                        stack[k] = (env, m.end(), d)
                    break
    for env in found:
        if len(env.rows) > 1 and not re.sub(r"\\hline|\\hdashline|\s", "", env.rows[-1]):
            env.rows.pop()
    return found


def source_rows(tex: str) -> tuple[int, bool]:
    """(rows of the table environments in `tex`, whether one has more than one row)."""
    envs = environments(tex)
    return sum(len(e.rows) for e in envs), any(len(e.rows) > 1 for e in envs)


def normalised_lines(text: str) -> list[str]:
    """Each line trimmed, with a leading comment sign (and one space) removed."""
    out = []
    for line in text.split("\n"):
        line = line.strip()
        if line.startswith("#"):
            line = line[1:].strip()
        out.append(line)
    return out


def tex_in_source(tex: str, source: str) -> bool:
    """Whether the formula's lines, trimmed, are the source's (the first may start mid-line, the
    last end mid-line)."""
    lines = [line.strip() for line in tex.split("\n")]
    return "\n".join(lines) in source


def source_environment_rows(source: str) -> tuple[int, int]:
    """(multi-row environments, their rows) written in a source file's text: the outermost
    environments, each with the rows of those inside it."""
    count = rows = 0
    for env_tex in _outermost(source):
        total, multi = source_rows(env_tex)
        if multi:
            count += 1
            rows += total
    return count, rows


_BEGIN = re.compile(r"\\begin\s*\{([A-Za-z*]+)\}")


def _outermost(text: str) -> list[str]:
    out = []
    pos = 0
    while True:
        m = _BEGIN.search(text, pos)
        if not m:
            return out
        name = m.group(1)
        depth, i = 0, m.start()
        for t in re.finditer(r"\\(begin|end)\s*\{" + re.escape(name) + r"\}", text[m.start():]):
            depth += 1 if t.group(1) == "begin" else -1
            if depth == 0:
                i = m.start() + t.end()
                break
        else:
            pos = m.end()
            continue
        if name in TABLE_ENVIRONMENTS or "\\\\" in text[m.start():i]:
            out.append(text[m.start():i])
        pos = i


@dataclass
class MathReport:
    formulas: int = 0
    refused: int = 0
    differing: list[str] = field(default_factory=list)
    source_envs: int = 0
    source_rows: int = 0
    rows_expected: int = 0  # rows of the formulas with a multi-row environment, on our pages
    rows_shown: int = 0
    numbered_rows: int = 0
    numbered_empty_rows: int = 0
    short: list[str] = field(default_factory=list)

    def lines(self, show: int = 5) -> list[str]:
        def pct(a: int, b: int) -> str:
            return f"{a}/{b} ({100 * a / max(b, 1):.2f} %)"

        out = [
            f"  math: {self.formulas} formulas, {self.refused} refused, "
            f"{len(self.differing)} whose TeX is not the source's",
            f"    multi-row environments in the sources: {self.source_envs}, {self.source_rows} rows; "
            f"rows shown as rows: {pct(self.rows_shown, self.source_rows)} "
            f"(of the rows of such formulas on our pages: {pct(self.rows_shown, self.rows_expected)})",
            f"    numbered rows: {self.numbered_rows}, of them empty: {self.numbered_empty_rows}",
        ]
        out += [f"      differs: {d}" for d in self.differing[:show]]
        out += [f"      rows lost: {d}" for d in self.short[:show]]
        return out


def measure(site_lang: Path, pages: list[tuple[str, Path]]) -> MathReport:
    """`pages`: (output path under the language root, source file) of each page."""
    report = MathReport()
    for url, source_path in pages:
        page = site_lang / url
        if not page.exists():
            continue
        text = page.read_text(encoding="utf-8")
        source_text = source_path.read_text(encoding="utf-8", errors="replace")
        source = "\n".join(normalised_lines(source_text))
        envs, rows = source_environment_rows(source)
        report.source_envs += envs
        report.source_rows += rows
        report.refused += len(_ERROR.findall(text))
        for m in _MATH.finditer(text):
            report.formulas += 1
            body = m.group(1)
            a = _ANNOTATION.search(body)
            tex = html.unescape(a.group(1)) if a else ""
            if not tex_in_source(tex, source):
                report.differing.append(f"{url}: {tex[:80]!r}")
            expected, multi = source_rows(tex)
            presentation = body[: a.start()] if a else body
            built = presentation.count("<mtr")
            if multi:
                report.rows_expected += expected
                report.rows_shown += min(built, expected)
                if built < expected:
                    report.short.append(f"{url}: {built}/{expected} rows: {tex[:60]!r}")
            for row in re.finditer(r"<mtr\b[^>]*>(.*?)</mtr>", presentation, re.S):
                cells = row.group(1)
                if re.search(r"<mtext>\([^<()]*\)</mtext></mtd>\s*$", cells):
                    report.numbered_rows += 1
                    if not re.sub(r"<mtext>\([^<]*\)</mtext>|<[^>]+>|\s", "", cells):
                        report.numbered_empty_rows += 1
    return report


def site_pages(corpus: Path) -> list[tuple[str, Path]]:
    from labml_site.read.structure import discover

    files = discover(corpus / "labml_nn")
    return [(f.url, f.path) for f in files.pages]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--site", type=Path)
    ap.add_argument("--show", type=int, default=10)
    args = ap.parse_args(argv)
    site = args.site or args.corpus / "_site"
    if not (site / "index.html").exists():
        subprocess.run([sys.executable, "-m", "labml_site", "build", "--source", str(args.corpus / "labml_nn"),
                        "--translations", str(args.corpus / "translate_cache"), "--langs", "en",
                        "--out", str(site), "--quiet"], check=False)
    report = measure(site, site_pages(args.corpus))  # English pages are at the site's root
    print("\n".join(report.lines(args.show)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
