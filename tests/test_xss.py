"""XSS and content injection through translations.

Every vector in `tests/xss_vectors.py` is smuggled into an otherwise valid translation in several
positions, then (1) looked up through `Catalog.lookup`, which must refuse it, and (2) run through
`sanitize` on its own, whose output is parsed like a browser parses it (html5lib and the stdlib
parser) and inspected element by element, attribute by attribute.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import html5lib  # noqa: F401 - required: outputs are inspected with a browser-grade parser
import pytest
from bs4 import BeautifulSoup

sys.path.insert(0, str(Path(__file__).parent))
from xss_vectors import (  # noqa: E402
    ENGLISH_IDS,
    ENGLISH_KEY,
    ENGLISH_URLS,
    SIMPLE_KEY,
    TEXT_ONLY,
    TRANSLATION,
    VECTORS,
    carriers,
    unsafe_reasons,
)

from labml_site.translate.checks import check_entry  # noqa: E402
from labml_site.read.markup import ALLOWED_ATTRIBUTES, ALLOWED_TAGS, PLACEHOLDER_RE  # noqa: E402
from labml_site.translate.sanitize import sanitize  # noqa: E402
from labml_site.translate.catalog import Catalog  # noqa: E402

CASES = [(name, where, key, value) for name, payload in VECTORS for where, key, value in carriers(payload)]
IDS = [f"{name}@{where}" for name, where, _, _ in CASES]


def test_there_are_enough_distinct_vectors():
    assert len(VECTORS) >= 50
    assert len({name for name, _ in VECTORS}) == len(VECTORS)
    assert len({payload for _, payload in VECTORS}) == len(VECTORS)


def test_carriers_are_valid_without_a_payload(tmp_path):
    """Control: the translations the payloads ride in are accepted, so only a payload is refused."""
    for _, key, value in carriers(""):
        assert [f for f in check_entry(key, value) if f.severity == "error"] == []
        catalog = _catalog(tmp_path, key, value)
        assert catalog.verdict(key).state == "translated"


def _catalog(tmp_path: Path, key: str, value: str) -> Catalog:
    path = tmp_path / "page.zh.json"
    path.write_text(json.dumps({key: value}, ensure_ascii=False, indent=2), encoding="utf-8")
    return Catalog.load(path, "zh")


@pytest.fixture(scope="module")
def catalog_of_all_vectors(tmp_path_factory) -> tuple[Catalog, dict[tuple[str, str], str]]:
    """One tiny catalog file per (vector, position): the carriers share keys."""
    root = tmp_path_factory.mktemp("xss")
    catalogs = {}
    for i, (name, where, key, value) in enumerate(CASES):
        path = root / f"p{i}.zh.json"
        path.write_text(json.dumps({key: value}, ensure_ascii=False), encoding="utf-8")
        catalogs[(name, where)] = Catalog.load(path, "zh")
    return catalogs


@pytest.mark.parametrize("name, where, key, value", CASES, ids=IDS)
def test_lookup_refuses_every_vector(catalog_of_all_vectors, name, where, key, value):
    result = catalog_of_all_vectors[(name, where)].verdict(key)
    assert result.state == "invalid", f"{name} was accepted in {where}: {result.html!r}"
    assert result.html is None
    assert any(f.severity == "error" for f in result.findings)


def _assert_allowlisted(html: str) -> None:
    """Stricter than `unsafe_reasons`: only the prose allowlist may appear at all."""
    for parser in ("html5lib", "html.parser"):
        soup = BeautifulSoup(html, parser)
        for element in soup.find_all(True):
            if parser == "html5lib" and element.name in {"html", "head", "body"}:
                assert not element.attrs, f"{element.name} got attributes: {element.attrs}"
                continue
            assert element.name in ALLOWED_TAGS, f"<{element.name}> in {html!r}"
            allowed = set(ALLOWED_ATTRIBUTES.get(element.name, ())) | (
                {"rel"} if element.name == "a" else set()
            ) | ({"translate"} if element.name == "span" else set()) | (
                {"align"} if element.name in ("th", "td") else set()
            )
            assert set(element.attrs) <= allowed, f"{element.attrs} on <{element.name}>"


@pytest.mark.parametrize("name, where, key, value", CASES, ids=IDS)
def test_sanitizer_alone_removes_every_vector(name, where, key, value):
    # as lookup calls it: with the English's links and ids as the only ones allowed
    out = sanitize(value, allowed_urls=ENGLISH_URLS, allowed_ids=ENGLISH_IDS)
    assert unsafe_reasons(out, ENGLISH_URLS) == [], out
    _assert_allowlisted(out)
    ids = {el.get("id") for el in BeautifulSoup(out, "html5lib").find_all(id=True)}
    assert ids <= set(ENGLISH_IDS)
    # and with no English to compare against: still nothing executable or off-site by scheme
    bare = sanitize(value)
    assert unsafe_reasons(bare) == [], bare
    _assert_allowlisted(bare)


@pytest.mark.parametrize("name, where, key, value", CASES, ids=IDS)
def test_sanitizer_keeps_the_placeholders_before_the_payload(name, where, key, value):
    """The payload goes; placeholders are never invented, and those before the payload stay."""
    out = sanitize(value, allowed_urls=ENGLISH_URLS, allowed_ids=ENGLISH_IDS)
    found = PLACEHOLDER_RE.findall(out)
    assert set(found) <= set(PLACEHOLDER_RE.findall(key)) and len(found) == len(set(found))
    if where == "after-last-block":
        assert sorted(found) == sorted(PLACEHOLDER_RE.findall(key))


@pytest.mark.parametrize("name, payload", TEXT_ONLY, ids=[n for n, _ in TEXT_ONLY])
def test_escaped_markup_stays_text(tmp_path, name, payload):
    key, value = SIMPLE_KEY, carriers(payload)[0][2]
    result = _catalog(tmp_path, key, value).verdict(key)
    assert result.state == "translated"
    assert unsafe_reasons(result.html) == []
    soup = BeautifulSoup(result.html, "html5lib")
    assert [el.name for el in soup.body.find_all(True)] == ["p", "span"]
    assert "alert(1)" in soup.get_text()  # shown, as text


def test_inspector_detects_what_it_should():
    """The inspector itself must fail on dangerous HTML, or the tests above prove nothing."""
    assert unsafe_reasons("<p>fine <a href='https://arxiv.org/abs/1706.03762'>x</a></p>") == []
    for bad in (
        "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "<p onclick=x>a</p>",
        "<a href='JAVA\tSCRIPT:alert(1)'>x</a>", "<a href='//evil.example'>x</a>",
        "<p style='color:red'>x</p>", "<iframe></iframe>", "<!-- x -->", "<svg></svg>",
        "<a href='data:text/html,x'>x</a>", "<meta http-equiv=refresh>",
    ):
        assert unsafe_reasons(bad), bad
    assert unsafe_reasons("<a href='https://evil.example/'>x</a>", ENGLISH_URLS)


def test_full_valid_translation_survives_sanitizer_unchanged_except_rel():
    value = TRANSLATION.format(inside="", after="")
    out = sanitize(value, allowed_urls=ENGLISH_URLS, allowed_ids=ENGLISH_IDS)
    assert out.replace(' rel="noopener noreferrer"', "") == value
    assert PLACEHOLDER_RE.findall(out) == ["0", "1"] and ENGLISH_KEY.count("_^_") == 4
