"""Prose rules by name and priority (`read/rules/`, `read/registry.py`): a new rule that changes
keys is one file in the rules package, and the order rules run in is their priorities'."""
from __future__ import annotations

import sys
import textwrap

import pytest

from labml_site.read import rules
from labml_site.read import prose
from labml_site.read.prose import section_blocks
from labml_site.read.registry import Registry
from labml_site.read.sections import Section


def section(prose: str) -> Section:
    return Section(prose, tuple(range(1, prose.count("\n") + 2)), (), 0, (1, 1))


def key(prose: str) -> str:
    return "".join(b.key for b in section_blocks(section(prose)))


def test_registry_iterates_by_priority_and_names_replace():
    r: Registry[str] = Registry()
    r.register("low", "a", 10)
    r.register("high", "b", 90)
    r.register("mid", "c", 50)
    assert list(r) == ["high", "mid", "low"] and r.names() == ["b", "c", "a"]
    r.register("higher", "a", 100)  # a name registered again is replaced, with its new priority
    assert list(r) == ["higher", "high", "mid"] and len(r) == 3 and "a" in r and r["a"] == "higher"
    r.deregister("b")
    assert list(r) == ["higher", "mid"]
    with pytest.raises(KeyError):
        r.deregister("b")
    r.deregister("b", strict=False)
    with pytest.raises(ValueError, match="same priority"):
        r.register("tie", "d", 50)  # which of two equal priorities runs first would be an accident


def test_the_rules_of_the_format_and_their_order():
    assert rules.BLOCK_RULES.names() == ["doctest", "blockquote"]
    assert rules.LINE_RULES.names() == ["block_placeholder", "details", "heading", "thematic_break", "table", "param", "returns", "list_item"]
    assert rules.INLINE_RULES.names() == ["links", "captions", "emphasis", "link_targets"]
    assert rules.PLACEHOLDER_RULES.names() == ["code_span", "display_math", "inline_math", "image"]
    by_trigger = rules.placeholder_rules_by_trigger()
    assert [f.__name__ for f in by_trigger["$"]] == ["_display_math", "_inline_math"]


def test_a_new_rule_is_one_file_in_the_rules_package(tmp_path, monkeypatch):
    """A module dropped into the package is loaded with the others; its rule changes keys."""
    (tmp_path / "strikethrough.py").write_text(textwrap.dedent('''
        """`~~text~~` is deleted text, as GitHub's Markdown has it."""
        import re

        from labml_site.read.rules import inline_rule

        _DELETED = re.compile(r"~~(?!\\s)(.+?)(?<!\\s)~~")


        @inline_rule("strikethrough", 85)
        def _strikethrough(text: str) -> str:
            return _DELETED.sub(r"<del>\\1</del>", text) if "~~" in text else text
    '''), encoding="utf-8")
    before = key("Keep ~~this~~ and *that*.")
    monkeypatch.setattr(rules, "__path__", [*rules.__path__, str(tmp_path)])
    try:
        rules._load_rules()
        assert rules.INLINE_RULES.names() == ["links", "captions", "strikethrough", "emphasis", "link_targets"]
        assert key("Keep ~~this~~ and *that*.") == "<p>Keep <del>this</del> and <em>that</em>.</p>\n"
    finally:
        rules.INLINE_RULES.deregister("strikethrough")
        sys.modules.pop(f"{rules.__name__}.strikethrough", None)
    assert key("Keep ~~this~~ and *that*.") == before == "<p>Keep ~~this~~ and <em>that</em>.</p>\n"


def test_a_placeholder_rule_takes_text_out_of_the_key():
    @rules.placeholder_rule("paren_math", 75, "\\")
    def _paren_math(text: str, i: int):
        if not text.startswith("\\(", i):
            return None
        end = text.find("\\)", i + 2)
        return (rules.Placeholder("math", text[i + 2:end]), end + 2) if end > 0 else None

    try:
        (block,) = section_blocks(section("Scores \\(QK^T\\) here."))
        assert block.key == "<p>Scores <span translate=no>_^_0_^_</span> here.</p>\n"
        assert block.placeholders[0].text == "QK^T"
    finally:
        rules.PLACEHOLDER_RULES.deregister("paren_math")
    assert "_^_" not in key("Scores \\(QK^T\\) here.")


def test_a_new_block_rule_is_one_file_in_the_rules_package(tmp_path, monkeypatch):
    """A block rule dropped into the package takes whole blocks; what it nests is read by all the
    other rules (emphasis, lists, quotes) and the blocks it does not take are left alone."""
    (tmp_path / "admonitions.py").write_text(textwrap.dedent('''
        """`!!! note` and the indented lines under it are an aside, as Python-Markdown's
        admonition extension has it."""
        from labml_site.read.rules import block_rule


        @block_rule("admonition", 95)
        def _admonition(b, k, block):
            if not block.startswith("!!! "):
                return 0
            last = k
            while last + 1 < len(b.blocks) and b.blocks[last + 1].startswith("    "):
                last += 1
            body = "\\n\\n".join(b.blocks[k:last + 1]).split("\\n", 1)[1:]
            inner = "\\n".join(line[4:] for line in "".join(body).split("\\n"))
            b.nest("aside", inner, b.offset(k))
            return last - k + 1
    '''), encoding="utf-8")
    text = "!!! note\n    Read *this*.\n\n    * one\n    * two\n\n    > quoted\n\nAfter."
    before = key(text)
    monkeypatch.setattr(rules, "__path__", [*rules.__path__, str(tmp_path)])
    try:
        rules._load_rules()
        assert rules.BLOCK_RULES.names() == ["doctest", "admonition", "blockquote"]
        assert key(text) == ("<aside>\n<p>Read <em>this</em>.</p>\n<ul><li>one </li>\n<li>two</li></ul>\n"
                             "<blockquote>\n<p>quoted</p>\n</blockquote>\n</aside>\n<p>After.</p>\n")
    finally:
        rules.BLOCK_RULES.deregister("admonition")
        sys.modules.pop(f"{rules.__name__}.admonitions", None)
    assert key(text) == before and "<aside>" not in before


