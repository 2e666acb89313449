"""Page rules of the original labml site, on a small tree of our own: redirect pages, the
original's #section-N anchors."""
from __future__ import annotations

from pathlib import Path

from bs4 import BeautifulSoup

from labml_site.builder.site import BuildConfig, build
from labml_site.typeset.page import analyse

from conftest import TOY_PAGE, write_tree

REDIRECT = '"""\n---\ntitle: Moved\nredirect: https://example.org/new/place.html\n---\n"""\n'


def _build(tmp_path: Path, files: dict[str, str]) -> Path:
    src = write_tree(tmp_path / "src", files)
    (tmp_path / "tr").mkdir()
    return build(BuildConfig(src, tmp_path / "tr", tmp_path / "site", langs=("en", "zh"))).out


def test_redirect_front_matter_writes_a_redirect_page_in_every_language(tmp_path):
    site = _build(tmp_path, {"toy/__init__.py": TOY_PAGE, "toy/moved.py": REDIRECT})
    for prefix in ("", "zh/"):
        page = BeautifulSoup((site / prefix / "toy/moved.html").read_text("utf-8"), "html.parser")
        refresh = page.find("meta", attrs={"http-equiv": "refresh"})
        assert refresh["content"] == "0; url=https://example.org/new/place.html"
        assert page.find("a")["href"] == "https://example.org/new/place.html"


def test_redirect_to_another_scheme_is_refused():
    page = analyse("m.py", "m.html", REDIRECT.replace("https://example.org/new/place.html", "javascript:alert(1)"))
    assert page.redirect == "" and [f.code for f in page.findings] == ["redirect-url"]
    assert analyse("m.py", "m.html", REDIRECT.replace("https://example.org/new/place.html", "../xl/a.html")).redirect == "../xl/a.html"


def test_every_section_answers_the_original_section_n_anchor(tmp_path):
    site = _build(tmp_path, {"toy/__init__.py": TOY_PAGE})
    page = BeautifulSoup((site / "toy/index.html").read_text("utf-8"), "html.parser")
    sections = page.find_all("section", class_="section")
    assert len(sections) >= 2
    for n, section in enumerate(sections):
        assert section.find(id=f"section-{n}") is not None or section.get("id") == f"section-{n}"


def test_source_url_adds_view_on_github_links_per_page_and_section(tmp_path):
    src = write_tree(tmp_path / "src", {"toy/__init__.py": TOY_PAGE})
    (tmp_path / "tr").mkdir()
    out = build(BuildConfig(src, tmp_path / "tr", tmp_path / "site", langs=("en",),
                            source_url="https://github.com/o/r/blob/main/src/")).out
    page = BeautifulSoup((out / "toy/index.html").read_text("utf-8"), "html.parser")
    links = [a["href"] for a in page.find_all("a", class_="repo-link")]
    assert links[0] == "https://github.com/o/r/blob/main/src/toy/__init__.py"
    code = page.find("div", class_="code")
    lo, hi = code["data-lines"].split("-")
    assert f"https://github.com/o/r/blob/main/src/toy/__init__.py#L{lo}-L{hi}" in links


def test_source_url_must_be_http():
    import pytest
    from labml_site.errors import UserError
    with pytest.raises(UserError):
        BuildConfig(Path("s"), Path("t"), Path("o"), source_url="javascript:alert(1)//")


def test_readme_beside_init_is_a_page_of_its_own_and_init_is_the_index(tmp_path):
    site = _build(tmp_path, {"toy/__init__.py": TOY_PAGE, "toy/readme.md": "# Toy\n\nThe same, in Markdown.\n"})
    assert (site / "toy/index.html").is_file()  # __init__.py: the folder's index
    readme = BeautifulSoup((site / "toy/readme.html").read_text("utf-8"), "html.parser")
    assert "The same, in Markdown." in readme.get_text()
