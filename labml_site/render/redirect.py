"""A redirect page: what a source with front matter `redirect: URL` and no prose publishes at its
URL, so that links to it (the original site's, the translation status table's) keep working."""
from __future__ import annotations

import html


def redirect_html(target: str, title: str, lang: str) -> str:
    """A small page that sends the reader to `target` (checked by `typeset.page.redirect_target`:
    http(s) or relative): a meta refresh, a canonical link, and a plain link for everyone else."""
    url = html.escape(target, quote=True)
    name = html.escape(title or target)
    return (
        f'<!doctype html>\n<html lang="{html.escape(lang, quote=True)}">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{name}</title>\n"
        f'<meta http-equiv="refresh" content="0; url={url}">\n'
        f'<link rel="canonical" href="{url}">\n<meta name="robots" content="noindex">\n</head>\n'
        f'<body>\n<p>{name}: <a href="{url}">{url}</a></p>\n</body>\n</html>\n'
    )
