"""Linked code: a name in the code that is defined on the site links to the section defining it.

Runs once per build on the language-free `PageData` (after analysis, before localization), so
every language gets the same links. Hrefs are relative between pages, and each language's tree
mirrors the same layout, so one href works in all of them.

Which names link (resolution is done on the page's Python syntax tree, not by matching text, so a
local variable that happens to share a name with a function elsewhere is left alone):

1. **On the defining page**, a top-level class or function `N` links wherever the name `N` is read
   and refers to the module-level binding: not where a function parameter or local variable of
   the same name shadows it, and not after a dot (`F.softmax` is not our `softmax`).
2. **On another page**, `N` links only where that page imports it, `from .mha import N [as A]`
   or `from annotated_attention.mha import N`, or reads it through a module alias
   (`import annotated_attention.mha as mha` … `mha.N`). The import line's name links too.
   Without an import, a same-named variable elsewhere is a different thing and stays plain.
3. **Methods** `C.m`: `self.m` inside class `C` links to `C.m`. Elsewhere, `x.m` links to `C.m`
   only when `m` is defined as a method exactly once on the whole site and is not a common name:
   dunders, `forward`, and the names of methods of Python's built-in types and of the PyTorch
   classes code calls all the time (`view`, `to`, `split`, …) are never linked this way.

A page whose code does not parse (it is shown, so it may be a fragment) gets no links.
"""
from __future__ import annotations

import ast
import bisect
import html
import posixpath
import re
from dataclasses import dataclass, replace
from typing import AbstractSet, Any, Callable, Container, Iterable, Iterator, NamedTuple

from .page import PageData, SectionData
from ..read.structure import relative_url

# Method names never linked by rule 3: they mean something different on every class.
_BUILTIN_METHODS = {
    name
    for t in (str, bytes, list, dict, set, frozenset, tuple, int, float, complex, object)
    for name in dir(t)
}
_COMMON_METHODS = _BUILTIN_METHODS | {
    # torch.nn.Module
    "forward", "reset_parameters", "extra_repr", "to", "cuda", "cpu", "train", "eval", "parameters",
    "named_parameters", "buffers", "children", "modules", "state_dict", "load_state_dict",
    "zero_grad", "apply", "register_buffer", "half", "float", "double", "requires_grad_",
    # torch.Tensor and optimizers, schedulers, loaders
    "view", "reshape", "transpose", "permute", "size", "shape", "item", "tolist", "numpy", "sum",
    "mean", "max", "min", "backward", "step", "detach", "clone", "contiguous", "split", "chunk",
    "expand", "repeat", "flatten", "unsqueeze", "squeeze", "masked_fill", "softmax", "matmul",
    "__call__", "run", "main", "setup", "close", "open", "read", "write", "load", "save", "reset",
    "update", "get", "set", "add", "call", "init", "build", "encode", "decode", "sample",
}

_NAME_CLASSES = {"n", "nc", "nf", "fm", "nn", "nb", "bp", "nx", "nv", "vc", "vg", "vi", "vm"}
_TOKEN_RE = re.compile(r'<span class="([\w-]+)">([^<]*)</span>|([^<]+)|(<[^>]*>)')
_LINE_RE = re.compile(r'^<span class="line" data-line="(\d+)">(.*)</span>$', re.S)


@dataclass(frozen=True)
class Target:
    """Where a name is defined: a page (output URL) and a section id on it."""

    rel: str
    url: str
    section: str
    qualname: str


@dataclass(frozen=True)
class Ref:
    """One occurrence of a linked name in a page's code: 1-based line, 0-based character column."""

    line: int
    col: int
    name: str
    target: Target


@dataclass
class Symbols:
    """What the whole site defines, from `PageData.definitions`."""

    top: dict[str, dict[str, Target]]  # page rel → top-level name → target
    methods: dict[str, dict[str, Target]]  # page rel → "Class.method" → target
    unique_methods: dict[str, Target]  # method name → target, for names defined once site-wide
    modules: dict[str, str]  # dotted module path ("annotated_attention.mha") → page rel


def _module_path(rel: str) -> str:
    base = posixpath.splitext(rel)[0]
    if posixpath.basename(base) == "__init__":
        base = posixpath.dirname(base)
    return base.replace("/", ".")


