"""Who checked which translation: the optional review sidecar `<page>.<lang>.review.json`.

    {"<English key>": {"by": "Ada", "date": "2026-12-01", "value": "<sha256 of the translation, 16 hex>"}}

A reviewer who rejects a translation (from the review report, `review --apply`) records
`"status": "rejected"` (and a `"note"`) in the same entry; without a status it is approved.
The build never reads it; `stats` counts the entries whose approval or rejection is still
current (the translation is the one that was reviewed: its digest matches), `review` shows each
changed entry's decision, and the workbench marks blocks reviewed. A review whose translation
changed since is "outdated", not lost. A malformed file counts as no reviews and is never
rewritten over: `mark` refuses it, saying why.
"""
from __future__ import annotations

import datetime
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from ..read.safe_files import UnsafeFile, read_regular, write_atomic
from .catalog import _sidecar
from .files import MAX_FILE_BYTES


def review_path(main: Path) -> Path:
    return _sidecar(main, "review")


def value_digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass(frozen=True)
class Review:
    by: str
    date: str
    value: str  # digest of the reviewed translation
    status: str = "approved"  # or "rejected"
    note: str = ""  # why (a rejection's reason)

    def current(self, translation: str) -> bool:
        return bool(translation.strip()) and self.value == value_digest(translation)


STATUSES = ("approved", "rejected")


def as_json(review: Review) -> dict[str, str]:
    """An entry of the sidecar (an approval written as before rejections existed: no status)."""
    data = {"by": review.by, "date": review.date, "value": review.value}
    if review.status != "approved":
        data["status"] = review.status
    if review.note:
        data["note"] = review.note
    return data


class BadReviewFile(ValueError):
    pass


def load(main: Path) -> dict[str, Review]:
    """The reviews of a page's main file; {} when there is no sidecar. Raises BadReviewFile."""
    try:
        data = read_regular(review_path(main), MAX_FILE_BYTES)
    except FileNotFoundError:
        return {}
    except (UnsafeFile, OSError) as e:
        raise BadReviewFile(f"{review_path(main)}: {e}") from None
    return parse_reviews(data, str(review_path(main)))


def parse_reviews(data: bytes, path: str = "<input>") -> dict[str, Review]:
    """The reviews in a sidecar's bytes (as read from disk or from git). Raises BadReviewFile for
    anything but a JSON object of at most `MAX_FILE_BYTES`; entries of another shape are skipped."""
    if len(data) > MAX_FILE_BYTES:
        raise BadReviewFile(f"{path}: larger than {MAX_FILE_BYTES} bytes")
    try:
        found = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:  # (deep nesting, 5000-digit numbers)
        raise BadReviewFile(f"{path}: {str(e)[:200]}") from None
    if not isinstance(found, dict):
        raise BadReviewFile(f"{path}: not a JSON object")
    reviews = {}
    for key, item in found.items():
        if isinstance(item, dict) and all(isinstance(item.get(f, ""), str) for f in ("by", "date", "value")):
            status = item.get("status", "approved")
            note = item.get("note", "")
            reviews[key] = Review(item.get("by", ""), item.get("date", ""), item.get("value", ""),
                                  status if status in STATUSES else "approved", note if isinstance(note, str) else "")
    return reviews


def load_quietly(main: Path) -> dict[str, Review]:
    try:
        return load(main)
    except BadReviewFile:
        return {}


def mark(main: Path, key: str, translation: str, by: str, root: Path, today: datetime.date | None = None,
         status: str = "approved", note: str = "") -> Review:
    """Record that `by` reviewed `translation` of `key` and approved (or rejected) it, atomically,
    sorted as `extract` writes."""
    from .extract import dumps

    if status not in STATUSES:
        raise ValueError(f"a review is one of {', '.join(STATUSES)}, not {status!r}")
    reviews = load(main)
    review = Review(by, (today or datetime.date.today()).isoformat(), value_digest(translation), status, note)
    reviews[key] = review
    data = {k: as_json(r) for k, r in reviews.items()}
    write_atomic(review_path(main), dumps(data).encode("utf-8", "backslashreplace"), root)
    return review


def count_current(main: Path, entries: dict[str, str], keys: list[str], status: str = "approved") -> int:
    """How many of `keys` have a review (approved, or `status`) of their current translation
    (`entries`: key → value)."""
    reviews = load_quietly(main)
    return sum(1 for k in dict.fromkeys(keys)
               if k in reviews and reviews[k].status == status and reviews[k].current(entries.get(k, "")))
