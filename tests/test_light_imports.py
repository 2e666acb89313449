"""What a build imports: the pipeline (`labml_site.builder.site`) imports no library that only
some builds need, and a build whose inputs need none of them (plain `key: text` front matter,
Python the token classifier colours, translations `fast_html` reads, the bundled UI catalogs)
never imports them. The readers that stand in for those libraries (`read/simple_yaml.py`,
`builder/po_messages.py`, `typeset/pygments_tables.py`, the highlighter's inline spans) must give
exactly what the library would."""
from __future__ import annotations

import io
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from labml_site.builder import po_messages
from labml_site.lazy_re import lazy
from labml_site.read import sections
from labml_site.read.simple_yaml import simple_mapping
from labml_site.typeset import highlight, pygments_tables

from test_cache import LANGS, make_tree

ROOT = Path(__file__).resolve().parent.parent

# Each costs a build milliseconds to import (with what it imports itself).
HEAVY = ("html5lib", "pygments.lexer", "pygments.lexers", "pygments.formatters", "yaml", "babel.messages",
         "concurrent.futures", "multiprocessing", "logging", "ctypes", "xml.parsers.expat",
         # (the glossary check and the SVG sanitiser: a project without a glossary or SVG figures)
         "labml_site.translate.glossary_check", "labml_site.render.svg_safety")
# Imported by the standard library's xml.sax.saxutils (through urllib.request), whose
# `quoteattr` render/sitemap.py therefore has a copy of.
NETWORK = ("email", "http.client")


