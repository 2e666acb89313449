from pathlib import Path

from labml_site.read.structure import breadcrumbs, discover, lang_prefix, relative_url
from labml_site.translate.catalog import translation_path


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_pages_urls_indexes_and_assets(tmp_path):
    src = _tree(tmp_path / "src", {
        "a/__init__.py": '"""# A"""\n',
        "a/readme.md": "# A readme\n",
        "a/b.py": "x = 1\n",
        "a/figures/f.svg": "<svg/>",
        "c/readme.md": "# C\n",
        "c/d/e.py": "y = 2\n",
        "a/__pycache__/b.cpython-311.pyc": "",
        ".hidden/x.py": "",
    })
    files = discover(src)
    urls = {p.rel: p.url for p in files.pages}
    assert urls == {
        "a/__init__.py": "a/index.html",
        "a/readme.md": "a/readme.html",  # __init__.py wins the folder index
        "a/b.py": "a/b.html",
        "c/readme.md": "c/index.html",
        "c/d/e.py": "c/d/e.html",
    }
    assert set(files.assets) == {"a/figures/f.svg"}
    assert files.folders["a"].index.rel == "a/__init__.py"
    assert files.folders["c/d"].index is None
    # Every folder is reachable from the root through subfolders.
    assert files.folders[""].subfolders == ["a", "c"]
    assert files.folders["c"].subfolders == ["c/d"]


def test_translation_path_matches_existing_format(tmp_path):
    files = discover(_tree(tmp_path / "src", {"t/mha.py": "", "t/__init__.py": ""}))
    by_rel = {p.rel: p for p in files.pages}
    assert translation_path(Path("tr"), by_rel["t/mha.py"], "zh") == Path("tr/t/mha.zh.json")
    assert translation_path(Path("tr"), by_rel["t/__init__.py"], "ru") == Path("tr/t/__init__.ru.json")


def test_relative_urls_work_between_languages():
    assert relative_url("zh/a/b.html", "a/b.py") == "../../a/b.py"
    assert relative_url("a/b.html", "zh/a/b.html") == "../zh/a/b.html"
    assert relative_url("index.html", "a/index.html") == "a/index.html"
    assert lang_prefix("en", "en") == "" and lang_prefix("zh", "en") == "zh/"


def test_breadcrumbs():
    assert breadcrumbs("index.html") == []
    assert breadcrumbs("a/index.html") == ["index.html"]
    assert breadcrumbs("a/b/c.html") == ["index.html", "a/index.html", "a/b/index.html"]


def test_missing_source_folder_says_what_to_do(tmp_path):
    import pytest

    with pytest.raises(FileNotFoundError, match="--source"):
        discover(tmp_path / "nope")
