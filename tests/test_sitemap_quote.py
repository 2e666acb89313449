"""The sitemap quotes attributes as xml.sax.saxutils.quoteattr does (its own copy: that module
imports the network libraries, which no build needs)."""
from __future__ import annotations

import random
from xml.sax.saxutils import quoteattr as library_quoteattr

from labml_site.render.sitemap import quoteattr


def test_quoteattr_is_the_library_s():
    rng = random.Random(5)
    alphabet = "ab&<>\"'\n\r\t é"
    texts = ["", "https://example.org/a b.html", "he said \"hi\"", "it's", "both \" and '"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10))) for _ in range(5000)]
    for text in texts:
        assert quoteattr(text) == library_quoteattr(text), text
