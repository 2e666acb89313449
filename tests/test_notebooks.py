"""Notebooks: valid nbformat, code cells that are exactly the page's code and that run cell by cell."""
from __future__ import annotations

import ast
import json

import nbformat
import pytest

from labml_site.builder.site import BuildConfig, analyse_pages, build
from labml_site.render.notebooks import code_cells, notebook, notebook_json, notebook_path, wants_notebook
from labml_site.typeset.page import analyse
from labml_site.read.structure import discover

from conftest import ROOT, write_tree

SOURCE = '''"""
---
title: Counting
---

# Counting

We count to $n$.
"""

import math


class Counter:
    """
    ## A counter

    It counts.
    """

    def __init__(self, n: int):
        # Where to stop
        self.n = n

    def run(self):
        """
        Count with a `for` loop.
        """
        total = 0
        # Add each number
        for i in range(self.n):
            total += i
        # Done
        return total


# A function on its own
def double(x):
    return 2 * x


print(double(Counter(3).run()))
'''


def page():
    return analyse("toy/count.py", "toy/count.html", SOURCE)


def cells(nb, kind):
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == kind]


def test_notebook_is_valid_nbformat():
    nb = nbformat.from_dict(notebook(page()))
    nbformat.validate(nb)
    assert nb.nbformat == 4 and nb.metadata.kernelspec.name == "python3"
    # Written JSON reads back as the same valid notebook.
    nbformat.validate(nbformat.reads(notebook_json(page()), as_version=4))


def test_code_cells_joined_are_the_pages_code():
    p = page()
    assert "\n".join(code_cells(notebook(p))) == "\n".join(s.code for s in p.sections if s.code)


def test_each_code_cell_is_whole_statements_so_it_runs_on_its_own():
    nb = notebook(page())
    code = cells(nb, "code")
    for cell in code:
        ast.parse(cell)  # a class split across cells would fail here
    assert any(cell.startswith("class Counter") and "return total" in cell for cell in code)
    assert any(cell.startswith("def double") for cell in code)
    # Running the cells in order works, as a reader would in Jupyter.
    namespace: dict = {}
    for cell in code:
        exec(compile(cell, "<cell>", "exec"), namespace)  # noqa: S102 - our own fixture code
    assert namespace["Counter"](4).run() == 6


def test_prose_is_markdown_in_order_with_math_as_written():
    nb = notebook(page())
    md = cells(nb, "markdown")
    assert md[0].startswith("# Counting") and "$n$" in md[0]
    counter = next(c for c in md if "## A counter" in c)
    # Prose for code inside the class is kept, anchored to the line it explains.
    assert "Where to stop" in counter and "> `self.n = n`" in counter
    assert counter.index("Where to stop") < counter.index("Count with a `for` loop") < counter.index("Add each number")
    kinds = [c["cell_type"] for c in nb["cells"]]
    assert kinds[:2] == ["markdown", "code"]


def test_relative_imports_get_a_note():
    p = analyse("pkg/b.py", "pkg/b.html", '"""\n# B\n"""\nfrom .a import f\n\nprint(f())\n')
    first = "".join(notebook(p)["cells"][0]["source"])
    assert '__package__ = "pkg"' in first
    assert "__package__" not in "".join(cells(notebook(page()), "markdown"))


def test_cell_ids_are_unique_and_stable():
    a, b = notebook(page()), notebook(page())
    ids = [c["id"] for c in a["cells"]]
    assert len(ids) == len(set(ids)) and ids == [c["id"] for c in b["cells"]]


def test_notebook_path_sits_beside_the_source():
    assert notebook_path("annotated_attention/mha.py") == "annotated_attention/mha.ipynb"
    assert notebook_path("pkg/__init__.py") == "pkg/__init__.ipynb"


@pytest.mark.parametrize("rel", sorted(f.rel for f in discover(ROOT / "source").pages if f.suffix == ".py"))
def test_every_tutorial_page_makes_a_valid_notebook_of_its_code(rel):
    p = analyse_pages([f for f in discover(ROOT / "source").pages if f.rel == rel])[rel]
    if not wants_notebook(p):
        pytest.skip("no code")
    nb = notebook(p)
    nbformat.validate(nbformat.from_dict(nb))
    assert "\n".join(code_cells(nb)) == "\n".join(s.code for s in p.sections if s.code)


def test_build_writes_notebooks_and_pages_link_them(tmp_path):
    src = write_tree(tmp_path / "src", {"toy/count.py": SOURCE, "toy/notes.md": "# Notes\n\nNo code here.\n"})
    result = build(BuildConfig(src, tmp_path / "tr", tmp_path / "site"))
    site = result.out
    nb = json.loads((site / "toy/count.ipynb").read_text(encoding="utf-8"))
    nbformat.validate(nbformat.from_dict(nb))
    assert not (site / "toy/notes.ipynb").exists()
    # One notebook file: other languages link it too, and make their own from the page when the
    # reader has JavaScript (site.js; tests/test_browser.py downloads one).
    assert not (site / "zh/toy/count.ipynb").exists()
    for prefix, href in (("", "count.ipynb"), ("zh/", "../../toy/count.ipynb")):
        html = (site / prefix / "toy/count.html").read_text(encoding="utf-8")
        assert f'href="{href}" download' in html
    assert "count.ipynb" not in (site / "toy/notes.html").read_text(encoding="utf-8")
