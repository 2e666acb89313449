"""The translation review as data, and what a maintainer does with it.

`builder/review.py` compares the translation files with a git ref and fills these dataclasses;
here, with no git and no page analysis:

- `annotations` and `summary`: what CI annotates (the errors of the changed entries and files
  only, never the rest of a file) and the one summary line;
- `char_diff`: the character-level difference of an entry's old and new value;
- `report_html` / `write_report`: one offline HTML file (style and script inline, under a
  Content-Security-Policy that allows nothing else), with filters (errors only, page, language,
  decision) and Approve / Reject per entry, which the page collects into a decisions file;
- `apply_decisions`: writes those decisions into the review sidecars (`review_state.py`), which
  the next `review` shows and `stats` counts. A decision names the digest of the value it was
  made on; a value that changed since is skipped, never approved unseen.
"""
from __future__ import annotations

import base64
import datetime
import difflib
import hashlib
import html
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from ..findings import Finding
from ..read.safe_files import UnsafeFile, check_no_links, write_atomic
from ..read.structure import bad_name
from . import review_state
from .files import MAX_FILE_BYTES, parse_translation_file
from .review_state import BadReviewFile, Review


@dataclass
class Rendered:
    html: str  # safe to show: the build's rendering, or the escaped text
    status: str  # the verdict's state (translate/verdict.py): translated, repaired, untranslated, …
    findings: list[Finding] = field(default_factory=list)


@dataclass
class ChangedEntry:
    key: str
    english: str  # rendered
    old: Rendered
    new: Rendered
    kind: str  # translated (was empty or absent), changed, removed (now empty or absent)
    line: int = 0
    before: str = ""  # the values as written, for the diff and the decision
    after: str = ""
    decision: Review | None = None  # the review sidecar's approval or rejection of `after`, if current

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.new.findings if f.severity == "error"]


@dataclass
class MarkChange:
    """A review mark (`<page>.<lang>.review.json`, review_state.py) added, changed or removed:
    someone claims, or stops claiming, that a translation was reviewed."""

    key: str
    before: Review | None
    after: Review | None
    current: bool  # the mark is for the translation the file holds now
    line: int = 0

    @property
    def kind(self) -> str:
        return "added" if self.before is None else "removed" if self.after is None else "changed"


@dataclass
class ChangedFile:
    path: str  # as git names it, relative to the repository
    local: str  # the path to show and annotate (relative to the current folder)
    lang: str
    page: str  # page base, e.g. annotated_attention/mha ("" when no source page matches)
    entries: list[ChangedEntry] = field(default_factory=list)
    file_findings: list[Finding] = field(default_factory=list)
    marks: list[MarkChange] = field(default_factory=list)
    kind: str = "translation"  # translation, review (marks), other (shown as a finding only)
    rel: str = ""  # relative to the translations folder (what a decision names)