def site_symbols(pages: dict[str, PageData]) -> Symbols:
    top: dict[str, dict[str, Target]] = {}
    methods: dict[str, dict[str, Target]] = {}
    by_method: dict[str, list[Target]] = {}
    modules: dict[str, str] = {}
    for rel, page in pages.items():
        if not page.is_python:
            continue
        modules[_module_path(rel)] = rel
        for qualname, section in page.definitions:
            target = Target(rel, page.url, section, qualname)
            parts = qualname.split(".")
            if len(parts) == 1:
                top.setdefault(rel, {})[qualname] = target
            elif len(parts) == 2:  # a method of a top-level class; nested classes are rare
                methods.setdefault(rel, {})[qualname] = target
                by_method.setdefault(parts[1], []).append(target)
    unique = {
        name: targets[0]
        for name, targets in by_method.items()
        if len(targets) == 1 and name not in _COMMON_METHODS and not (name.startswith("__") and name.endswith("__"))
    }
    return Symbols(top, methods, unique, modules)


def _resolve_module(importer_rel: str, module: str | None, level: int, symbols: Symbols) -> str | None:
    """The page a `from … import` / `import …` refers to, or None when it is not on the site."""
    if level:
        folder = posixpath.dirname(importer_rel)
        for _ in range(level - 1):
            folder = posixpath.dirname(folder)
        dotted = ".".join(p for p in (folder.replace("/", "."), module or "") if p)
        return symbols.modules.get(dotted)
    if not module:
        return None
    if module in symbols.modules:
        return symbols.modules[module]
    # The source folder may sit inside the package root: `pkg.sub.mod` with pages under `sub/`.
    # A page matches when its path is what follows one of the module's dots.
    tails = (module[i + 1 :] for i, char in enumerate(module) if char == ".")
    matches = [symbols.modules[tail] for tail in tails if tail in symbols.modules]
    return matches[0] if len(matches) == 1 else None


def page_source(page: PageData) -> str:
    """The page's code with every line at its real line number (prose lines left blank).

    Comments and docstrings became prose; blank lines in their place keep the code valid Python
    and keep the parser's line numbers equal to the highlighted ones.
    """
    last = max((s.code_end for s in page.sections if s.code), default=0)
    lines = [""] * last
    for s in page.sections:
        if s.code:
            for offset, text in enumerate(s.code.split("\n")):
                if s.code_start - 1 + offset < last:
                    lines[s.code_start - 1 + offset] = text
    return "\n".join(lines) + "\n"


def _stored_names(node: ast.AST) -> set[str]:
    """Names a function body binds (so they shadow module names inside it)."""
    names: set[str] = set()
    declared_global: set[str] = set()
    stack = _child_nodes(node)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
            stack.extend(n.decorator_list)
            continue  # their bodies are their own scopes
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, (ast.Store, ast.Del)):
                names.add(n.id)
            continue  # nothing inside
        if isinstance(n, (ast.Lambda, ast.Constant)):
            continue  # a lambda is a scope of its own; a constant holds nothing
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            declared_global.update(n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
        elif isinstance(n, ast.MatchAs) and n.name:
            names.add(n.name)
        stack.extend(_child_nodes(n))
    return names - declared_global


def _params(args: ast.arguments) -> set[str]:
    every = args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]
    return {a.arg for a in every}


class _Scope:
    """The names one function body or class statement binds, collected only when first asked:
    a scope is asked only when a name inside it could link, which few are."""

    __slots__ = ("_known", "_node", "_bound")

    def __init__(self, known: set[str], node: ast.AST) -> None:
        self._known = known  # bound without a walk (parameters)
        self._node = node  # `_stored_names` of it is the rest
        self._bound: set[str] | None = None

    def __contains__(self, name: str) -> bool:
        if name in self._known:
            return True
        if self._bound is None:
            self._bound = _stored_names(self._node)
        return name in self._bound


# -- where references can be ---------------------------------------------------------------

_symbol_names: tuple[Symbols, frozenset[str]] | None = None  # the last site's, see `_linkable_names`


def _linkable_names(symbols: Symbols) -> frozenset[str]:
    """Every name a reference can have: the site's top-level names (linked directly, imported or
    through a module alias) and its method names (`self.m`, unique methods). The same for all
    pages of a site, so it is kept for the last `Symbols` seen."""
    global _symbol_names
    if _symbol_names is None or _symbol_names[0] is not symbols:
        names = {name for defined in symbols.top.values() for name in defined}
        names.update(q.partition(".")[2] for defined in symbols.methods.values() for q in defined)
        names.update(symbols.unique_methods)
        _symbol_names = (symbols, frozenset(names))
    return _symbol_names[1]


