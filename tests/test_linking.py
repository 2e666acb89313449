"""Linked code: names defined on the site link to their section, by scope-aware resolution."""
from __future__ import annotations

import posixpath
import re
from html import unescape

import pytest

from labml_site.builder.site import analyse_pages
from labml_site.typeset.linking import iter_links, link_code, page_source, references, site_symbols
from labml_site.typeset.page import PageData, analyse
from labml_site.read.structure import discover

from conftest import ROOT

MODELS = '''"""
# Models
"""
import torch.nn.functional as F


def softmax(x):
    """
    Our own softmax.
    """
    return x


def scores(q, k):
    # Scores
    return q @ k


class Attention:
    """
    ## Attention
    """

    def __init__(self, d):
        # Keep the size
        self.d = d

    def forward(self, q, k):
        # Ours, then PyTorch's, then a helper
        s = scores(q, k)
        return softmax(s) + F.softmax(s) + self.helper_step(s)

    def helper_step(self, s):
        # A helper
        return s

    def uniquely_named(self):
        # Only one class has this
        return 1

    def step(self):
        # A common name
        return 0


def shadowing(scores):
    # A parameter named like a module function is the parameter
    return [scores for scores in range(3)] + [softmax]
'''

USER = '''"""
# User
"""
from .models import Attention
from . import models as m


def run(x):
    # Construct and call
    a = Attention(4)
    a.uniquely_named()
    a.forward(x, x)
    a.step()
    softmax = 3
    return m.scores(x, x) + softmax


def other():
    # Not imported here: a local name that happens to match
    scores = 1
    return scores


print(softmax)
'''

NESTED = '''"""
# Nested
"""
from ..models import Attention


def make():
    # Up one folder
    return Attention(2)
'''


def page(rel: str, text: str) -> PageData:
    return analyse(rel, posixpath.splitext(rel)[0] + ".html", text)


@pytest.fixture
def linked() -> dict[str, PageData]:
    pages = {
        "pkg/models.py": page("pkg/models.py", MODELS),
        "pkg/user.py": page("pkg/user.py", USER),
        "pkg/sub/nested.py": page("pkg/sub/nested.py", NESTED),
    }
    return link_code(pages)


def links_in(p: PageData, definition: str | None = None) -> list[tuple[str, str]]:
    """Links in the whole page, or in the sections of one definition (from its own section up to
    the next definition's: a comment inside a body starts a new section)."""
    if definition is None:
        return [l for s in p.sections for l in iter_links(s.code_html)]
    starts = {section_id for _, section_id in p.definitions}
    found, inside = [], False
    for s in p.sections:
        if s.id in starts:
            inside = s.id == definition
        if inside:
            found.extend(iter_links(s.code_html))
    return found


