"""Every page's exercises have an expected answer each, folded by default (`<details>`, which a
reader opens), in English and in each translation. The answers' claims were checked by planting
each bug and running the tests they name."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from labml_site.read import prose, sections

from conftest import ROOT

PAGES = sorted((ROOT / "source" / "annotated_attention").glob("*.py"))


def exercise_key(path: Path) -> str | None:
    parsed = sections.parse_python(path.read_text(encoding="utf-8"), str(path))
    keys = [b.key for s in parsed.sections for b in prose.section_blocks(s)]
    found = [k for k in keys if k.startswith("<h2>Exercises</h2>")]
    assert len(found) <= 1, path.name
    return found[0] if found else None


def counts(html: str) -> tuple[int, int]:
    """(exercises, answers): the items before the fold and inside it."""
    before, _, inside = html.partition("<details>")
    return len(re.findall(r"<li>", before)), len(re.findall(r"<li>", inside))


def test_enough_pages_have_exercises():
    assert sum(exercise_key(p) is not None for p in PAGES) >= 8


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.stem)
def test_each_exercise_has_a_folded_answer_in_every_language(path):
    key = exercise_key(path)
    if key is None:
        return
    # folded: the bare tag (no `open`), its summary first, closing the section
    assert "<details><summary>" in key and key.rstrip().endswith("</details>"), path.name
    exercises, answers = counts(key)
    assert exercises >= 2 and answers == exercises, (path.name, exercises, answers)
    for lang in ("zh", "ru"):
        catalog = ROOT / "translations" / "annotated_attention" / f"{path.stem}.{lang}.json"
        value = json.loads(catalog.read_text(encoding="utf-8"))[key]
        assert "<details><summary>" in value and "open" not in value.split("<summary>")[0], (path.name, lang)
        assert counts(value) == (exercises, answers), (path.name, lang)