def printable(text: str) -> str:
    """Text from a file as a report or a terminal can show it: lone surrogates and controls escaped."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if text.isprintable() else "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def _shown(items: list[Finding]) -> list[Finding]:
    return [replace(f, message=printable(f.message), key=printable(f.key), path=printable(f.path)) for f in items]


def findings(changes: list[ChangedFile]) -> list[Finding]:
    """Every finding of the changed entries and files (the report's and `--format text`'s)."""
    out: list[Finding] = []
    for change in changes:
        out.extend(change.file_findings)
        for entry in change.entries:
            out.extend(entry.new.findings)
    return _shown(out)


def annotations(changes: list[ChangedFile]) -> list[Finding]:
    """What CI annotates: the errors of the changed entries and of the changed files, and each
    changed review mark (a claim that a person checked a translation, which a maintainer must
    confirm); nothing about entries the change did not touch (the base's, and the base passed)."""
    return [f for f in findings(changes) if f.severity == "error" or f.code == "review-mark"]


@dataclass(frozen=True)
class Summary:
    entries: int
    files: int
    errors: int
    warnings: int
    marks: int
    approved: int
    rejected: int

    def line(self, base: str, report: str = "") -> str:
        where = f"; the report: {report}" if report else ""
        decided = f", {self.approved} approved, {self.rejected} rejected" if self.approved or self.rejected else ""
        return (f"{self.entries} changed entries in {self.files} files since {base}: {self.errors} errors, "
                f"{self.warnings} warnings{decided}{where}")


def summary(changes: list[ChangedFile]) -> Summary:
    every = findings(changes)
    errors = sum(1 for f in every if f.severity == "error")
    entries = [e for c in changes for e in c.entries]
    decided = [e.decision.status for e in entries if e.decision is not None]
    return Summary(len(entries), len(changes), errors, len(every) - errors, sum(len(c.marks) for c in changes),
                   decided.count("approved"), decided.count("rejected"))


# ---------------------------------------------------------------------------------------------
# The character-level diff

# SequenceMatcher is quadratic at worst (its time grows with the product of the two lengths):
# past this product, characters give way to words, then lines, then one replacement.
_BUDGET = 1_000_000
_WORD = re.compile(r"\w+|\s+|[^\w\s]", re.UNICODE)


def char_diff(old: str, new: str) -> list[tuple[str, str]]:
    """`old` → `new` as runs of ("=", kept), ("-", deleted), ("+", inserted) text, by character.
    The common start and end are taken off first (one pass); a long middle is diffed by word,
    then by line, or shown replaced whole, so that no value stalls the report."""
    head = 0
    limit = min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    a, b = old[head:len(old) - tail], new[head:len(new) - tail]
    out: list[tuple[str, str]] = []

    def add(op: str, parts) -> None:
        text = "".join(parts)
        if not text:
            return
        if out and out[-1][0] == op:
            out[-1] = (op, out[-1][1] + text)
        else:
            out.append((op, text))

    add("=", old[:head])
    for split in (list, _WORD.findall, lambda t: t.splitlines(keepends=True), None):
        if split is None:  # too long even by line: one replacement
            add("-", a)
            add("+", b)
            break
        x, y = split(a), split(b)
        if len(x) * len(y) <= _BUDGET:
            for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, x, y, autojunk=False).get_opcodes():
                if tag == "equal":
                    add("=", x[i1:i2])
                else:
                    add("-", x[i1:i2])
                    add("+", y[j1:j2])
            break
    add("=", old[len(old) - tail:])
    return out


def diff_html(old: str, new: str) -> str:
    parts = []
    for op, text in char_diff(old, new):
        shown = html.escape(printable(text))
        parts.append(shown if op == "=" else f"<del>{shown}</del>" if op == "-" else f"<ins>{shown}</ins>")
    return f'<pre class="diff">{"".join(parts)}</pre>'


# ---------------------------------------------------------------------------------------------
# Decisions: approve or reject per entry


def decision_id(rel: str, key: str, value: str) -> str:
    """What a decision names: the file (relative to the translations), the key, the value's digest."""
    return json.dumps([rel, key, review_state.value_digest(value)], ensure_ascii=False)


@dataclass
class Applied:
    approved: int = 0
    rejected: int = 0
    findings: list[Finding] = field(default_factory=list)  # each decision not applied, and why


MAX_DECISIONS = 10_000


def apply_decisions(translations: Path, data: bytes, by: str, source: str = "<decisions>",
                    today: datetime.date | None = None) -> Applied:
    """Write the report's decisions (`{"decisions": [{"file", "key", "value", "decision", "note"}]}`)
    into the review sidecars. Untrusted input: a file is named relative to `translations` and must
    be a translation file there (no `..`, no link); a decision whose value changed since is skipped."""
    translations = Path(translations)
    done = Applied()
    if len(data) > MAX_FILE_BYTES:
        done.findings.append(Finding("error", "decisions-file", f"larger than {MAX_FILE_BYTES} bytes", path=source))
        return done
    try:
        found = json.loads(data.decode("utf-8"))
        items = found["decisions"] if isinstance(found, dict) else None
        if not isinstance(items, list):
            raise ValueError('no "decisions" list')
    except (UnicodeDecodeError, ValueError, KeyError, RecursionError) as e:
        done.findings.append(Finding("error", "decisions-file", f"not a decisions file ({str(e)[:200]}); save it "
                                     "again from the review report", path=source))
        return done
    values: dict[str, dict[str, str]] = {}
    for n, item in enumerate(items[:MAX_DECISIONS], 1):
        where = f"{source} decision {n}"
        if not (isinstance(item, dict) and all(isinstance(item.get(k), str) for k in ("file", "key", "value", "decision"))
                and item["decision"] in ("approve", "reject")):
            done.findings.append(Finding("error", "decisions-file", f"{where} is not a decision (file, key, value, "
                                         "decision: approve or reject)", path=source))
            continue
        rel = item["file"]
        parts = PurePosixPath(rel).parts
        if (not rel.endswith(".json") or rel.startswith("/") or "\\" in rel or any(p in ("..", ".") for p in parts)
                or any(bad_name(p) for p in parts) or rel.endswith((".fuzzy.json", ".stale.json", ".review.json"))):
            done.findings.append(Finding("error", "decisions-file", f"{where} names {printable(rel)!r}, which is no "
                                         "translation file under the translations folder", path=source))
            continue
        main = translations / rel
        try:
            if rel not in values:
                check_no_links(main, translations)
                parsed = parse_translation_file(main, translations)
                values[rel] = {p.key: p.value for p in parsed.pairs if isinstance(p.value, str)} if parsed.usable else {}
            value = values[rel].get(item["key"], "")
            if not value.strip() or review_state.value_digest(value) != item["value"]:
                done.findings.append(Finding("warning", "decision-outdated", f"{where}: the translation changed since "
                                             "the report (or is empty now); review it again", path=str(main),
                                             key=printable(item["key"])))
                continue
            status = "approved" if item["decision"] == "approve" else "rejected"
            note = item.get("note", "") if isinstance(item.get("note", ""), str) else ""
            review_state.mark(main, item["key"], value, by, translations, today, status, note[:2000])
        except (BadReviewFile, UnsafeFile, OSError) as e:
            done.findings.append(Finding("error", "decisions-file", f"{where}: {printable(str(e))[:300]}", path=str(main)))
            continue
        if status == "approved":
            done.approved += 1
        else:
            done.rejected += 1
    if len(items) > MAX_DECISIONS:
        done.findings.append(Finding("warning", "decisions-file", f"only the first {MAX_DECISIONS} decisions were read",
                                     path=source))
    return done


