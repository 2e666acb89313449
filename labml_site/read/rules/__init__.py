"""The rules that turn prose into keys, registered by name and priority (`read/registry.py`).

Three kinds, as Python-Markdown has its processors:

* **placeholder rules** `fn(text, i) -> (Placeholder, end) | None`, tried at each character that
  is their trigger (math at `$`, code at a backtick, images at `!`): what they match leaves the
  text and becomes a numbered placeholder;
* **inline rules** `fn(text) -> text`, applied in turn to the escaped text of a paragraph,
  heading or item (links, captions, emphasis);
* **line rules** `fn(parser, k, line) -> bool`, tried on each line of a block until one takes it
  (headings, list items, block placeholders); the parser's state is `BlockState`.

Each module of this package holds one construct; every module in it is loaded (there is no list to
update), and priorities, not import order, say which rule goes first. A new rule that changes keys
is one file here plus its tests; `prose.py` is the engine that runs them.
"""
from __future__ import annotations

import importlib
import pkgutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from ..registry import Registry


@dataclass(frozen=True)
class Placeholder:
    kind: str  # "math" | "display_math" | "env" | "code" | "code_block" | "image"
    text: str  # TeX between delimiters; whole env; code span content; code block body; image src
    lang: str = ""  # code_block info string
    alt: str = ""  # image alt text
    line: int = 0  # source line, for error messages
    standalone: bool = False  # display math that is alone in its paragraph

    @property
    def block(self) -> bool:
        """Rendered as a block: code blocks, environments, and `$$..$$` alone in a paragraph."""
        return self.kind in ("code_block", "env") or (self.kind == "display_math" and self.standalone)


class BlockState(Protocol):
    """What a line rule sees of the block parser (`prose._BlockParser`)."""

    lines: list[str]  # the block's lines
    starts: list[int]  # each line's offset in the prose
    para: list[int]  # the open paragraph's lines
    items: list[dict]  # the open list's items
    list_allowed: bool  # a list may start here: at the start of a block or right after a heading
    column: dict[int, int]  # where the text starts on a line that opens a chunk
    suffix: dict[int, str]  # text kept after a line's newline (nested items)

    def close(self) -> None: ...  # the open paragraph and list
    def close_para(self) -> None: ...
    def close_list(self) -> None: ...
    def add(self, kind: str, text: str = "", offset: int = 0, placeholder: Placeholder | None = None) -> None: ...
    def open_item(self, k: int, at: int, kind: str = "li", code: str = "", code_at: int = 0, ordered: bool = False) -> None: ...
    def special(self, line: str) -> tuple[Placeholder, int] | None: ...  # a block placeholder's sentinel
    # lines k … last are one element, written by `render(convert)` (convert: inline Markdown at a
    # prose offset → HTML with placeholders); no other rule reads them
    def claim(self, k: int, last: int, render: Callable[[Callable[[str, int], str]], str]) -> None: ...


PlaceholderRule = Callable[[str, int], "tuple[Placeholder, int] | None"]
InlineRule = Callable[[str], str]
LineRule = Callable[[BlockState, int, str], bool]

PLACEHOLDER_RULES: Registry[PlaceholderRule] = Registry()
INLINE_RULES: Registry[InlineRule] = Registry()
LINE_RULES: Registry[LineRule] = Registry()
_TRIGGERS: dict[str, str] = {}  # placeholder rule name → the character it is tried at


def placeholder_rule(name: str, priority: float, trigger: str):
    def register(fn: PlaceholderRule) -> PlaceholderRule:
        PLACEHOLDER_RULES.register(fn, name, priority)
        _TRIGGERS[name] = trigger
        return fn
    return register


def inline_rule(name: str, priority: float):
    def register(fn: InlineRule) -> InlineRule:
        INLINE_RULES.register(fn, name, priority)
        return fn
    return register


def line_rule(name: str, priority: float):
    def register(fn: LineRule) -> LineRule:
        LINE_RULES.register(fn, name, priority)
        return fn
    return register


T = TypeVar("T")


def per_thread(make: Callable[[], T]) -> Callable[[], T]:
    """`get()`: this thread's own `make()`, made on first use: rules keep indexes of the text they
    read, and builds may run in threads (serve)."""
    local = threading.local()

    def get() -> T:
        found = getattr(local, "value", None)
        if found is None:
            found = local.value = make()
        return found

    return get


class KeptText:
    """Raw HTML and entities are hidden from the inline rules behind markers while they run (so
    no rule reads inside a tag); a rule that must judge what the browser will read (a link's
    target: `java&#115;cript:`) asks `resolve` for the text the markers stand for."""

    def __init__(self) -> None:
        self.resolve: Callable[[str], str] = lambda text: text


kept_text = per_thread(KeptText)


_BY_TRIGGER: tuple[int, dict[str, tuple[PlaceholderRule, ...]]] = (-1, {})


def placeholder_rules_by_trigger() -> dict[str, tuple[PlaceholderRule, ...]]:
    """trigger character → its placeholder rules, highest priority first (remade after a change)."""
    global _BY_TRIGGER
    version, table = _BY_TRIGGER
    if version != PLACEHOLDER_RULES.version:
        table = {}
        for name in PLACEHOLDER_RULES.names():
            table.setdefault(_TRIGGERS[name], []).append(PLACEHOLDER_RULES[name])
        table = {trigger: tuple(rules) for trigger, rules in table.items()}
        _BY_TRIGGER = (PLACEHOLDER_RULES.version, table)
    return table


def _load_rules() -> None:
    for module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        importlib.import_module(f"{__name__}.{module}")


_load_rules()