def test_nesting_is_bounded_for_every_container():
    """The engine, not each rule, bounds how deep containers go: past it, `>` is text."""
    deep = "> " * (prose.MAX_NESTING + 4) + "x"
    got = key(deep)
    assert got.count("<blockquote>") == prose.MAX_NESTING
    assert "&gt; &gt; &gt; &gt; x" in got


DOCTEST_PAGE = """# Sessions

A paragraph with `code` and $x$.

>>> import torch
>>> torch.zeros(2)
tensor([0., 0.])

> A quote
> > nested

```python
y = 2
```

>>> x = 1

* an item
* another"""


def _per_element(text: str, monkeypatch) -> list[str]:
    monkeypatch.setattr(prose, "MAX_KEY_CHARS", 0)  # one key per top-level element
    return [b.key + repr(b.placeholders) for b in section_blocks(section(text))]


def test_disabling_the_doctest_rule_changes_only_doctest_blocks(monkeypatch):
    with_rule = _per_element(DOCTEST_PAGE, monkeypatch)
    doctests = [i for i, k in enumerate(with_rule) if "lang='pycon'" in k]
    assert len(doctests) == 2
    fn, priority = rules.BLOCK_RULES["doctest"], rules.BLOCK_RULES.priority("doctest")
    rules.BLOCK_RULES.deregister("doctest")
    try:
        without = _per_element(DOCTEST_PAGE, monkeypatch)
    finally:
        rules.BLOCK_RULES.register(fn, "doctest", priority)
    assert not any("pycon" in k for k in without)
    # each session is one element either way (a quote or a paragraph now); nothing else moves
    assert len(without) == len(with_rule)
    assert [k for i, k in enumerate(without) if i not in doctests] == \
        [k for i, k in enumerate(with_rule) if i not in doctests]
    assert all(without[i] != with_rule[i] for i in doctests)
    assert "tensor([0., 0.])" in without[doctests[0]] and "<blockquote>" in without[doctests[1]]
    assert _per_element(DOCTEST_PAGE, monkeypatch) == with_rule


def test_disabling_the_doctest_rule_leaves_the_tutorial_keys_without_sessions():
    """On the shipped tutorial, only keys that hold a session could change."""
    from pathlib import Path

    from labml_site.read.sections import parse_source

    root = Path(__file__).resolve().parent.parent / "source"
    files = sorted(root.rglob("*.py"))
    assert files

    def keys() -> list[str]:
        return [b.key + repr(b.placeholders) for f in files for s in parse_source(f.read_text(encoding="utf-8"), str(f)).sections
                for b in section_blocks(s)]

    with_rule = keys()
    fn, priority = rules.BLOCK_RULES["doctest"], rules.BLOCK_RULES.priority("doctest")
    rules.BLOCK_RULES.deregister("doctest")
    try:
        without = keys()
    finally:
        rules.BLOCK_RULES.register(fn, "doctest", priority)
    sessions = {i for i, k in enumerate(with_rule) if "lang='pycon'" in k}
    assert len(without) == len(with_rule)
    assert [k for i, k in enumerate(without) if i not in sessions] == \
        [k for i, k in enumerate(with_rule) if i not in sessions]


# ---------------------------------------------------------------------------------------------
# `<details>` (read/rules/details.py): a folded block of its own, not raw HTML in a paragraph


def test_details_lines_open_and_close_a_fold_around_the_blocks_between():
    out = key("Try it.\n\n<details><summary>Expected *answer*: `x`</summary>\n\n1. It fails.\n2. $a$ works.\n\n</details>")
    assert out == ("<p>Try it.</p>\n<details><summary>Expected <em>answer</em>: <span translate=no>_^_0_^_</span></summary>\n"
                   "<ol><li>It fails. </li>\n<li><span translate=no>_^_1_^_</span> works.</li></ol>\n</details>\n")
    assert "<p><details>" not in out and "<p></details>" not in out
    # without a summary, and with spaces around the tags
    assert key("<details>\n\nText.\n\n  </details>  ") == "<details>\n<p>Text.</p>\n</details>\n"


def test_details_with_attributes_or_text_on_its_line_stays_a_paragraph():
    # the fold has no attributes in this format (a translation may not carry any either)
    assert key("<details open>\n\nText.").startswith("<p><details open></p>")
    assert key("See <details> here.").startswith("<p>See <details> here.")
