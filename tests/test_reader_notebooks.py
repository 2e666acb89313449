"""The tutorial's notebooks stand alone and run: reST fields as lists, the intro cell in the
reader's language, and every notebook executed top to bottom in a Jupyter kernel (nbclient and
ipykernel, CPU)."""
from __future__ import annotations

import json
import os
import re
import sys
import types

import pytest

from labml_site.builder.ui_catalogs import load_ui
from labml_site.render.notebooks import INTRO_MESSAGE, _intro, fields_as_lists, translated_intro

from conftest import ROOT


def test_rest_fields_become_a_markdown_list_with_their_continuations():
    md = "Scale.\n\n:param q: queries\n:param mask: may attend,\n    `[batch]`\n:return: the output\n\nAfter."
    out = fields_as_lists(md)
    assert out == "Scale.\n\n- `q`: queries\n- `mask`: may attend,\n  `[batch]`\n- *Returns*: the output\n\nAfter."
    fenced = "```\n:param x: kept\n```"
    assert fields_as_lists(fenced) == fenced


def test_english_notebooks_have_no_raw_fields(built_site):
    notebooks = sorted((built_site / "annotated_attention").glob("*.ipynb"))
    assert notebooks
    listed = 0
    for path in notebooks:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            text = "".join(cell["source"])
            assert not re.search(r"^:(param|returns?)\b", text, re.M), (path.name, text[:200])
            listed += len(re.findall(r"^- `\w+`: ", text, re.M))
    assert listed > 10  # the tutorial documents its parameters


def test_intro_cell_is_translated_and_says_what_the_english_says():
    class Page:  # what `_intro` reads of a page
        rel = "annotated_attention/transformer.py"
        sections = (type("S", (), {"code": "from .mha import MultiHeadAttention\n"})(),)

    english = _intro(Page)
    assert english
    # one message: the translated intro's English is the English intro (a reworded `_intro`
    # needs its message, and the catalogs, reworded with it)
    assert load_ui("en").gettext(INTRO_MESSAGE, rel=Page.rel, package="annotated_attention") == english
    for lang in ("zh", "ru"):
        text = translated_intro(Page.rel, english, load_ui(lang).gettext)
        assert text != english and "`annotated_attention/transformer.py`" in text and '__package__ = "annotated_attention"' in text
    assert translated_intro(Page.rel, "", load_ui("zh").gettext) == ""


def test_translated_pages_carry_the_translated_intro(built_site):
    html = (built_site / "zh/annotated_attention/transformer.html").read_text(encoding="utf-8")
    plan = json.loads(re.search(r'data-notebook="([^"]*)"', html).group(1).replace("&#34;", '"').replace("&quot;", '"').replace("&amp;", "&"))
    assert plan["intro"].startswith("*由 `annotated_attention/transformer.py` 生成")


# ---------------------------------------------------------------------------------------------
# Every notebook, top to bottom, in a kernel. Small settings: a notebook's `if __name__ ==
# "__main__":` (which trains or rewrites the figures) runs as for an import, and the cheap
# checks run after: scores_and_softmax's `main()` (its assertions).

AFTER = {"scores_and_softmax.ipynb": "main()\n"}


def test_every_tutorial_notebook_runs_top_to_bottom(built_site, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("torch")
    paths = sorted((built_site / "annotated_attention").glob("*.ipynb"))
    assert len(paths) >= 8
    # One notebook of them all, each in a fresh namespace: one kernel start (torch imports once),
    # bounded time. The intro cell's instruction (`__package__`) is what the reader is told to do.
    cells = [nbformat.v4.new_code_cell("import os, torch\ntorch.set_num_threads(1)\nos.environ['CUDA_VISIBLE_DEVICES'] = ''\n")]
    for path in paths:
        nb = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        if not code:
            continue
        # Only what the intro tells the reader to set: no `__file__` (a downloaded notebook has
        # none; data.py and figures.py find their folder through the import system)
        cells.append(nbformat.v4.new_code_cell(
            "_ns = {'__name__': 'notebook', '__package__': 'annotated_attention'}\n"
            f"_nb = {path.name!r}\n"))
        for c in code + ([nbformat.v4.new_code_cell(AFTER[path.name])] if path.name in AFTER else []):
            cells.append(nbformat.v4.new_code_cell(f"exec(compile({c.source!r}, _nb, 'exec'), _ns)"))
    nb = nbformat.v4.new_notebook(cells=cells)
    client = nbclient.NotebookClient(nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as e:
        pytest.fail(str(e)[-2000:])
    assert all(not any(o.get("output_type") == "error" for o in c.get("outputs", [])) for c in nb.cells)


def test_no_notebook_needs_file_which_a_downloaded_notebook_lacks(built_site):
    """data.py and figures.py find the package's folder with `importlib.resources`; a notebook's
    code that read `__file__` would fail with NameError once downloaded (the intro sets only
    `__package__`), so no notebook's code may name it."""
    paths = sorted((built_site / "annotated_attention").glob("*.ipynb"))
    assert {"data.ipynb", "figures.ipynb"} <= {p.name for p in paths}
    for path in paths:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        code = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        assert "__file__" not in code, path.name


def test_package_folder_is_found_without_file(tmp_path):
    """What a downloaded data.ipynb runs: its code in a namespace with `__package__` only, from
    another working directory; the folder it finds is the installed package's."""
    torch = pytest.importorskip("torch")  # noqa: F841 - data.py imports it
    import annotated_attention.data as data

    source = (ROOT / "source" / "annotated_attention" / "data.py").read_text(encoding="utf-8")
    # a kernel's namespace is a module without a file, as `__main__` is in Jupyter
    notebook = types.ModuleType("downloaded_data_notebook")
    notebook.__package__ = "annotated_attention"
    namespace = notebook.__dict__
    cwd = os.getcwd()
    sys.modules[notebook.__name__] = notebook  # where @dataclass looks its module up
    try:
        os.chdir(tmp_path)
        exec(compile(source, "data.ipynb", "exec"), namespace)
    finally:
        os.chdir(cwd)
        del sys.modules[notebook.__name__]
    assert "__file__" not in namespace
    assert namespace["PACKAGE_DIR"] == data.PACKAGE_DIR and (data.PACKAGE_DIR / "data.py").is_file()
    assert namespace["load_text"]() == data.load_text()
