"""Items registered by name and priority, as Python-Markdown's `util.Registry`.

The prose rules (`read/rules/`) are kept in these: iteration gives the items highest priority
first, so the order in which rules are tried is written next to each rule, not implied by the
order in which modules happen to be imported. Two items of one registry may not share a priority:
which of them goes first would be an accident.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class _Entry(Generic[T]):
    name: str
    priority: float
    item: T


class Registry(Generic[T]):
    def __init__(self) -> None:
        self._entries: dict[str, _Entry[T]] = {}
        self._order: tuple[T, ...] | None = None
        self.version = 0  # changes with every (de)registration: derived tables can tell they are stale

    def register(self, item: T, name: str, priority: float) -> None:
        """Add `item` as `name` (a registered name is replaced, as in Python-Markdown)."""
        for other in self._entries.values():
            if other.priority == priority and other.name != name:
                raise ValueError(f"{name!r} and {other.name!r} have the same priority {priority}: give each its own")
        self._entries[name] = _Entry(name, priority, item)
        self._changed()

    def deregister(self, name: str, strict: bool = True) -> None:
        if name not in self._entries:
            if strict:
                raise KeyError(name)
            return
        del self._entries[name]
        self._changed()

    def _changed(self) -> None:
        self._order = None
        self.version += 1

    def _sorted(self) -> tuple[T, ...]:
        if self._order is None:
            ranked = sorted(self._entries.values(), key=lambda e: -e.priority)
            self._order = tuple(e.item for e in ranked)
        return self._order

    def __iter__(self) -> Iterator[T]:
        return iter(self._sorted())

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __getitem__(self, name: str) -> T:
        return self._entries[name].item

    def names(self) -> list[str]:
        """The names, highest priority first."""
        return [e.name for e in sorted(self._entries.values(), key=lambda e: -e.priority)]

    def priority(self, name: str) -> float:
        return self._entries[name].priority
