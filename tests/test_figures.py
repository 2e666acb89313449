"""The committed figures are valid, self-contained SVG and match what the code produces now."""
import re
import xml.etree.ElementTree as ET

import pytest

from annotated_attention import figures

SVG = "{http://www.w3.org/2000/svg}"
RENDERED = figures.render_all()


def test_every_figure_referenced_by_the_pages_is_produced():
    pages = "".join(p.read_text(encoding="utf-8") for p in figures.FIGURE_DIR.parent.glob("*.py"))
    referenced = set(re.findall(r"\(figures/([\w.-]+\.svg)\)", pages))
    assert referenced, "the pages should show the figures"
    assert referenced <= set(RENDERED)
    assert {p.name for p in figures.FIGURE_DIR.glob("*.svg")} == set(RENDERED)


@pytest.mark.parametrize("name", sorted(RENDERED))
def test_committed_figure_is_up_to_date(name):
    committed = (figures.FIGURE_DIR / name).read_text(encoding="utf-8")
    assert committed == RENDERED[name], (
        f"figures/{name} is stale: run `python -m annotated_attention.figures` and commit the result")


@pytest.mark.parametrize("name", sorted(RENDERED))
def test_figure_is_valid_accessible_svg_without_external_references(name):
    svg = RENDERED[name]
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    title = root.find(f"{SVG}title")
    assert title is not None and title.text.strip()
    assert root.get("role") == "img"
    # The xmlns namespace URI identifies SVG and is never fetched; nothing else may point outside.
    body = svg.replace('xmlns="http://www.w3.org/2000/svg"', "")
    for forbidden in ("href", "url(", "http:", "https:", "@import", "<image", "<script", "@font-face"):
        assert forbidden not in body, forbidden
    for el in root.iter(f"{SVG}text"):
        assert el.get("font-family") in ("sans-serif", "serif", "monospace")


def test_weights_in_the_figures_are_the_computed_ones():
    def cell_numbers(svg):
        root = ET.fromstring(svg)
        return [t.text for t in root.iter(f"{SVG}text") if re.fullmatch(r"\d\.\d\d", t.text or "")]

    assert cell_numbers(RENDERED["two_tokens.svg"]) == ["0.88", "0.12", "0.38", "0.62"]
    causal = cell_numbers(RENDERED["causal_mask.svg"])
    # Row i of a 6-token causal map shows i + 1 allowed keys with weight 1/(i + 1) each.
    assert causal == [f"{1 / (i + 1):.2f}" for i in range(6) for _ in range(i + 1)]
    assert cell_numbers(RENDERED["padding_mask.svg"]) == ["0.33"] * 15


def test_write_all_writes_the_rendered_files(tmp_path):
    paths = figures.write_all(tmp_path)
    assert sorted(p.name for p in paths) == sorted(RENDERED)
    for p in paths:
        assert p.read_bytes() == RENDERED[p.name].encode("utf-8")