def text_of(code_html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", code_html))


def test_same_page_names_link_and_library_attributes_do_not(linked):
    models = linked["pkg/models.py"]
    forward = links_in(models, "Attention-forward")
    assert ("#scores", "scores") in forward
    assert ("#Attention-helper_step", "helper_step") in forward  # self.m inside the class
    # `softmax(s)` is ours; `F.softmax(s)` is PyTorch's and stays plain.
    assert forward.count(("#softmax", "softmax")) == 1


def test_parameters_and_comprehension_variables_shadow_module_names(linked):
    shadowing = links_in(linked["pkg/models.py"], "shadowing")
    assert ("#scores", "scores") not in shadowing
    assert ("#softmax", "softmax") in shadowing  # not shadowed there: the module's function


def test_imported_names_link_to_the_other_page(linked):
    user = links_in(linked["pkg/user.py"])
    assert user.count(("models.html#Attention", "Attention")) == 2  # the import line and the call
    assert ("models.html#scores", "scores") in user  # through the module alias `m`
    assert ("models.html#Attention-uniquely_named", "uniquely_named") in user


def test_what_is_not_imported_or_too_common_stays_plain(linked):
    names = {name for _, name in links_in(linked["pkg/user.py"])}
    assert "forward" not in names  # every module has one
    assert "step" not in names  # a common method name (optimizers, schedulers)
    assert "softmax" not in names  # a local variable, and a module-level name never imported
    assert not links_in(linked["pkg/user.py"], "other")


def test_links_are_relative_between_folders(linked):
    assert ("../models.html#Attention", "Attention") in links_in(linked["pkg/sub/nested.py"])


def test_linking_keeps_the_code_text_and_highlighting(linked):
    originals = {
        "pkg/models.py": page("pkg/models.py", MODELS),
        "pkg/user.py": page("pkg/user.py", USER),
    }
    for rel, original in originals.items():
        for before, after in zip(original.sections, linked[rel].sections):
            assert text_of(before.code_html) == text_of(after.code_html)
            # Every link wraps one highlighted name span, whose class is kept.
            for m in re.finditer(r'<a class="def-link"[^>]*>(.*?)</a>', after.code_html):
                assert re.fullmatch(r'<span class="(n|nc|nf|fm|nn)">\w+</span>', m.group(1)), m.group(0)


def test_a_method_defined_on_two_classes_links_only_through_self():
    two = '''class A:
    def run_twice(self):
        # A's
        return self.run_twice


class B:
    def run_twice(self):
        # B's
        return 1


def use(x):
    # Which one? Unknown, so no link.
    return x.run_twice()
'''
    p = link_code({"two.py": page("two.py", two)})["two.py"]
    assert links_in(p, "A-run_twice") == [("#A-run_twice", "run_twice")]
    assert links_in(p, "use") == []


def test_a_page_that_does_not_parse_gets_no_links():
    broken = "def f(:\n    return g()\n\n\ndef g():\n    return f()\n"
    p = page("broken.py", broken)
    assert link_code({"broken.py": p})["broken.py"] == p


def test_page_source_keeps_line_numbers():
    p = page("pkg/models.py", MODELS)
    lines = page_source(p).split("\n")
    for s in p.sections:
        if s.code:
            assert lines[s.code_start - 1 : s.code_start - 1 + len(s.code.split("\n"))] == s.code.split("\n")


def test_symbols_index_methods_by_name_only_when_unique():
    symbols = site_symbols({"pkg/models.py": page("pkg/models.py", MODELS)})
    assert set(symbols.top["pkg/models.py"]) == {"softmax", "scores", "Attention", "shadowing"}
    assert "uniquely_named" in symbols.unique_methods
    assert "helper_step" in symbols.unique_methods
    assert not {"__init__", "forward", "step"} & set(symbols.unique_methods)


def test_every_link_on_the_real_site_names_an_existing_section():
    files = discover(ROOT / "source")
    pages = link_code(analyse_pages(files.pages))
    ids = {p.url: {s.id for s in p.sections} for p in pages.values()}
    count = 0
    for p in pages.values():
        for href, name in links_in(p):
            target, _, fragment = href.partition("#")
            url = posixpath.normpath(posixpath.join(posixpath.dirname(p.url), target)) if target else p.url
            assert fragment in ids.get(url, set()), f"{p.rel}: {name} → {href}"
            count += 1
    assert count > 20, "the tutorial's code should have links between its pages"


# -- scoping: exact references, worked out by hand ------------------------------------------------


def refs(source: str) -> list[tuple[int, int, str, str]]:
    """(line, column, name, linked qualname) of every reference in `source`, a page `pkg/scopes.py`
    next to MODELS (`pkg/models.py`), in the order the code reads."""
    pages = {"pkg/models.py": page("pkg/models.py", MODELS), "pkg/scopes.py": page("pkg/scopes.py", source)}
    return [(r.line, r.col, r.name, r.target.qualname) for r in references(pages["pkg/scopes.py"], site_symbols(pages))]


def test_nested_functions_global_and_nonlocal():
    source = '''def helper():
    return 1


def nested():
    def helper():
        return 2

    def inner():
        return helper()
    return helper() + inner()


def rebinding():
    global helper
    helper = nested
    return helper


def enclosing():
    helper = 0

    def bump():
        nonlocal helper
        helper += 1
        return helper
    return bump
'''
    # `nested` binds its own `helper` (seen in `inner` too); `global` makes `helper` the module's
    # again; `nonlocal` makes it `enclosing`'s.
    assert refs(source) == [(16, 13, "nested", "nested"), (17, 11, "helper", "helper")]


def test_comprehension_variables_lambdas_and_the_first_iterable():
    source = '''def helper(x):
    return x


values = [helper for helper in helper(3)]
pairs = {k: helper(k) for k in range(2)}
call = lambda helper: helper
late = lambda: helper
default = lambda x=helper: x
'''
    assert refs(source) == [
        (5, 31, "helper", "helper"),  # the first iterable is evaluated outside the comprehension
        (6, 12, "helper", "helper"),
        (8, 15, "helper", "helper"),
        (9, 19, "helper", "helper"),  # a default is evaluated outside the lambda
    ]


def test_class_bodies_decorators_defaults_and_self():
    source = '''def decorate(f):
    return f


class First:
    decorate = None

    def run(self):
        def later():
            return self.go()
        return decorate(later)

    def go(self):
        return 0


class Second:
    def go(self):
        class Inner:
            def run(self):
                return self.go()
        return Inner


def wrapped():
    @decorate
    def inner():
        return 1
    return inner


@decorate
def defaults(decorate=decorate, *, size: First = None) -> Second:
    return decorate


class Third:
    class Mid:
        def method(self):
            @decorate
            def deep():
                return 1
            return deep
'''
    assert refs(source) == [
        (10, 24, "go", "First.go"),  # `self` of the method, inside a nested function
        (11, 15, "decorate", "decorate"),  # the class attribute is not in the methods' scope
        # `self` of `Inner` is not a `Second`, and `go` is on two classes: no link on line 21.
        (26, 5, "decorate", "decorate"),  # above the line of `def inner`
        # Defaults, then decorators, then annotations: all outside the function's scope.
        (33, 22, "decorate", "decorate"),
        (32, 1, "decorate", "decorate"),
        (33, 41, "First", "First"),
        (33, 58, "Second", "Second"),
        (40, 13, "decorate", "decorate"),  # `deep` is not a site name: only its decorator links
    ]


def test_match_captures_bind_in_the_function():
    source = '''class Point:
    x = 0


def helper(value):
    return value


def matching(value):
    match value:
        case Point():
            return helper(value)
        case [helper]:
            return helper
'''
    # The capture `helper` makes `helper` local to the whole function, like an assignment.
    assert refs(source) == [(11, 13, "Point", "Point")]


def test_imports_aliases_and_module_aliases():
    source = '''from .models import Attention as Att, softmax
from . import models
import pkg.models as mods
import pkg.models
from outer.pkg.models import scores


def use(x, models=None):
    return Att(x), softmax(x), mods.scores(x, x), pkg.models.scores(x, x), models.scores, scores


def local(mods):
    return mods.scores(1, 2)


def make():
    return Att(1)
'''
    assert refs(source) == [
        (1, 20, "Attention", "Attention"),
        (1, 38, "softmax", "softmax"),
        (5, 29, "scores", "scores"),  # the source folder inside the package root
        (9, 11, "Att", "Attention"),
        (9, 19, "softmax", "softmax"),
        (9, 36, "scores", "scores"),  # through `mods`; a bare `import pkg.models` binds only `pkg`
        # The parameter `models` is not the module alias, nor `mods` in `local`.
        (9, 90, "scores", "scores"),
        (17, 11, "Att", "Attention"),
    ]


def test_f_strings_and_columns_in_characters():
    source = '''def helper(x):
    return x


text = f"{helper(1)}"
名前 = helper(2)
'''
    assert refs(source) == [(5, 10, "helper", "helper"), (6, 5, "helper", "helper")]


def test_a_page_without_site_names_has_no_references():
    assert refs("import torch\n\n\ndef f(x):\n    return torch.relu(x)\n") == []


def test_code_nested_too_deeply_to_walk_is_shown_unlinked():
    """A page Python can parse but the resolver cannot walk (a sum of thousands of terms nests
    that deep) keeps its code, without links, instead of failing the build."""
    code = "def helper():\n    return 1\n\n\nvalue = " + " + ".join(["helper()"] * 5000) + "\n"
    page = analyse("deep.py", "deep.html", code)
    assert references(page, site_symbols({"deep.py": page})) == []
