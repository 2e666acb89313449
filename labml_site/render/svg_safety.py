"""SVG figures published safely: what a figure may hold when it is opened on its own.

An SVG shown by `<img>` runs nothing, but the same file opened directly (a reader's "open image in
new tab", a link to it) is a document of the site's origin, and in `translate` of the editor's,
which holds the session's token. A pull request can add or change a figure, so each one is
checked when it is published and what could run script or load from elsewhere is removed:

* elements outside an allow-list of SVG's drawing, text, paint and filter elements (so `script`,
  `foreignObject`, `iframe`, and any element of the XHTML or MathML namespaces, with their
  content); elements of other namespaces (an editor's metadata: Inkscape, RDF) are inert and kept;
* event handler attributes (`on…=`), `xml:base`, animations that set a link or a handler;
* references outside the figure: `href`/`xlink:href` and CSS `url(…)` may name a part of the
  figure (`#id`) or a file of the site by a relative path that stays inside it, an `<image>` may
  also embed a raster image (`data:image/png;base64,…`), and a link (`<a href>`) may also go to an
  http(s) URL; CSS `@import`, `expression()`, `-moz-binding` and `behavior` go with their rule's
  element or attribute;
* processing instructions (`<?xml-stylesheet …?>`) and the document type (whose entities could
  say anything).

A figure with nothing to remove is published byte for byte as written. One that is not
well-formed XML, not UTF-8 or larger than `MAX_SVG_BYTES` is not published at all (a browser
would not show it as a figure either). `check_svg` says what was removed, for the build's report.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from html import escape
from xml.parsers import expat

from ..read.urls import SCHEME_RE, browser_reads, url_problem

MAX_SVG_BYTES = 32 * 1024 * 1024

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
XML_NS = "http://www.w3.org/XML/1998/namespace"
# Namespaces whose elements a browser makes live inside an SVG document.
_LIVE_NAMESPACES = frozenset({"http://www.w3.org/1999/xhtml", "http://www.w3.org/1998/Math/MathML"})

SVG_ELEMENTS = frozenset("""
svg g defs symbol use switch a title desc metadata view
path rect circle ellipse line polyline polygon text tspan textPath image marker pattern
linearGradient radialGradient stop clipPath mask style filter
feBlend feColorMatrix feComponentTransfer feComposite feConvolveMatrix feDiffuseLighting
feDisplacementMap feDistantLight feDropShadow feFlood feFuncA feFuncB feFuncG feFuncR
feGaussianBlur feImage feMerge feMergeNode feMorphology feOffset fePointLight
feSpecularLighting feSpotLight feTile feTurbulence
animate animateTransform animateMotion mpath set
""".split())
_ANIMATIONS = frozenset({"animate", "animateTransform", "animateMotion", "set"})
_EMBEDS_IMAGES = frozenset({"image", "feImage"})
_RASTER_DATA_RE = re.compile(r"data:image/(?:png|jpeg|jpg|gif|webp);base64,[A-Za-z0-9+/=\s]*\Z", re.IGNORECASE)
_CSS_URL_RE = re.compile(r"url\(\s*(?:\"([^\"]*)\"|'([^']*)'|([^)]*))\s*\)", re.IGNORECASE)
_CSS_ACTIVE_RE = re.compile(r"@import|expression\s*\(|-moz-binding|\bbehavior\s*:|javascript:", re.IGNORECASE)
# A CSS escape (`\75 rl(` is `url(`) can hide what the rules above look for: CSS holding one is
# refused rather than decoded (figures' CSS has no use for them; a comment cannot hide a name).


_ENCODING_RE = re.compile(r"<\?xml[^>]*?\bencoding\s*=\s*[\"']([^\"']*)[\"']")


@dataclass
class SvgCheck:
    """What `check_svg` found: the figure to publish (None: not published) and what was removed."""

    svg: str | None
    removed: list[str] = field(default_factory=list)
    refused: str = ""  # why nothing is published


def _own_reference(url: str, folder: str) -> bool:
    """A part of the figure (`#id`) or a file of the site by a relative path that stays in it."""
    if url.startswith("#"):
        return True
    if browser_reads(url) != url or "\\" in url or not url or SCHEME_RE.match(url) or url.startswith("/"):
        return False
    if re.search(r"[\x00-\x20\x7f]", url):
        return False
    path = re.split(r"[?#]", url, maxsplit=1)[0]
    joined = posixpath.normpath(posixpath.join(folder, path)) if path else folder or "."
    return not (joined == ".." or joined.startswith("../") or joined.startswith("/"))


def _css_problem(css: str, folder: str) -> str | None:
    """Why this CSS (a `style` attribute or element, or a presentation attribute) cannot stay."""
    active = _CSS_ACTIVE_RE.search(css)
    if active:
        return f"CSS {active.group(0).strip()!r}"
    if "\\" in css:
        return "a CSS escape (\\…)"
    for m in _CSS_URL_RE.finditer(css):
        target = next((g for g in m.groups() if g is not None), "").strip()
        if not _own_reference(target, folder):
            return f"CSS url({target[:60]}) outside the figure"
    return None


class _Checker:
    """One pass of expat over the figure: what to drop, and (second pass) the figure without it."""

    def __init__(self, folder: str, rebuild: bool) -> None:
        self.folder = folder
        self.rebuild = rebuild
        self.removed: list[str] = []
        self.out: list[str] = []
        self.namespaces: list[dict[str, str]] = [{"xml": XML_NS}]
        self.dropping = 0  # depth inside a removed element
        self.stack: list[tuple[str, bool]] = []  # (name, is a style element)
        self.style_text: list[str] | None = None
        self.in_cdata = False

    # -- names --------------------------------------------------------------------------------

    def _resolve(self, name: str, is_attribute: bool = False) -> tuple[str, str]:
        prefix, _, local = name.rpartition(":")
        if not prefix:
            return ("" if is_attribute else self._lookup("")), local
        return self._lookup(prefix), local

    def _lookup(self, prefix: str) -> str:
        for scope in reversed(self.namespaces):
            if prefix in scope:
                return scope[prefix]
        return SVG_NS if prefix == "" else "?"  # an SVG without xmlns is read as SVG (strictest)

    def _note(self, what: str) -> None:
        if what not in self.removed:
            self.removed.append(what)

    # -- handlers ----------------------------------------------------------------------------

    def start(self, name: str, attrs: list[str]) -> None:
        pairs = list(zip(attrs[::2], attrs[1::2]))
        scope = {}
        for key, value in pairs:
            if key == "xmlns":
                scope[""] = value
            elif key.startswith("xmlns:"):
                scope[key[6:]] = value
        self.namespaces.append(scope)
        if self.dropping:
            self.dropping += 1
            return
        ns, local = self._resolve(name)
        why = None
        if ns in _LIVE_NAMESPACES:
            why = f"<{name}> (an HTML or MathML element)"
        elif ns == SVG_NS and local not in SVG_ELEMENTS:
            why = f"<{name}>"
        elif ns == SVG_NS and local in _ANIMATIONS:
            target = dict(pairs).get("attributeName", "").strip().lower()
            if target.endswith("href") or target.startswith("on") or target in ("style", "xml:base"):
                why = f"<{name} attributeName=\"{target}\">"
        if why:
            self._note(why)
            self.dropping = 1
            return
        kept = []
        for key, value in pairs:
            problem = self._attribute_problem(name, ns, local, key, value)
            if problem:
                self._note(problem)
            else:
                kept.append((key, value))
        is_style = ns == SVG_NS and local == "style"
        self.stack.append((name, is_style))
        if is_style:
            self.style_text = []
        if self.rebuild:
            self.out.append("<" + name + "".join(f' {k}="{_attr(v)}"' for k, v in kept) + ">")

    def _attribute_problem(self, element: str, ns: str, local: str, key: str, value: str) -> str | None:
        if key == "xmlns" or key.startswith("xmlns:"):
            return None
        attr_ns, attr_local = self._resolve(key, is_attribute=True)
        lowered = attr_local.lower()
        if lowered.startswith("on"):
            return f"the event handler {key}= on <{element}>"
        if attr_ns == XML_NS and lowered == "base":
            return f"xml:base= on <{element}>"
        if lowered == "href" and attr_ns in ("", XLINK_NS):
            url = value.strip()
            if local == "a" and ns == SVG_NS:
                if url.startswith("#") or url_problem(url) is None:
                    return None
            elif _own_reference(url, self.folder):
                return None
            elif local in _EMBEDS_IMAGES and _RASTER_DATA_RE.match(url):
                return None
            return f"{key}=\"{value[:60]}\" on <{element}> (outside the figure)"
        if ns == SVG_NS and local in _ANIMATIONS and lowered in ("from", "to", "values", "by") and "script:" in value.lower():
            return f"{key}= on <{element}>"
        if "url" in value.lower() or "\\" in value and "(" in value or lowered == "style" or ":" in value and "script" in value.lower():
            problem = _css_problem(value, self.folder)
            if problem:
                return f"{key}= on <{element}> ({problem})"
        return None

    def end(self, name: str) -> None:
        self.namespaces.pop()
        if self.dropping:
            self.dropping -= 1
            return
        _name, is_style = self.stack.pop()
        if is_style and self.style_text is not None:
            css = "".join(self.style_text)
            self.style_text = None
            problem = _css_problem(css, self.folder)
            if problem:
                self._note(f"a <style> element ({problem})")
                if self.rebuild:  # the element's text goes with it
                    while self.out and not self.out[-1].startswith("<" + name):
                        self.out.pop()
                    if self.out:
                        self.out.pop()
                return
        if self.rebuild:
            self.out.append(f"</{name}>")

    def text(self, data: str) -> None:
        if self.dropping:
            return
        if self.style_text is not None:
            self.style_text.append(data)
        if self.rebuild:
            self.out.append(data if self.in_cdata else escape(data, quote=False))

    def start_cdata(self) -> None:
        if not self.dropping and self.rebuild:
            self.out.append("<![CDATA[")
        self.in_cdata = True

    def end_cdata(self) -> None:
        if not self.dropping and self.rebuild:
            self.out.append("]]>")
        self.in_cdata = False

    def comment(self, data: str) -> None:
        if not self.dropping and self.rebuild:
            self.out.append(f"<!--{data}-->")

    def processing_instruction(self, target: str, _data: str) -> None:
        self._note(f"the processing instruction <?{target} …?>")

    def doctype(self, name: str, _system, _public, has_internal_subset: int) -> None:
        if has_internal_subset:
            self._note(f"the document type <!DOCTYPE {name} [ … ]> and its entities")
        elif self.rebuild:
            pass  # an external DTD is never read; the figure does not need it

    def entity(self, name: str, *_args) -> None:
        self._note(f"the entity declaration <!ENTITY {name} …>")

    def xml_declaration(self, version, encoding, standalone) -> None:
        if self.rebuild:
            self.out.append(f'<?xml version="{version or "1.0"}" encoding="UTF-8"?>')


def _attr(value: str) -> str:
    return escape(value, quote=True).replace("\n", "&#10;").replace("\t", "&#9;").replace("\r", "&#13;")


def _parse(svg: str, folder: str, rebuild: bool) -> _Checker:
    checker = _Checker(folder, rebuild)
    parser = expat.ParserCreate()  # namespaces resolved here: prefixes are kept as written
    parser.buffer_text = True
    parser.ordered_attributes = True
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)  # never an outside DTD
    parser.StartElementHandler = checker.start
    parser.EndElementHandler = checker.end
    parser.CharacterDataHandler = checker.text
    parser.StartCdataSectionHandler = checker.start_cdata
    parser.EndCdataSectionHandler = checker.end_cdata
    parser.CommentHandler = checker.comment
    parser.ProcessingInstructionHandler = checker.processing_instruction
    parser.StartDoctypeDeclHandler = checker.doctype
    parser.EntityDeclHandler = checker.entity
    parser.XmlDeclHandler = checker.xml_declaration
    parser.ExternalEntityRefHandler = lambda *_: 1  # read nothing outside the file
    parser.Parse(svg.encode("utf-8"), True)
    return checker


def check_svg(data: bytes | str, rel: str = "") -> SvgCheck:
    """The figure at `rel` (its path in the site) as it may be published, and what was removed."""
    if len(data) > MAX_SVG_BYTES:
        return SvgCheck(None, refused=f"it is larger than {MAX_SVG_BYTES // (1024 * 1024)} MB")
    if isinstance(data, bytes):
        try:
            svg = data.decode("utf-8")
        except UnicodeDecodeError as e:
            return SvgCheck(None, refused=f"it is not UTF-8 ({e.reason} at byte {e.start}); save it as UTF-8")
    else:
        svg = data
    declared = _ENCODING_RE.match(svg.lstrip("\ufeff"))
    if declared and declared.group(1).lower() not in ("utf-8", "utf8", "us-ascii", "ascii"):
        return SvgCheck(None, refused=f"it declares the encoding {declared.group(1)}, which a browser would read it in; save it as UTF-8")
    folder = posixpath.dirname(rel)
    try:
        found = _parse(svg, folder, rebuild=False)
        if not found.removed:
            return SvgCheck(svg)
        rebuilt = _parse(svg, folder, rebuild=True)
    except expat.ExpatError as e:
        return SvgCheck(None, refused=f"it is not well-formed XML ({expat.ErrorString(e.code)} at line {e.lineno}), "
                                      "so no browser shows it as a figure")
    except RecursionError:
        return SvgCheck(None, refused="it nests elements too deeply")
    return SvgCheck("".join(rebuilt.out), rebuilt.removed)


def safe_svg(svg: str, rel: str = "") -> str | None:
    """The figure as it may be published (None when it may not be)."""
    return check_svg(svg, rel).svg
