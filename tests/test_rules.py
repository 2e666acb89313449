"""Prose rules by name and priority (`read/rules/`, `read/registry.py`): a new rule that changes
keys is one file in the rules package, and the order rules run in is their priorities'."""
from __future__ import annotations

import sys
import textwrap

import pytest

from labml_site.read import rules
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