def _modules_after(script: str) -> set[str]:
    """The modules a fresh interpreter holds after running `script`."""
    out = subprocess.run([sys.executable, "-c", script + "\nimport sys\nprint(' '.join(sorted(sys.modules)))"],
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


# What a first build needs and a rebuild finds with its heads (each language's name and direction).
FIRST_BUILD_ONLY = ("babel", "subprocess")


def test_importing_the_pipeline_imports_no_heavy_library():
    modules = _modules_after("import labml_site.builder.site")
    assert "labml_site.builder.site" in modules
    assert sorted(modules & set(HEAVY + FIRST_BUILD_ONLY)) == []


def test_importing_the_pipeline_imports_no_network_library():
    assert sorted(_modules_after("import labml_site.builder.site") & set(NETWORK)) == []


def test_a_build_that_needs_no_repair_imports_no_heavy_library(tmp_path):
    src, tr = make_tree(tmp_path)  # valid translations, `title: …` front matter, plain Python
    script = textwrap.dedent(f"""
        from pathlib import Path
        from labml_site.builder import build
        from labml_site.builder.config import BuildConfig
        r = build(BuildConfig(Path({str(src)!r}), Path({str(tr)!r}), Path({str(tmp_path / 'site')!r}),
                              langs={LANGS!r}, jobs=1))
        assert len(r.pages) == 3 and not r.report.errors, [f.format() for f in r.report.errors]
    """)
    modules = _modules_after(script)
    assert "labml_site.translate.repair" in modules and "labml_site.typeset.highlight" in modules
    assert sorted(modules & set(HEAVY)) == []
    # A rebuild after an edit, in a process of its own, as `python build.py` runs it.
    page = next(p for p in sorted(src.rglob("*.py")) if p.name != "__init__.py")
    page.write_text(page.read_text(encoding="utf-8") + "\n# An edit.\nedited = 1\n", encoding="utf-8")
    modules = _modules_after(script.replace("assert len(r.pages)", "assert r.stats.analysed == 1 and len(r.pages)"))
    assert sorted(modules & set(HEAVY + FIRST_BUILD_ONLY)) == []


# ---------------------------------------------------------------------------------------------
# The stand-ins give what the libraries give


def test_the_tables_are_the_installed_pygments_tables():
    import pygments

    # Fails after a Pygments upgrade until `python -m labml_site.typeset.pygments_tables` is run
    # (until then the tables are read from Pygments: right, but slower).
    assert pygments_tables.PYGMENTS_VERSION == pygments.__version__
    assert pygments_tables.WORDS == pygments_tables.words_from_pygments()
    assert pygments_tables.python_words() is pygments_tables.WORDS
    for style in pygments_tables.STYLES:
        assert pygments_tables.style_defs(style) == pygments_tables.style_defs_from_pygments(style)


def test_the_tables_of_another_pygments_version_are_read_from_it(monkeypatch):
    monkeypatch.setattr(pygments_tables, "PYGMENTS_VERSION", "0.0")
    assert pygments_tables.python_words() == pygments_tables.words_from_pygments()
    monkeypatch.setattr(pygments_tables, "STYLE_DEFS", {"default": "stale"})
    assert pygments_tables.style_defs("default") == pygments_tables.style_defs_from_pygments("default")
    assert pygments_tables.style_defs("monokai") == pygments_tables.style_defs_from_pygments("monokai")


INLINE = ["x", "scores / math.sqrt(d_k)", "self.w(x)", "print(None)", "024", "01", "2020-01-01", "x.print",
          "__init__", "yield from g", "f'{x}'", "'a{b}'", r"\alpha", "batch × seq", "  x", "x  ", "a[", "]",
          "def f(x):", "class A", "import a.b as c", "from . import x", "match x:", "case _:", "1.5j", "0x_1f",
          "**kwargs", "a @ b", "@property", "# note", "lambda x: x", "x: int = 1", "'''doc'''", "\"\"\"a\nb\"\"\""]


@pytest.mark.parametrize("code", INLINE)
def test_inline_spans_are_pygments_spans(code):
    expected = [line for line in highlight._tokens_to_lines(highlight._lexer("python").get_tokens(code)) if line]
    assert [line for line in highlight._snippet_lines(code) if line] == expected


def test_inline_spans_are_read_with_tokenize_rules():
    import tokenize

    for code in INLINE:
        try:
            expected = highlight._from_tokenize(code, tokenize.generate_tokens(io.StringIO(code).readline)).items
        except (tokenize.TokenError, SyntaxError):
            expected = None
        tokens = highlight._snippet_tokens(code)
        assert (tokens.items if tokens is not None else None) == expected, code


def _pyyaml(body: str):
    """The bounded PyYAML loader's answer, as `sections._load_yaml` gave it before its fast path."""
    yaml = sections.pyyaml()
    try:
        loader = sections._bounded_loader()(body)
    except yaml.YAMLError:  # (the reader refuses some characters outright)
        return "error"
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
        lines = {}
        if isinstance(node, yaml.MappingNode):
            for key, _value in node.value:
                lines.setdefault(str(key.value), key.start_mark.line)
        return data, lines
    except yaml.YAMLError:
        return "error"
    finally:
        loader.dispose()


FRONT_MATTER = [
    "title: Scaled scores\nsummary: How scores are scaled.",
    "title: a  b  \n\nsummary: x, [y] {z} it's \"q\" a:b a#b % & * ! @ ` $x$ (1)",
    "title: 中文标题\nsummary: é",
    "title: yes", "title: No", "title: null", "title: ~", "title: 1.5", "title: 2020-01-01", "title: .inf",
    "title: 0x1f", "title: -x", "title: 'q'", "title: >\n  folded", "title: a: b", "title: a #c", "title: a:",
    "title: x\ntitle: y", "on: x", "title:x", "title:", "title: x\n  more", "title: a\tb", "title: a\u2028b",
    "title: a\x85b", "title: \ufeffa", "# comment\ntitle: x", "title: a\r", "macros: x", "order: 3",
    "order: third",
    # (more shapes: punctuation inside values, other keys, what YAML reads otherwise or refuses)
    "title: Labml Nn\nsummary: Cache mask, vector (x) [12] {a} 3.5% & *b | >c @d `e` 'f' \"g\" ?h -i",
    "title: Attention   \n\n  \nsummary: Two  spaces kept, trailing dropped   ", "equation_numbers: none\norder: first",
    "Title-x_2: A 中文 title é", "y: x", "Off: x", "title: 12", "title: http://example.org", " title: indented",
    "title: a\x07b", "title: Über", "k" * 2000 + ": a key longer than YAML's simple keys",
    "\n".join(f"k{i}: v" for i in range(100)),
]


@pytest.mark.parametrize("body", FRONT_MATTER)
def test_simple_front_matter_is_what_pyyaml_reads(body):
    expected = _pyyaml(body)
    fast = simple_mapping(body, sections.MAX_FRONT_MATTER_VALUES)
    if fast is not None:
        assert fast == expected and list(fast[0]) == list(expected[0])
    if expected == "error":
        with pytest.raises(sections.pyyaml().YAMLError):
            sections._load_yaml(body)
    else:
        assert sections._load_yaml(body) == expected


def test_random_front_matter_is_what_pyyaml_reads():
    rng = random.Random(7)
    alphabet = list("abcdef  AB é中") * 4 + list("~:#-'\"[]{},.!&*%@`|>?<=+019\t\\/()$_\u2028\x85\ufeff\r")
    fast = 0
    for _ in range(3000):
        lines = [f"{rng.choice(['title', 'summary', 'yes', 'x_1'])}: "
                 + "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 10))) for _ in range(rng.randint(1, 3))]
        body = "\n".join(lines)
        got = simple_mapping(body, sections.MAX_FRONT_MATTER_VALUES)
        if got is not None:
            fast += 1
            assert got == _pyyaml(body), body
    assert fast > 300  # (the fast path answers often enough for the comparison to mean something)


def test_front_matter_with_more_values_than_allowed_goes_to_pyyaml():
    body = "\n".join(f"k{i}: v" for i in range(1000))
    assert simple_mapping(body, sections.MAX_FRONT_MATTER_VALUES) is None


CATALOGS = [
    b'msgid "a"\nmsgstr "b"\n',
    b'#, fuzzy\nmsgid "a"\nmsgstr "b"\n\nmsgid "c"\nmsgstr ""\n"d\\n\\"e\\""\n',
    b'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\nmsgid ""\n"x"\n"y"\nmsgstr "z\\tq"\n',
    b'#, python-format, fuzzy\nmsgid "a"\nmsgstr "b"\nmsgid "c"\nmsgstr "d"\n',
    b'msgid "a"   \r\nmsgstr   "b"\r\n',
    b'msgid "\xc3\xa9"\nmsgstr "\xe4\xb8\xad"\n',
    b'msgid "a"\nmsgstr ""\n',
    # Left to Babel: plurals, contexts, obsolete entries, repeats, another charset, a bad line.
    b'msgid "a"\nmsgid_plural "as"\nmsgstr[0] "b"\nmsgstr[1] "bs"\n',
    b'msgctxt "menu"\nmsgid "a"\nmsgstr "b"\n',
    b'msgid "a"\nmsgstr "b"\n#~ msgid "c"\n#~ msgstr "d"\n',
    b'msgid "a"\nmsgstr "b"\n#, fuzzy\nmsgid "a"\nmsgstr "c"\n',
    b'msgid ""\nmsgstr "Content-Type: text/plain; charset=ISO-8859-1\\n"\n\nmsgid "a"\nmsgstr "\xe9"\n',
    b'msgid "a"\n# between\nmsgstr "b"\n',
]


@pytest.mark.parametrize("data", CATALOGS)
def test_po_messages_are_babels(data):
    assert po_messages.messages(data) == po_messages._with_babel(data)


def test_the_bundled_catalogs_need_no_babel():
    for path in sorted((ROOT / "labml_site" / "locales").rglob("*.po")):
        data = path.read_bytes()
        simple = po_messages._simple(data)  # (raises where it would hand the file to Babel)
        assert simple and simple == po_messages._with_babel(data) and list(simple) == list(po_messages._with_babel(data))


def test_a_lazy_pattern_is_the_compiled_pattern():
    pattern = lazy(r"(a)(b)?", 0)
    assert pattern.sub("x", "abac") == "xxc" and pattern.pattern == "(a)(b)?" and pattern.groups == 2
    assert [m.span() for m in pattern.finditer("ab a")] == [(0, 2), (3, 4)]
    assert pattern.scanner("a").match().group() == "a"  # (an attribute it does not copy)
