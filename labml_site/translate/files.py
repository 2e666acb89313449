"""Reading a translation file: every key and value with its line, and every defect of the file
itself (encoding, JSON syntax, what it is), without ever raising on what it holds.

Translation files arrive in pull requests, so nothing in them is trusted: the file is read only if
it is a plain file of bounded size (`safe_files.read_regular`), its top-level object is walked
member by member so that duplicates and positions are kept, and a value the json module refuses to
build is a syntax error like any other. The file checks (`checks.py`) report on the `ParsedFile`.
"""
from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..read.safe_files import UnsafeFile, check_no_links, read_regular


@dataclass(frozen=True)
class RawPair:
    key: str
    value: Any  # whatever JSON held; only `str` is usable
    line: int
    col: int


@dataclass
class ParsedFile:
    """A translation file as read, defects included; the file checks report on it."""

    path: str
    exists: bool = True
    bom: bool = False
    utf16: bool = False
    bad_bytes: list[tuple[int, int]] = field(default_factory=list)  # (line, col) of non-UTF-8 bytes
    syntax_error: tuple[str, int, int] | None = None  # (message, line, col)
    top_level: str = "object"  # JSON type of the top-level value
    pairs: list[RawPair] = field(default_factory=list)
    # (code, why) when the file was not read at all: a link, a FIFO, a device, too large…
    refused: tuple[str, str] | None = None

    @property
    def usable(self) -> bool:
        """False when nothing in the file can be trusted (the file is then treated as empty)."""
        return (
            self.exists and self.refused is None and self.syntax_error is None
            and self.top_level == "object"
        )


_WS = re.compile(r"[ \t\n\r]*")
_BOM = b"\xef\xbb\xbf"
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")  # what surrogateescape makes of a non-UTF-8 byte


class LineIndex:
    """Offset -> (line, col), 1-based, in O(log n)."""

    def __init__(self, text: str):
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def at(self, offset: int) -> tuple[int, int]:
        i = bisect.bisect_right(self._starts, offset) - 1
        return i + 1, offset - self._starts[i] + 1


# Limits on what one translation file may hold. Far above any real page (the largest block of the
# tutorial is 3 KB, its largest file 35 KB); they exist so that a file of a pull request cannot make
# a build read, hold or check without bound.
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_VALUE_CHARS = 64_000  # per key and per value (for a sidecar entry: all its strings together)


def parse_translation_file(path: Path, root: Path | None = None) -> ParsedFile:
    """Read `path` without ever raising on its content; a missing file is an empty catalog.

    Only a regular file of at most `MAX_FILE_BYTES` is read (`safe_files.read_regular`: never a
    link, FIFO or device, never a blocking open); anything else is `refused`, which a file check
    reports. `root`: the translations folder, when known; a file reached through a linked folder
    below it is refused too."""
    parsed = ParsedFile(path=str(path))
    try:
        if root is not None:
            check_no_links(path, root)
        data = read_regular(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        parsed.exists = False
        return parsed
    except UnsafeFile as e:
        parsed.refused = (e.code, e.reason)
        return parsed
    except OSError as e:  # unreadable (permissions, a folder named like a file…): never a crash
        parsed.refused = ("unreadable-file", f"could not be read ({e.strerror or e})")
        return parsed
    return parse_translation_bytes(data, str(path))


def parse_translation_bytes(data: bytes, path: str = "<input>") -> ParsedFile:
    parsed = ParsedFile(path=path)
    if data.startswith(_BOM):
        parsed.bom = True
        data = data[len(_BOM):]
    elif data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        parsed.utf16 = True
    try:
        text, bad_bytes = data.decode("utf-8"), False  # nearly always: nothing to look for
    except UnicodeDecodeError:
        # surrogateescape keeps the undecodable bytes (as lone surrogates) so we can point at
        # them and so nothing is lost if the file is rewritten.
        text, bad_bytes = data.decode("utf-8", errors="surrogateescape"), True
    lines = LineIndex(text)
    if bad_bytes:
        parsed.bad_bytes = [lines.at(m.start()) for m in _ESCAPED_BYTE.finditer(text)]
    _scan_object(text, lines, parsed)
    return parsed


def _scan_object(text: str, lines: LineIndex, parsed: ParsedFile) -> None:
    """Walk the top-level object member by member, recording where each key starts.

    `json.loads(object_pairs_hook=...)` would give duplicates but not positions; scanning the
    top level ourselves (and letting the json module decode each key and value) gives both.
    """
    decoder = json.JSONDecoder()

    def fail(message: str, pos: int) -> None:
        parsed.syntax_error = (message, *lines.at(pos))

    i = _WS.match(text, 0).end()
    if i == len(text):
        return fail("the file is empty; an empty translation file must contain {}", i)
    if text[i] != "{":
        try:
            value, _ = decoder.raw_decode(text, i)
        except json.JSONDecodeError as e:
            return fail(e.msg, e.pos)
        except (RecursionError, ValueError, MemoryError) as e:
            return fail(_decode_problem(e), i)
        parsed.top_level = type(value).__name__
        return
    i = _WS.match(text, i + 1).end()
    if text.startswith("}", i):
        i += 1
    else:
        while True:
            if not text.startswith('"', i):
                what = "a trailing comma before }" if text.startswith("}", i) else "no key here"
                return fail(f"expected a key in double quotes ({what})", i)
            key_pos = i
            try:
                key, i = json.decoder.scanstring(text, i + 1, True)
                i = _WS.match(text, i).end()
                if not text.startswith(":", i):
                    return fail("expected ':' after the key", i)
                i = _WS.match(text, i + 1).end()
                value, i = decoder.raw_decode(text, i)
            except json.JSONDecodeError as e:
                return fail(e.msg, e.pos)
            except (RecursionError, ValueError, MemoryError) as e:
                return fail(_decode_problem(e), i)
            parsed.pairs.append(RawPair(key, value, *lines.at(key_pos)))
            i = _WS.match(text, i).end()
            if text.startswith(",", i):
                i = _WS.match(text, i + 1).end()
            elif text.startswith("}", i):
                i += 1
                break
            else:
                return fail("expected ',' or '}' after the value (is a quote unescaped?)", i)
    i = _WS.match(text, i).end()
    if i != len(text):
        fail("extra data after the closing }", i)


def _decode_problem(error: BaseException) -> str:
    """A value the json module refuses to build (not a syntax error): say what, without a traceback."""
    if isinstance(error, RecursionError):
        return "arrays or objects nested too deeply (a translation file holds strings)"
    if isinstance(error, MemoryError):
        return "a value too large to read"
    if "digits" in str(error):
        return "a number with too many digits (a translation file holds strings)"
    return f"a value that cannot be read ({error})"


def string_size(value: Any) -> int:
    """The characters of every string in a parsed JSON value (its nesting is bounded: it parsed)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(len(k) + string_size(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(map(string_size, value))
    return 0


def oversized(pair: RawPair) -> bool:
    """True for an entry `check_sizes` refuses: no other check reads it."""
    return len(pair.key) > MAX_VALUE_CHARS or string_size(pair.value) > MAX_VALUE_CHARS

