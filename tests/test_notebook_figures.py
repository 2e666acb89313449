"""Notebooks embed their figures: each as a cell attachment of the Markdown cell that shows it,
an SVG as the site publishes it in the notebook's language (sanitised, themed, labelled), so that
a downloaded notebook shows its figures; a figure's bytes are an input of the notebook, so editing
it makes that notebook again and nothing else that does not show it."""
from __future__ import annotations

import base64
import json
import os
import re
from pathlib import Path

import nbformat

from labml_site.builder import memo as memo_layer
from labml_site.builder.site import BuildConfig, build
from labml_site.render import figures as svg_figures
from labml_site.render.notebooks import MAX_FIGURE_BYTES, embed_plan, notebook, notebook_json
from labml_site.typeset.page import analyse

from conftest import write_json, write_tree

PAGE = '''"""
---
title: Plotting
---

# Plotting

The weights, drawn:

![Attention weights](figures/plot.svg)
"""

import math


def scale(x):
    """
    Scaled, as the photo shows:

    ![A photo](figures/photo.png)
    """
    return x / math.sqrt(4)
'''

OTHER = '''"""
# Other

No figure here.
"""


def other():
    return 1
'''

SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20" viewBox="0 0 40 20">'
       '<title>Weights of the heads</title><rect width="40" height="20" fill="#ffffff"/>'
       '<text x="2" y="12">queries</text></svg>\n')
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64  # (bytes, not a picture: embedded as they are)
HOSTILE = ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" onload="alert(1)">'
           '<script>alert(2)</script><image href="https://evil.example/x.png" width="4" height="4"/>'
           '<use xlink:href="http://evil.example/s.svg#a"/><a href="javascript:alert(3)"><text>hi</text></a>'
           '<rect width="4" height="4" fill="#000000" onclick="alert(4)"/></svg>')


def page():
    return analyse("toy/plot.py", "toy/plot.html", PAGE)


def markdown_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "markdown"]


def relative_figure_links(nb: dict) -> list[str]:
    return [src for c in markdown_cells(nb) for src in re.findall(r"!\[[^\]]*\]\(([^)\s]*)", "".join(c["source"]))
            if not src.startswith("attachment:")]


def attachment(nb: dict, name: str) -> tuple[str, bytes]:
    found = [c["attachments"][name] for c in markdown_cells(nb) if name in c.get("attachments", {})]
    assert len(found) == 1, name
    (mime, data), = found[0].items()
    return mime, base64.b64decode(data)


def test_figures_become_attachments_of_their_cells_with_the_published_bytes():
    p = page()
    figures = embed_plan(p, {"toy/figures/plot.svg": SVG.encode(), "toy/figures/photo.png": PNG})
    assert not figures.findings
    nb = notebook(p, figures)
    nbformat.validate(nbformat.reads(notebook_json(p, figures), as_version=4))
    assert attachment(nb, "plot.svg") == ("image/svg+xml", svg_figures.published_svg(SVG, "toy/figures/plot.svg").encode())
    assert attachment(nb, "photo.png") == ("image/png", PNG)
    assert relative_figure_links(nb) == []
    text = "".join("".join(c["source"]) for c in markdown_cells(nb))
    assert "![Attention weights](attachment:plot.svg)" in text and "![A photo](attachment:photo.png)" in text
    # each cell carries only the figures it shows
    for cell in markdown_cells(nb):
        for name in cell.get("attachments", {}):
            assert f"(attachment:{name})" in "".join(cell["source"])


def test_a_hostile_svg_is_embedded_cleaned():
    p = page()
    figures = embed_plan(p, {"toy/figures/plot.svg": HOSTILE.encode(), "toy/figures/photo.png": PNG})
    mime, data = attachment(notebook(p, figures), "plot.svg")
    svg = data.decode()
    assert mime == "image/svg+xml" and "<svg" in svg and "<rect" in svg
    for bad in ("<script", "alert", "onload", "onclick", "evil.example", "javascript:"):
        assert bad not in svg, bad


def test_an_oversize_or_missing_figure_stays_a_link_with_a_finding_at_its_line():
    p = page()
    big = b"\x89PNG" + b"\x00" * MAX_FIGURE_BYTES
    figures = embed_plan(p, {"toy/figures/plot.svg": None, "toy/figures/photo.png": big})
    nb = notebook(p, figures)
    nbformat.validate(nbformat.from_dict(nb))
    assert sorted(relative_figure_links(nb)) == ["figures/photo.png", "figures/plot.svg"]
    assert not any(c.get("attachments") for c in markdown_cells(nb))
    found = {f.message.split(" ", 1)[0]: f for f in figures.findings}
    assert set(found) == {"toy/figures/plot.svg", "toy/figures/photo.png"}
    source = PAGE.split("\n")
    for asset, finding in found.items():
        assert finding.severity == "warning" and finding.path == "toy/plot.py"
        shown = "figures/" + asset.rsplit("/", 1)[1]
        # the finding's line is the prose block that shows the figure
        assert finding.line and any(shown in line for line in source[finding.line - 1 : finding.line + 3]), finding.format()
    assert "larger than" in found["toy/figures/photo.png"].message


# ---------------------------------------------------------------------------------------------
# In a build: every language, and what editing a figure makes again