# ---------------------------------------------------------------------------------------------
# The HTML report

_STYLE = """
body{font:16px/1.55 system-ui,"Noto Sans CJK SC",sans-serif;margin:0;color:#1f2430;background:#f4f5f8}
body>header{background:#1f2430;color:#fff;padding:.8rem 1.2rem}body>header code{color:#cfe0ff}
main{max-width:90rem;margin:0 auto;padding:1rem}
h2{font-size:1.1rem;margin:1.6rem 0 .4rem}h2 code{font-weight:normal}
.entry{background:#fff;border:1px solid #dde1e8;border-radius:6px;margin:.8rem 0;padding:.6rem .9rem}
.entry>header{color:#5c6478;padding:0;font-size:13px;display:flex;gap:.8rem;align-items:center;flex-wrap:wrap}
.cols{display:grid;grid-template-columns:1fr 1fr 1fr;gap:.8rem}
.cols>div{min-width:0}.entry h3{font-size:12px;text-transform:uppercase;color:#5c6478;margin:.3rem 0}
.old{background:#fdf1f0;padding:.2rem .5rem;border-radius:4px}.new{background:#eef8f1;padding:.2rem .5rem;border-radius:4px}
pre.raw,pre.diff{white-space:pre-wrap;overflow-wrap:anywhere;font-size:13px;background:#f7f7f9;padding:.3rem;margin:.2rem 0}
pre.diff del{background:#f9c9c4;color:#7a1c12;text-decoration:line-through}pre.diff ins{background:#bfe8cb;color:#0f5223;text-decoration:none}
.status{font-size:12px;padding:0 .4rem;border-radius:3px;background:#eef0f4}
.status.invalid{background:#8e44ad;color:#fff}.status.untranslated{background:#c9302c;color:#fff}.status.translated{background:#2e7d4a;color:#fff}
.status.repaired{background:#8a5200;color:#fff}.status.stale{background:#5c6478;color:#fff}.status.fuzzy{background:#e3a21a;color:#222}
ul.findings{margin:.4rem 0 0;padding-left:1.2rem}li.error{color:#a3271b}li.warning{color:#7a4f00}
.none,.note{color:#5c6478;font-style:italic}
.summary td,.summary th{padding:.1rem .6rem;text-align:left}
.filters{display:flex;gap:1rem;flex-wrap:wrap;align-items:center;background:#fff;border:1px solid #dde1e8;border-radius:6px;padding:.5rem .9rem;position:sticky;top:0;z-index:1}
.decide{margin-left:auto;display:flex;gap:.4rem;align-items:center}
.decide button{font:inherit;font-size:13px;border:1px solid #9aa3b5;background:#fff;border-radius:4px;padding:.1rem .6rem;cursor:pointer}
.entry[data-decision=approved]{border-left:5px solid #2e7d4a}.entry[data-decision=rejected]{border-left:5px solid #c9302c}
.entry[data-decision=approved] .approve,.entry[data-decision=rejected] .reject{background:#1f2430;color:#fff}
.decision{font-size:12px}
#decisions{display:none;background:#fff;border:1px solid #dde1e8;border-radius:6px;padding:.6rem .9rem;margin:.8rem 0}
#decisions textarea{width:100%;height:8rem;font:12px monospace}
[hidden]{display:none!important}
@media(max-width:900px){.cols{grid-template-columns:1fr}}
"""