_WORD_RE = re.compile(r"\w+")


class _HotLines:
    """The lines of a page's code on which a reference can be.

    A reference is always spelled out on its line (a name, an attribute after its dot, a name in
    an import), so a subtree whose lines contain none of the names that can link has nothing to
    link and the walk skips it. Lines with non-ASCII text always count: the parser normalizes
    such identifiers (NFKC), so their spelling may differ from the name. Code with a carriage return
    counts every line: the parser takes a lone one as a line break, so its line numbers differ.
    """

    def __init__(self, source: str, names: frozenset[str]) -> None:
        self.text = source.split("\n")
        self.names = names
        self.added: set[str] = set()  # names that link from some point on (see `add`)
        self.everywhere = "\r" in source
        self.lines = [n for n, line in enumerate(self.text, 1) if self._holds(line, names)]  # ascending

    @staticmethod
    def _holds(line: str, names: AbstractSet[str]) -> bool:
        return not line.isascii() or not names.isdisjoint(_WORD_RE.findall(line))

    def __bool__(self) -> bool:
        return self.everywhere or bool(self.lines)

    def add(self, name: str) -> None:
        """Count the lines of a name that links from now on (a name imported under an alias)."""
        if name not in self.names and name not in self.added:
            self.added.add(name)
            for n, line in enumerate(self.text, 1):
                if name in line and self._holds(line, {name}) and n not in self.lines:
                    bisect.insort(self.lines, n)

    def any(self, first: int, last: int) -> bool:
        """Whether a hot line lies in first..last."""
        if self.everywhere:
            return True
        i = bisect.bisect_left(self.lines, first)
        return i < len(self.lines) and self.lines[i] <= last


# -- the walk ------------------------------------------------------------------------------

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_BARE_FIELDS = {"ctx", "op", "ops"}  # contexts and operators: nodes with nothing inside


class _Kind(NamedTuple):
    """How the walk treats one node type (looked up once per type, not by name per node)."""

    visit: Callable[[_Resolver, Any], None] | None  # the `visit_…` method; None: visit the children
    children: tuple[str, ...]  # fields that may hold nodes, in `ast` order (as NodeVisitor visits)
    positioned: bool  # has line numbers, so can be skipped when none of its lines is hot
    decorated: bool  # a definition, whose decorators sit above its first line
    may_import: bool  # a statement (or `except`) that may be or hold a module-level import


_KINDS: dict[type, _Kind] = {}


def _kind(cls: type) -> _Kind:
    """`_KINDS[cls]`, made on first use."""
    kind = _KINDS.get(cls)
    if kind is None:
        kind = _KINDS[cls] = _Kind(
            getattr(_Resolver, "visit_" + cls.__name__, None),
            tuple(f for f in cls._fields if f not in _BARE_FIELDS),
            "lineno" in cls._attributes,
            issubclass(cls, _DEFINITIONS),
            issubclass(cls, (ast.stmt, ast.excepthandler)) and not issubclass(cls, _DEFINITIONS),
        )
    return kind


def _child_nodes(node: ast.AST) -> list[ast.AST]:
    """`ast.iter_child_nodes`, faster, and without contexts and operators (they hold nothing)."""
    found: list[ast.AST] = []
    for field in _kind(type(node)).children:
        value = getattr(node, field, None)
        if isinstance(value, ast.AST):
            found.append(value)
        elif isinstance(value, list):
            found.extend(item for item in value if isinstance(item, ast.AST))
    return found


