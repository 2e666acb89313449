"""Authors' SVG figures, published per language and theme.

Any SVG the prose shows (`![alt](figures/x.svg)`) is published by the builder, not copied:

* **Dark mode.** A `<style>` is added after the `<svg>` tag: inside
  `@media (prefers-color-scheme: dark)`, each colour the figure uses in a `fill`, `stroke`,
  `stop-color` or `color` attribute gets its dark counterpart, chosen by attribute selector
  (`[fill="#ffffff"] { fill: #0d1117 !important }`), so the figure's own markup is untouched.
  The counterpart keeps the hue and saturation and mirrors the lightness (white paper becomes the
  page's dark background, dark ink becomes light, a light-to-dark colour scale stays a scale of the
  same hue, reversed), so contrast between neighbours is kept. Text without a fill of its own is
  drawn in light ink. A browser shows an SVG image in the page's colour scheme, so the figure
  follows the reader's theme, as the page does, with no script.
* **Labels.** Each `<text>`/`<tspan>` text, `<title>` and `<desc>` is a translation key of the
  page that shows the figure, next to the page's own keys in its translation file (the key is the
  label's text, a value its translation as plain text), so zh and ru pages show their figures
  translated; a label with no translation stays as drawn. Image alt texts are keys the same way
  (`localize`). `extract` offers these keys to translators (`figure_keys`).
  Two kinds of label are not keys: one without a letter (a number, `(`, `+`, `␣`), which reads
  the same in every language, and one inside an element marked `translate="no"`, as in HTML (the
  mark is inherited by descendants; `translate="yes"` inside turns it back on): an author marks
  so what must stay as drawn, such as the tokens of an example or sampled text.
"""
from __future__ import annotations

import colorsys
import html
import re
from typing import Callable, Iterable

from ..lazy_re import lazy


_COLOUR_ATTR = lazy(r'\b(fill|stroke|stop-color|color)="([^"]+)"')
_HEX = lazy(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
_NAMED = {"white": "#ffffff", "black": "#000000", "gray": "#808080", "grey": "#808080", "lightgray": "#d3d3d3",
          "lightgrey": "#d3d3d3", "darkgray": "#a9a9a9", "red": "#ff0000", "blue": "#0000ff", "green": "#008000"}
_SVG_OPEN = lazy(r"<svg\b[^>]*>")
DARK_BACKGROUND = (0x0D, 0x11, 0x17)  # the theme's dark --bg


def _rgb(value: str) -> tuple[int, int, int] | None:
    value = _NAMED.get(value.strip().lower(), value.strip())
    if not _HEX.fullmatch(value):
        return None
    digits = value[1:]
    if len(digits) == 3:
        digits = "".join(c * 2 for c in digits)
    return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)


def dark_colour(value: str) -> str | None:
    """The colour's counterpart on a dark page: same hue and saturation, lightness mirrored, from
    the theme's dark background (for white) up to near-white (for black)."""
    rgb = _rgb(value)
    if rgb is None:
        return None
    h, l, s = colorsys.rgb_to_hls(*(c / 255 for c in rgb))
    floor = colorsys.rgb_to_hls(*(c / 255 for c in DARK_BACKGROUND))[1]
    l2 = floor + (0.93 - floor) * (1 - l)
    r, g, b = colorsys.hls_to_rgb(h, l2, s * (0.85 if s > 0.3 else 1))
    if l >= 0.98 and s < 0.05:
        r, g, b = (c / 255 for c in DARK_BACKGROUND)
    return "#%02x%02x%02x" % tuple(round(c * 255) for c in (r, g, b))


def _dark_style(svg: str) -> str:
    rules = []
    for attr, value in sorted(set(_COLOUR_ATTR.findall(svg))):
        dark = dark_colour(value)
        if dark:
            prop = "color" if attr == "color" else attr
            rules.append(f'[{attr}="{value}"]{{{prop}:{dark} !important}}')
    rules.append("text:not([fill]),tspan:not([fill]){fill:#e6edf3}")
    return "<style>@media (prefers-color-scheme: dark){" + "".join(rules) + "}</style>"


_TAG = lazy(r"<([/?!]?)([A-Za-z][\w:.-]*)((?:[^<>\"']|\"[^\"<]*\"|'[^'<]*')*)>", re.S)
_TRANSLATE_ATTR = lazy(r"""(?:^|\s)translate\s*=\s*(?:"\s*(\w*)\s*"|'\s*(\w*)\s*'|(\w+))""", re.I)
_LABEL_TAGS = frozenset({"text", "tspan", "title", "desc"})