# Filters and decisions. Reads only data-* attributes the report wrote; writes only classes,
# `hidden` and the decisions file (a Blob download: nothing leaves the machine).
_SCRIPT = r"""
(function () {
  var entries = Array.prototype.slice.call(document.querySelectorAll("section.entry"));
  var decided = {};
  function $(id) { return document.getElementById(id); }
  function filter() {
    var errorsOnly = $("f-errors").checked, page = $("f-page").value, lang = $("f-lang").value, d = $("f-decision").value;
    var shown = 0;
    entries.forEach(function (e) {
      var ok = (!errorsOnly || e.dataset.errors !== "0") && (!page || e.dataset.page === page) &&
        (!lang || e.dataset.lang === lang) && (!d || (e.dataset.decision || "undecided") === d);
      e.hidden = !ok; if (ok) shown++;
    });
    document.querySelectorAll("h2.file").forEach(function (h) {
      var any = entries.some(function (e) { return !e.hidden && e.dataset.file === h.dataset.file; });
      h.hidden = !any && !!(errorsOnly || page || lang || d);
    });
    $("f-count").textContent = shown + " of " + entries.length + " entries shown";
  }
  function render() {
    var list = Object.keys(decided).map(function (k) { return decided[k]; });
    $("decisions").style.display = list.length ? "block" : "none";
    $("d-count").textContent = list.length + (list.length === 1 ? " decision" : " decisions");
    $("d-json").value = JSON.stringify({decisions: list}, null, 1);
  }
  entries.forEach(function (e) {
    e.querySelectorAll(".decide button").forEach(function (b) {
      b.addEventListener("click", function () {
        var id = e.dataset.id, choice = b.dataset.decision;
        if (decided[id] && decided[id].decision === choice) { delete decided[id]; e.dataset.decision = e.dataset.was || ""; }
        else {
          var info = JSON.parse(id);
          decided[id] = {file: info[0], key: info[1], value: info[2], decision: choice};
          e.dataset.decision = choice === "approve" ? "approved" : "rejected";
        }
        render(); filter();
      });
    });
  });
  ["f-errors", "f-page", "f-lang", "f-decision"].forEach(function (id) { $(id).addEventListener("change", filter); });
  $("d-save").addEventListener("click", function () {
    var a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([$("d-json").value + "\n"], {type: "application/json"}));
    a.download = "review-decisions.json"; document.body.appendChild(a); a.click(); a.remove();
  });
  filter();
})();
"""