class _Resolver:
    """Walks one module, collecting references to site definitions with scope-aware lookup.

    It visits nodes in the order `ast.NodeVisitor` would, but skips a subtree with no hot line
    (`_HotLines`, counting a definition's decorators): it holds no reference, and skipping it
    leaves the walk's state (scopes, classes) as visiting it would. The exception is an import at
    module level, which binds names for what follows: statements there are never skipped.
    Scopes collect the names they bind only when asked (`_Scope`).
    """

    def __init__(self, rel: str, symbols: Symbols, lines: list[str], hot: _HotLines) -> None:
        self.rel = rel
        self.symbols = symbols
        self.lines = lines
        self.hot = hot
        self.pruning = True  # off inside f-strings
        self.globals: dict[str, Target] = dict(symbols.top.get(rel, {}))
        self.module_aliases: dict[str, str] = {}  # local name → page rel
        self.shadow: list[Container[str]] = []  # names bound by each enclosing scope
        self.classes: list[str] = []  # enclosing class names, for `self.m`
        self.refs: list[Ref] = []

    def visit(self, node: ast.AST) -> None:
        kind = _KINDS.get(type(node)) or _kind(type(node))
        if kind.positioned and self.pruning and (self.shadow or not kind.may_import) and not self._hot(node, kind):
            return
        if kind.visit is not None:
            kind.visit(self, node)
        else:
            self.generic_visit(node)

    def _hot(self, node: Any, kind: _Kind) -> bool:
        first = node.decorator_list[0].lineno if kind.decorated and node.decorator_list else node.lineno
        return self.hot.any(first, node.end_lineno or node.lineno)

    def generic_visit(self, node: ast.AST) -> None:
        for child in _child_nodes(node):
            self.visit(child)

    # -- positions -------------------------------------------------------------------------

    def _col(self, line: int, byte_col: int) -> int:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        if text.isascii():  # one byte per character
            return min(byte_col, len(text))
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def _add(self, line: int, byte_col: int, name: str, target: Target) -> None:
        self.refs.append(Ref(line, self._col(line, byte_col), name, target))

    def _shadowed(self, name: str) -> bool:
        return any(name in scope for scope in self.shadow)

    # -- imports ---------------------------------------------------------------------------

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        source = _resolve_module(self.rel, node.module, node.level, self.symbols)
        for alias in node.names:
            local = alias.asname or alias.name
            if source is not None:
                target = self.symbols.top.get(source, {}).get(alias.name)
                if target is not None:
                    if not self.shadow:
                        self.globals[local] = target
                        self.hot.add(local)
                    self._add(alias.lineno, alias.col_offset, alias.name, target)
                    continue
            # `from . import mha` / `from annotated_attention import mha`: a module alias.
            dotted = ".".join(p for p in (node.module or "", alias.name) if p)
            sub = _resolve_module(self.rel, dotted, node.level, self.symbols)
            if sub is not None and not self.shadow:
                self.module_aliases[local] = sub

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:  # `import pkg.mod as m`; a bare `import pkg.mod` binds only `pkg`
                page = _resolve_module(self.rel, alias.name, 0, self.symbols)
                if page is not None and not self.shadow:
                    self.module_aliases[alias.asname] = page

    # -- scopes ----------------------------------------------------------------------------

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        # Defaults, annotations and decorators are evaluated in the enclosing scope.
        args = node.args
        for expr in [*args.defaults, *[d for d in args.kw_defaults if d is not None]]:
            self.visit(expr)
        if not isinstance(node, ast.Lambda):
            for expr in node.decorator_list:
                self.visit(expr)
            for a in args.posonlyargs + args.args + args.kwonlyargs + [x for x in (args.vararg, args.kwarg) if x]:
                if a.annotation is not None:
                    self.visit(a.annotation)
            if node.returns is not None:
                self.visit(node.returns)
        self.shadow.append(_Scope(_params(args), node))
        body = node.body if isinstance(node.body, list) else [node.body]
        for stmt in body:
            self.visit(stmt)
        self.shadow.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in [*node.decorator_list, *node.bases, *[k.value for k in node.keywords]]:
            self.visit(expr)
        self.classes.append(node.name)
        # A class body binds names for its own statements only, not for its methods.
        for stmt in node.body:
            if isinstance(stmt, _DEFINITIONS):
                self.visit(stmt)
            else:
                self.shadow.append(_Scope(set(), ast.Module(body=[stmt], type_ignores=[])))
                self.visit(stmt)
                self.shadow.pop()
        self.classes.pop()

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> None:
        targets: set[str] = set()
        for gen in node.generators:
            targets |= {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
        self.visit(node.generators[0].iter)  # the first iterable is evaluated outside
        self.shadow.append(targets)
        for i, gen in enumerate(node.generators):
            if i:
                self.visit(gen.iter)
            for cond in gen.ifs:
                self.visit(cond)
        for field in ("elt", "key", "value"):
            if hasattr(node, field):
                self.visit(getattr(node, field))
        self.shadow.pop()

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        # Before Python 3.12 the parser places an f-string's expressions by searching the
        # string's text, which can miss their real line: walk them all.
        pruning, self.pruning = self.pruning, False
        self.generic_visit(node)
        self.pruning = pruning

    # -- references ------------------------------------------------------------------------

    def visit_Name(self, node: ast.Name) -> None:
        target = self.globals.get(node.id)
        if target is not None and isinstance(node.ctx, ast.Load) and not self._shadowed(node.id):
            self._add(node.lineno, node.col_offset, node.id, target)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.visit(node.value)
        if not isinstance(node.ctx, ast.Load) or node.end_lineno is None or node.end_col_offset is None:
            return
        target = None
        value = node.value
        if isinstance(value, ast.Name) and value.id in self.module_aliases and not self._shadowed(value.id):
            target = self.symbols.top.get(self.module_aliases[value.id], {}).get(node.attr)
        elif isinstance(value, ast.Name) and value.id == "self" and self.classes:
            target = self.symbols.methods.get(self.rel, {}).get(f"{self.classes[-1]}.{node.attr}")
        if target is None:
            target = self.symbols.unique_methods.get(node.attr)
        if target is not None:
            # The attribute name ends the node: find its start from the end, in characters.
            end = self._col(node.end_lineno, node.end_col_offset)
            self.refs.append(Ref(node.end_lineno, end - len(node.attr), node.attr, target))


def references(page: PageData, symbols: Symbols) -> list[Ref]:
    """Every linkable name occurrence in the page's code."""
    if not page.is_python or not page.sections:
        return []
    source = page_source(page)
    hot = _HotLines(source, _linkable_names(symbols))
    if not hot:  # no name on the page can link: nothing to parse
        return []
    try:
        tree = ast.parse(source)
        resolver = _Resolver(page.rel, symbols, hot.text, hot)
        # Module-level names first, so uses above a definition (in functions) still resolve.
        for stmt in tree.body:
            resolver.visit(stmt)
    except (SyntaxError, ValueError, RecursionError):  # code too deeply nested: shown unlinked
        return []
    return resolver.refs


def _href(page: PageData, target: Target) -> str:
    if target.rel == page.rel:
        return f"#{target.section}"
    return f"{relative_url(page.url, target.url)}#{target.section}"


def _link_line(line_html: str, refs: dict[int, Ref], page: PageData) -> str:
    out: list[str] = []
    col = 0
    for m in _TOKEN_RE.finditer(line_html):
        cls, text, plain, tag = m.groups()
        if tag is not None:
            out.append(tag)
            continue
        raw = html.unescape(text if cls else plain)
        ref = refs.get(col) if cls in _NAME_CLASSES else None
        if ref is not None and raw == ref.name:
            href = html.escape(_href(page, ref.target), quote=True)
            title = html.escape(ref.target.qualname, quote=True)
            out.append(f'<a class="def-link" href="{href}" title="{title}">{m.group(0)}</a>')
        else:
            out.append(m.group(0))
        col += len(raw)
    return "".join(out)


def link_section(section: SectionData, refs: dict[int, dict[int, Ref]], page: PageData) -> SectionData:
    """The section with its linkable names wrapped in `<a class="def-link">`."""
    if not section.code_html or not any(line in refs for line in range(section.code_start, section.code_end + 1)):
        return section
    head, sep, rest = section.code_html.partition("<code>")
    body, sep2, tail = rest.rpartition("</code>")
    if not sep or not sep2:
        return section
    rows = []
    for row in body.split("\n"):
        m = _LINE_RE.match(row)
        if m and int(m.group(1)) in refs:
            inner = _link_line(m.group(2), refs[int(m.group(1))], page)
            row = f'<span class="line" data-line="{m.group(1)}">{inner}</span>'
        rows.append(row)
    return replace(section, code_html=head + sep + "\n".join(rows) + sep2 + tail)


def link_page(page: PageData, refs: Iterable[Ref]) -> PageData:
    by_line: dict[int, dict[int, Ref]] = {}
    for ref in refs:
        by_line.setdefault(ref.line, {})[ref.col] = ref
    if not by_line:
        return page
    return replace(page, sections=tuple(link_section(s, by_line, page) for s in page.sections))


def link_code(pages: dict[str, PageData]) -> dict[str, PageData]:
    """Every page with its code linked to definitions on the site. Pure: the inputs are unchanged."""
    symbols = site_symbols(pages)
    return {rel: link_page(page, references(page, symbols)) for rel, page in pages.items()}


def iter_links(code_html: str) -> Iterator[tuple[str, str]]:
    """(href, name) of every definition link in some code HTML; for tests and checks."""
    for m in re.finditer(r'<a class="def-link" href="([^"]*)"[^>]*><span class="[\w-]+">([^<]*)</span></a>', code_html):
        yield html.unescape(m.group(1)), html.unescape(m.group(2))