def make_tree(tmp_path: Path) -> tuple[Path, Path]:
    src = write_tree(tmp_path / "src", {"toy/plot.py": PAGE, "toy/other.py": OTHER, "toy/figures/plot.svg": SVG})
    (src / "toy/figures/photo.png").write_bytes(PNG)
    tr = tmp_path / "tr"
    keys = analyse("toy/plot.py", "toy/plot.html", PAGE).keys
    write_json(tr / "toy/plot.zh.json", {"queries": "查询", **{k: k for k in keys[:1]}})
    return src, tr


def markdown_script(path: Path) -> dict:
    return json.loads(re.fullmatch(r"window\.labmlMarkdown = (.*);\n", path.read_text(encoding="utf-8"), re.S).group(1))


def figures_script(path: Path, url: str) -> dict:
    text = path.read_text(encoding="utf-8")
    prefix = "window.labmlAttachments = window.labmlAttachments || {};\n" + f"window.labmlAttachments[{json.dumps(url)}] = "
    assert text.startswith(prefix) and text.endswith(";\n")
    return json.loads(text[len(prefix):-2])


def inodes(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.stat().st_ino for p in root.rglob("*") if p.is_file()}


def test_every_language_embeds_its_figures_and_an_edit_remakes_only_what_shows_it(tmp_path):
    src, tr = make_tree(tmp_path)
    out = tmp_path / "site"
    cfg = BuildConfig(src, tr, out, langs=("en", "zh"))
    with memo_layer.audit():  # the notebook stages open only what they declare
        first = build(cfg)
    assert not [f for f in first.report.findings if f.severity != "info"], [f.format() for f in first.report.findings]
    nb = json.loads((out / "toy/plot.ipynb").read_text(encoding="utf-8"))
    nbformat.validate(nbformat.from_dict(nb))
    assert attachment(nb, "plot.svg")[1] == (out / "toy/figures/plot.svg").read_bytes()  # as the site publishes it
    assert attachment(nb, "photo.png")[1] == PNG and relative_figure_links(nb) == []
    # zh: the page's script makes the notebook from markdown.js, whose figures are the zh ones
    prose = markdown_script(out / "zh/_originals/toy/markdown.js")
    attached = figures_script(out / "zh/_originals/toy/plot.figures.js", "toy/plot.html")
    zh_svg = base64.b64decode(attached["plot.svg"]["image/svg+xml"])
    assert zh_svg == (out / "zh/toy/figures/plot.svg").read_bytes() and "查询".encode() in zh_svg
    assert base64.b64decode(attached["photo.png"]["image/png"]) == PNG
    text = "".join(prose["toy/plot.html"])
    assert "(attachment:plot.svg)" in text and "(attachment:photo.png)" in text and "(figures/" not in text
    # the page says where its figures are; a page without figures has no such script
    assert "plot.figures.js" in (out / "zh/toy/plot.html").read_text(encoding="utf-8")
    assert not (out / "zh/_originals/toy/other.figures.js").exists()

    before = inodes(out)
    (src / "toy/figures/plot.svg").write_text(SVG.replace("#ffffff", "#fafafa"), encoding="utf-8")
    with memo_layer.audit():
        build(cfg)
    after = inodes(out)
    # (the marker and pygments.css are written by every build that writes anything)
    changed = {rel for rel in after if before.get(rel) != after[rel]} - {".labml-site", "static/pygments.css"}
    # (the prose's markdown.js names the attachments, which are as they were)
    assert changed == {"toy/plot.ipynb", "toy/figures/plot.svg", "zh/toy/figures/plot.svg", "zh/_originals/toy/plot.figures.js"}
    nb = json.loads((out / "toy/plot.ipynb").read_text(encoding="utf-8"))
    assert b"#fafafa" in attachment(nb, "plot.svg")[1]
    attached = figures_script(out / "zh/_originals/toy/plot.figures.js", "toy/plot.html")
    assert b"#fafafa" in base64.b64decode(attached["plot.svg"]["image/svg+xml"])


def test_a_missing_figure_in_a_build_is_a_link_and_a_finding(tmp_path):
    src, tr = make_tree(tmp_path)
    os.remove(src / "toy/figures/photo.png")
    result = build(BuildConfig(src, tr, tmp_path / "site", langs=("en", "zh")))
    found = [f for f in result.report.findings if f.code == "notebook-figure"]
    assert len(found) == 1 and "toy/figures/photo.png" in found[0].message
    assert found[0].format().startswith("toy/plot.py:"), found[0].format()
    nb = json.loads((tmp_path / "site/toy/plot.ipynb").read_text(encoding="utf-8"))
    assert relative_figure_links(nb) == ["figures/photo.png"]
    assert attachment(nb, "plot.svg")[0] == "image/svg+xml"


def test_figures_of_the_same_name_get_names_of_their_own_and_fenced_images_stay_code():
    source = '''"""
# Two

![first](a/plot.svg) and ![second](b/plot.svg)

```
![not a figure](a/plot.svg)
```
"""

x = 1
'''
    p = analyse("toy/two.py", "toy/two.html", source)
    figures = embed_plan(p, {"toy/a/plot.svg": SVG.encode(), "toy/b/plot.svg": SVG.replace("queries", "keys").encode()})
    nb = notebook(p, figures)
    nbformat.validate(nbformat.from_dict(nb))
    text = "".join("".join(c["source"]) for c in markdown_cells(nb))
    assert "![first](attachment:plot.svg) and ![second](attachment:plot-2.svg)" in text
    assert "![not a figure](a/plot.svg)" in text  # code, as written
    assert b"keys" in attachment(nb, "plot-2.svg")[1] and b"queries" in attachment(nb, "plot.svg")[1]