def _digest(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def _findings_html(items: list[Finding]) -> str:
    if not items:
        return ""
    rows = "".join(
        f'<li class="{html.escape(f.severity)}">{html.escape(f.severity)}: {html.escape(printable(f.message))} '
        f"<code>{html.escape(f.code)}</code></li>"
        for f in items
    )
    return f'<ul class="findings">{rows}</ul>'


def _options(label: str, ident: str, values: list[str]) -> str:
    opts = "".join(f'<option value="{html.escape(v, quote=True)}">{html.escape(v)}</option>' for v in values)
    return f'<label>{label} <select id="{ident}"><option value="">all</option>{opts}</select></label>'


def _decision_html(review: Review | None) -> str:
    if review is None:
        return ""
    note = f": {html.escape(printable(review.note))}" if review.note else ""
    return (f'<span class="decision">{html.escape(review.status)} by {html.escape(printable(review.by))} '
            f"on {html.escape(printable(review.date))}{note}</span>")


def _mark_html(review: Review | None) -> str:
    if review is None:
        return '<p class="none">(no mark)</p>'
    verb = "rejected" if review.status == "rejected" else "reviewed"
    return (f"<p>{verb} by <strong>{html.escape(printable(review.by))}</strong> on "
            f"{html.escape(printable(review.date))}</p>")


def report_html(changes: list[ChangedFile], base: str) -> str:
    counts = summary(changes)
    pages = sorted({c.page for c in changes if c.entries and c.page})
    langs = sorted({c.lang for c in changes if c.entries and c.lang})
    csp = (f"default-src 'none'; style-src 'sha256-{_digest(_STYLE)}'; script-src 'sha256-{_digest(_SCRIPT)}'; "
           "img-src data:; form-action 'none'; base-uri 'none'")
    parts = [
        "<!doctype html>",
        f'<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width">',
        f"<title>Translation review since {html.escape(base)}</title><style>{_STYLE}</style></head><body>",
        f"<header><strong>Translation review</strong> · changes since <code>{html.escape(base)}</code></header><main>",
        f"<p>{counts.entries} changed blocks in {counts.files} files · {counts.errors} errors · {counts.warnings} warnings"
        + (f" · <strong>{counts.marks} review marks changed</strong>" if counts.marks else "") + "</p>",
    ]
    if changes:
        parts.append('<table class="summary"><tr><th>file</th><th>blocks</th><th>errors</th></tr>')
        for i, c in enumerate(changes):
            parts.append(f'<tr><td><a href="#f{i}">{html.escape(c.local)}</a></td><td>{len(c.entries)}</td>'
                         f"<td>{sum(len(e.errors) for e in c.entries)}</td></tr>")
        parts.append("</table>")
        parts.append(
            '<div class="filters"><label><input type="checkbox" id="f-errors"> errors only</label>'
            + _options("page", "f-page", pages) + _options("language", "f-lang", langs)
            + _options("decision", "f-decision", ["undecided", "approved", "rejected"])
            + '<span id="f-count"></span></div>'
            '<div id="decisions"><strong id="d-count"></strong> · <button type="button" id="d-save">Save '
            "review-decisions.json</button> then run <code>labml-site review --apply review-decisions.json</code>"
            " (it records them in the review files, which <code>review</code> and <code>stats</code> read)"
            '<details><summary>the decisions, as JSON</summary>'
            '<textarea id="d-json" readonly aria-label="the decisions, as JSON"></textarea></details></div>'
        )
    for i, c in enumerate(changes):
        parts.append(f'<h2 class="file" id="f{i}" data-file="{i}"><code>{html.escape(c.local)}</code> · {html.escape(c.lang)}</h2>')
        parts.append(_findings_html(c.file_findings))
        for m in c.marks:
            parts.append(
                f'<section class="mark" data-kind="review-mark"><header><span>review mark {m.kind}</span>'
                f"<span>{html.escape(c.local)}:{m.line}</span></header><div class=\"cols\">"
                f'<div><h3>Key</h3><pre class="raw">{html.escape(printable(m.key))}</pre></div>'
                f"<div><h3>Before</h3><div class=\"old\">{_mark_html(m.before)}</div></div>"
                f"<div><h3>After</h3><div class=\"new\">{_mark_html(m.after)}"
                + ("" if m.after is None else f'<p class="note">{"for the translation the file holds now" if m.current else "for no translation the file holds (outdated)"}</p>')
                + "</div></div></div></section>"
            )
        for e in c.entries:
            lang = html.escape(c.lang)
            ident = html.escape(decision_id(c.rel, e.key, e.after), quote=True)
            was = e.decision.status if e.decision else ""
            decide = ("" if not e.after.strip() or not c.rel else
                      f'<span class="decide">{_decision_html(e.decision)}'
                      '<button type="button" class="approve" data-decision="approve">Approve</button>'
                      '<button type="button" class="reject" data-decision="reject">Reject</button></span>')
            parts.append(
                f'<section class="entry" data-kind="{e.kind}" data-file="{i}" data-page="{html.escape(c.page, quote=True)}" '
                f'data-lang="{lang}" data-errors="{len(e.errors)}" data-id="{ident}" data-decision="{was}" data-was="{was}">'
                f"<header><span>{e.kind}</span><span>{html.escape(c.local)}:{e.line}</span>"
                f'<span class="status {html.escape(e.new.status)}">{html.escape(e.new.status)}</span>{decide}</header>'
                '<div class="cols">'
                f'<div><h3>English</h3><div lang="en">{e.english}</div></div>'
                f'<div><h3>Before</h3><div class="old" lang="{lang}">{e.old.html}</div></div>'
                f'<div><h3>After</h3><div class="new" lang="{lang}">{e.new.html}</div>{_findings_html(e.new.findings)}</div>'
                "</div>"
                f'<details{" open" if e.kind == "changed" else ""}><summary>Changes, character by character</summary>'
                f'<div lang="{lang}">{diff_html(e.before, e.after)}</div></details>'
                "</section>"
            )
    if not changes:
        parts.append("<p>No translation file changed.</p>")
    parts.append(f"</main><script>{_SCRIPT}</script></body></html>\n")
    return "".join(parts)


def write_report(changes: list[ChangedFile], out: Path, base: str) -> None:
    out = Path(out)
    # (text from the files may hold lone surrogates, which JSON allows and UTF-8 does not)
    write_atomic(out, report_html(changes, base).encode("utf-8", "backslashreplace"), out.parent)
