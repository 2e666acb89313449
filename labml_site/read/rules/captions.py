"""labml's caption: `---*text*---` is `<small><em>text</em></small>` (emphasis makes the `<em>`)."""
from __future__ import annotations

import re

from . import inline_rule


# labml's caption: `---*text*---` is `<small><em>text</em></small>` (the emphasis rule below
# makes the `<em>`).
_CAPTION_RE = re.compile(r"---(\*(?!\s)[^*]+?(?<!\s)\*)---", re.S)


@inline_rule("captions", 90)
def _captions(text: str) -> str:
    if "---*" not in text:
        return text
    return _CAPTION_RE.sub(r"<small>\1</small>", text)
