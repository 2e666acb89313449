"""Redirect pages: what a source with front matter `redirect: URL` and no prose publishes at its
URL, and what is published at an old URL (`redirects.yaml`, or a page whose translations keep the
path the old site had before its source changed case), so that links to them keep working."""
from __future__ import annotations

import html
import posixpath
from dataclasses import dataclass, replace
from typing import Iterable

from ..findings import Finding
from ..read.redirects import RedirectRule
from ..read.structure import (RESERVED_AT_ROOT, RESERVED_FOLDERS, RESERVED_PER_LANGUAGE, SiteFiles,
                              SourceFile, page_outputs, relative_url)
from ..read.urls import scheme_of, url_problem


def redirect_html(target: str, title: str, lang: str, script: str = "") -> str:
    """A small page that sends the reader to `target` (checked by `typeset.page.redirect_target`
    or `plan_redirects`: http(s) or relative): a meta refresh, a canonical link, and a plain link
    for everyone else. `script`: the theme's `static/redirect.js` relative to the page, which
    carries a `#section-N` over (a meta refresh drops it; the site's policy allows no inline script)."""
    url = html.escape(target, quote=True)
    name = html.escape(title or target)
    carry = f'<script src="{html.escape(script, quote=True)}"></script>\n' if script else ""
    return (
        f'<!doctype html>\n<html lang="{html.escape(lang, quote=True)}">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{name}</title>\n"
        f'<link rel="canonical" href="{url}">\n{carry}'
        f'<meta http-equiv="refresh" content="0; url={url}">\n'
        f'<meta name="robots" content="noindex">\n</head>\n'
        f'<body>\n<p>{name}: <a href="{url}">{url}</a></p>\n</body>\n</html>\n'
    )


REDIRECT_SCRIPT = "static/redirect.js"  # in the theme's static files, at the site's root


# ---------------------------------------------------------------------------------------------
# Which old paths get a redirect page


@dataclass(frozen=True)
class Redirect:
    """A redirect page written at `old` under every language's root."""

    old: str  # output path, e.g. "RWKV/index.html"
    target: str  # a page's output path under the same root (with any #fragment), or an http(s) URL
    rel: str = ""  # the target page's source, whose title the redirect page shows ("" outside)

    def href(self) -> str:
        """The target as the redirect page links it: relative, so the site works under any path."""
        if self.rel == "" and scheme_of(self.target):
            return self.target
        path, _, fragment = self.target.partition("#")
        return relative_url(self.old, path) + (f"#{fragment}" if fragment else "")


def plan_redirects(
    rules: Iterable[RedirectRule],
    by_case: dict[str, str],
    files: SiteFiles,
    published: dict[str, str],
    langs: Iterable[str],
    case_sensitive: bool = True,
    rules_path: str = "",
) -> tuple[tuple[Redirect, ...], list[Finding]]:
    """The redirects to write, and a finding for each that is refused or left out.

    `published`: source rel → URL of every page a language tree has. An old path that is an output
    of the site is left as it is (the page wins); on a file system that does not tell case apart
    (`case_sensitive` False), neither is one that differs from an output only in case: writing
    it would overwrite that output (and the server answers the old path with it anyway)."""
    urls = {url: rel for rel, url in published.items()}
    folders = {(f.rel + "/" if f.rel else ""): f.url for f in files.folders.values()}
    taken = {out for page in files.pages for out in page_outputs(page)} | set(folders.values())
    taken |= set(RESERVED_PER_LANGUAGE) | set(RESERVED_AT_ROOT)
    folded = {t.casefold(): t for t in taken}
    roots = {*(lang for lang in langs), *RESERVED_FOLDERS}
    out: dict[str, Redirect] = {}
    findings: list[Finding] = []

    def refuse(rule: RedirectRule | None, old: str, why: str, severity: str = "error") -> None:
        findings.append(Finding(severity, "redirect", f"{old}: {why}", rules_path if rule else "", rule.line if rule else 0))

    wanted = [(None, old, target) for old, target in sorted(by_case.items())]
    wanted += [(rule, rule.old, rule.target) for rule in rules]
    for rule, old, target in wanted:
        if old.split("/", 1)[0] in roots and "/" in old:
            refuse(rule, old, f"the folder {old.split('/', 1)[0]}/ is the builder's own; old paths are under each language's root")
            continue
        if old in taken:
            if rule is not None:  # (a case move whose path is the page's own needs nothing)
                refuse(rule, old, "is a page or file of this site, which stays; remove the redirect", "warning")
            continue
        if not case_sensitive and (old.casefold() in folded or old.casefold() in {o.casefold() for o in out}):
            other = folded.get(old.casefold(), old)
            refuse(rule, old, f"differs from {other} only in case, and the output folder's file system does not "
                              "tell case apart: not written (the server answers it with that file); "
                              "build on a case-sensitive file system to publish it", "warning")
            continue
        resolved, problem = _resolve(target, urls, folders, published)
        if problem:
            refuse(rule, old, f"its target {target!r} {problem}")
            continue
        out.setdefault(old, replace(resolved, old=old))
    return tuple(out[old] for old in sorted(out)), findings


def _resolve(target: str, urls: dict[str, str], folders: dict[str, str], published: dict[str, str]) -> tuple[Redirect | None, str | None]:
    """The target as a page of the site (by source path or URL) or an outside URL."""
    problem = url_problem(target)
    if problem:
        return None, problem
    if scheme_of(target):
        return Redirect("", target), None
    path, hash_, fragment = target.partition("#")
    path = path.lstrip("/")
    suffix = hash_ + fragment
    if path in published:
        return Redirect("", published[path] + suffix, path), None
    if path in urls:
        return Redirect("", path + suffix, urls[path]), None
    folder = path if path.endswith("/") or not path else path + "/"
    if folder in folders:
        url = folders[folder]
        return Redirect("", url + suffix, urls.get(url, "")), None
    return None, "is not a page of this site: name its source (rwkv/__init__.py), its URL (rwkv/index.html) or an http(s) URL"