def _translate_attr(attrs: str) -> bool | None:
    """`translate="no"` → False, `translate="yes"` (or empty, as in HTML) → True, absent → None."""
    m = _TRANSLATE_ATTR.search(attrs)
    if m is None:
        return None
    return (m.group(1) or m.group(2) or m.group(3) or "").lower() != "no"


def has_letter(label: str) -> bool:
    """Whether a label has anything to translate: a number or a sign reads the same everywhere."""
    return any(c.isalpha() for c in label)


# An unclosed comment runs to the end, as a parser reads it (and so each is scanned once).
_COMMENT = lazy(r"<!--.*?(?:-->|\Z)|<!\[CDATA\[.*?(?:\]\]>|\Z)", re.S)


def _blank_comments(svg: str) -> str:
    """Comments and CDATA sections as spaces of the same length, so positions keep their meaning."""
    return _COMMENT.sub(lambda m: " " * len(m.group(0)), svg) if "<!" in svg else svg


def _label_spans(svg: str) -> list[tuple[int, int, str]]:
    """(start, end, label) of each translatable label's text: the text right after the opening
    tag of a `<text>`, `<tspan>`, `<title>` or `<desc>` outside any `translate="no"`, with a
    letter in it. Elements are tracked on a stack (a closing tag pops up to its element), so the
    mark is inherited as in HTML."""
    spans = []
    stack: list[tuple[str, bool]] = []  # (element name, translatable)
    svg = _blank_comments(svg)
    for m in _TAG.finditer(svg):
        kind, name, attrs = m.group(1), m.group(2), m.group(3)
        if kind in ("?", "!"):
            continue
        if kind == "/":
            for depth in range(len(stack) - 1, -1, -1):
                if stack[depth][0] == name:
                    del stack[depth:]
                    break
            continue
        own = _translate_attr(attrs)
        translatable = (stack[-1][1] if stack else True) if own is None else own
        if attrs.rstrip().endswith("/"):
            continue
        stack.append((name, translatable))
        if not translatable or name.split(":")[-1] not in _LABEL_TAGS:
            continue
        end = svg.find("<", m.end())
        if end < 0:
            continue
        label = " ".join(html.unescape(svg[m.end():end]).split())
        if has_letter(label):
            spans.append((m.end(), end, label))
    return spans


def svg_labels(svg: str) -> list[str]:
    """The texts a translator can translate: labels, the title and the description, in order."""
    return list(dict.fromkeys(label for _, _, label in _label_spans(svg)))


def themed_svg(svg: str, translate: Callable[[str], str | None] | None = None) -> str:
    """The figure as published: dark-mode colours added, labels translated by `translate` (label
    → translation or None)."""
    if translate is not None:
        parts, last = [], 0
        for start, end, label in _label_spans(svg):
            found = translate(label)
            if found:
                parts += [svg[last:start], html.escape(found, quote=False)]
                last = end
        svg = "".join(parts) + svg[last:]
    opening = _SVG_OPEN.search(svg)
    if opening is None:
        return svg
    return svg[: opening.end()] + _dark_style(svg) + svg[opening.end():]


def published_svg(text: str, asset: str, translate: Callable[[str], str | None] | None = None) -> str | None:
    """The figure as the site publishes it in a language: sanitised (svg_safety.py: nothing that
    could run script or load from elsewhere), themed and labelled (`themed_svg`); None for a
    figure that is refused. The site's figure files and the notebooks' attachments are this."""
    from . import svg_safety  # (here: a site without SVG figures never needs its XML parser, 3 ms to import)

    svg = svg_safety.safe_svg(text, asset)
    return None if svg is None else themed_svg(svg, translate)


_ALT = re.compile(r'<img\b[^>]*?\balt="([^"]*)"')


def image_alts(htmls: Iterable[str]) -> list[str]:
    """The alt texts of the images in some rendered placeholders (extra translation keys)."""
    return [html.unescape(alt) for h in htmls for alt in _ALT.findall(h) if has_letter(html.unescape(alt))]


def figure_keys(placeholders: Iterable[str], assets: Iterable[str], labels: Callable[[str], list[str]]) -> list[str]:
    """A page's extra translation keys: its images' alt texts, then its SVG figures' labels
    (`labels(asset)`: `svg_labels` of the figure's text, read by the caller)."""
    keys = image_alts(placeholders)
    for asset in assets:
        if asset.lower().endswith(".svg"):
            keys.extend(labels(asset))
    return list(dict.fromkeys(keys))
