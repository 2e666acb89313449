"""The package's shape: no import cycles between modules, and packages that only import the
stages before them (read → typeset → translate → render → builder → workbench → cli), so each can be read
and changed knowing only what comes before it. Every import counts, including those inside
functions and under `TYPE_CHECKING`: a cycle hidden in a function is still a cycle to a reader."""
from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "labml_site"

# A package may import itself, the packages to its left, and the top-level modules.
LAYERS = ["read", "typeset", "translate", "render", "builder", "workbench", "cli"]
TOP_LEVEL = {"labml_site", "labml_site.findings", "labml_site.errors", "labml_site.__main__"}


def _module_name(path: Path) -> str:
    parts = ["labml_site", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("labml_site"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.startswith("labml_site"):
                target = node.module
            else:
                continue
            for alias in node.names:  # `from pkg import module` imports the module
                candidate = f"{target}.{alias.name}"
                found.add(candidate if candidate in modules else target)
    return {m for m in found if m != name}


def graph() -> dict[str, set[str]]:
    paths = [p for p in PACKAGE.rglob("*.py") if "theme" not in p.parts]
    modules = {_module_name(p) for p in paths}
    return {_module_name(p): {m for m in _imports(p, modules) if m in modules} for p in paths}


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def test_no_import_cycles():
    # `__init__` re-exports make a package depend on its modules; leave them out of cycles.
    edges = {m: {t for t in ts if not PACKAGE.joinpath(*t.split(".")[1:], "__init__.py").exists()} for m, ts in graph().items()}
    assert _cycle(edges) is None, f"import cycle: {' → '.join(_cycle(edges))}"


def test_packages_import_only_earlier_stages():
    wrong = []
    for module, targets in graph().items():
        here = _layer(module)
        for target in targets:
            there = _layer(target)
            if here is None and module not in TOP_LEVEL:
                wrong.append(f"{module} is outside every stage package")
            elif here is None or there is None:
                if module in TOP_LEVEL - {"labml_site.__main__"} and there is not None:
                    wrong.append(f"{module} (a shared module) imports the stage {target}")
            elif there > here:
                wrong.append(f"{module} imports {target}, a later stage")
    assert not wrong, "\n".join(sorted(set(wrong)))


def test_checker_sees_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


# ---------------------------------------------------------------------------------------------
# One vocabulary for the markup of prose (`read/markup.py`): no other module defines a block-tag
# set or the placeholder's form or pattern, in Python or in the JavaScript shipped with the package.

VOCABULARY = PACKAGE / "read" / "markup.py"
_BLOCK_NAMES = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "blockquote", "table", "pre", "div", "dl"}
_PLACEHOLDER_SIGNS = ("_^_", r"_\^_", "translate=no")
_ALTERNATION = re.compile(r"[A-Za-z0-9\[\]-]+(?:\|[A-Za-z0-9\[\]-]+)+")


def _block_names(words: list[str]) -> set[str]:
    found = set()
    for word in words:
        if word in ("h[1-6]", "h[1-5]"):
            found |= {"h1", "h2", "h3"}
        elif word in _BLOCK_NAMES:
            found.add(word)
    return found


def _vocabulary_in_text(text: str) -> str | None:
    """What a piece of source text (a string, a regular expression) defines that only the
    vocabulary may: the placeholder's form, or an alternation of three block tags or more."""
    for sign in _PLACEHOLDER_SIGNS:
        if sign in text:
            return f"the placeholder ({sign!r})"
    for m in _ALTERNATION.finditer(text):
        if len(_block_names(m.group(0).split("|"))) >= 3:
            return f"a block-tag pattern ({m.group(0)!r})"
    return None


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def vocabulary_outside(path: Path, source: str) -> list[str]:
    """Definitions of prose markup in one Python module (docstrings, which describe, aside)."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    wrong = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            what = _vocabulary_in_text(node.value)
            if what:
                wrong.append(f"{path}:{node.lineno} defines {what}")
        elif isinstance(node, (ast.Set, ast.List, ast.Tuple)):
            words = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(_block_names(words)) >= 3:
                wrong.append(f"{path}:{node.lineno} defines a block-tag set {sorted(_block_names(words))}")
    return wrong


_JS_STRING_ARRAY = re.compile(r"\[\s*(\"[a-z0-9]+\"\s*(?:,\s*\"[a-z0-9]+\"\s*)+)\]")


def vocabulary_in_javascript(path: Path, source: str) -> list[str]:
    wrong = []
    for number, line in enumerate(source.split("\n"), 1):
        code = line.split("//", 1)[0] if not line.lstrip().startswith(("*", "/*")) else ""
        what = _vocabulary_in_text(code)
        if what is None:
            for m in _JS_STRING_ARRAY.finditer(code):
                if len(_block_names(re.findall(r'"([a-z0-9]+)"', m.group(1)))) >= 3:
                    what = f"a block-tag set ({m.group(0)})"
        if what:
            wrong.append(f"{path}:{number} defines {what}")
    return wrong


def test_prose_markup_is_defined_only_in_the_vocabulary():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path != VOCABULARY:
            wrong += vocabulary_outside(path.relative_to(PACKAGE), path.read_text(encoding="utf-8"))
    for path in sorted(PACKAGE.rglob("*.js")):
        if "vendor" not in path.parts:
            wrong += vocabulary_in_javascript(path.relative_to(PACKAGE), path.read_text(encoding="utf-8"))
    assert not wrong, "define these in labml_site/read/markup.py and read them from there:\n" + "\n".join(wrong)


def test_vocabulary_checker_sees_definitions():
    assert vocabulary_outside(Path("x.py"), 'BLOCKS = frozenset({"p", "ul", "h2", "em"})\n')
    assert vocabulary_outside(Path("x.py"), 'RX = re.compile(r"</?(?:p|div|ul|hr)>")\n')
    assert vocabulary_outside(Path("x.py"), 'PH = "<span translate=no>_^_%d_^_</span>"\n')
    assert vocabulary_in_javascript(Path("x.js"), 'if (/^(p|div|ul|ol|h[1-6])$/.test(tag)) {}')
    assert vocabulary_in_javascript(Path("x.js"), 'var PH = /<span translate=no>_\\^_(\\d+)_\\^_<\\/span>/g;')
    assert vocabulary_in_javascript(Path("x.js"), 'var B = ["p", "li", "ul", "h1"];')
    # a docstring may describe the format, and other tag sets are no block-tag sets
    assert not vocabulary_outside(Path("x.py"), '"""Keys hold `<span translate=no>_^_N_^_</span>`."""\nV = {"br", "img", "hr"}\n')
    assert not vocabulary_in_javascript(Path("x.js"), 'var t = a || b || c; // p|div|ul in a comment')


# ---------------------------------------------------------------------------------------------
# One memo layer (`builder/memo.py`): no other module builds a cache digest. The storage tier
# (`builder/cache.py`) hashes what it stores (file bytes, pack names); everything else asks the
# memo layer, so that a digest always names the stage and every input it declares.

DIGEST_OWNERS = {PACKAGE / "builder" / "memo.py", PACKAGE / "builder" / "cache.py"}
_DIGEST_NAMES = {"digest", "value_digest", "fingerprint_of", "builder_fingerprint"}


def digests_outside(path: Path, source: str) -> list[str]:
    """Where a module builds a cache digest by hand: imports the store's hashing, or hashes with
    hashlib (a theme's fingerprint aside, which the memo layer takes as an input)."""
    wrong = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "cache":
            names = {a.name for a in node.names} & _DIGEST_NAMES
            if names:
                wrong.append(f"{path}:{node.lineno} imports {sorted(names)} from the cache")
        elif isinstance(node, ast.Attribute) and node.attr in {"value_digest", "digest_of"} | {"key"} and isinstance(node.value, ast.Name) and node.value.id in ("store", "cache", "build_cache", "Engine", "engine"):
            wrong.append(f"{path}:{node.lineno} builds a digest with {node.value.id}.{node.attr}")
        elif isinstance(node, ast.Attribute) and node.attr == "digest" and isinstance(node.value, ast.Name) and node.value.id in ("store", "cache", "build_cache"):
            wrong.append(f"{path}:{node.lineno} builds a digest with {node.value.id}.digest")
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and path.parts[0] == "builder":
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if "hashlib" in modules:
                wrong.append(f"{path}:{node.lineno} hashes with hashlib")
    return wrong


def test_cache_digests_are_built_only_by_the_memo_layer():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path not in DIGEST_OWNERS:
            wrong += digests_outside(path.relative_to(PACKAGE), path.read_text(encoding="utf-8"))
    assert not wrong, "ask builder/memo.py for digests (Memo.digest, Memo.call, Memo.output_digest):\n" + "\n".join(wrong)


def test_digest_checker_sees_hand_made_digests():
    assert digests_outside(Path("builder/x.py"), "from .cache import digest\n")
    assert digests_outside(Path("builder/x.py"), "key = store.value_digest(inputs)\n")
    assert digests_outside(Path("builder/x.py"), "key = Engine.key('page', rel)\n")
    assert digests_outside(Path("builder/x.py"), "import hashlib\n")
    assert not digests_outside(Path("builder/x.py"), "key = memo.digest(stage, rel)\n")


# ---------------------------------------------------------------------------------------------
# Rendering does no I/O: render/ turns data into text; the builder reads and writes at the edges.

RENDER = PACKAGE / "render"
_IO_MODULES = {"os", "shutil", "pathlib", "tempfile", "subprocess", "socket", "glob", "urllib.request", "http.client"}
_IO_CALLS = {"open"}
_IO_METHODS = {
    "read_bytes", "read_text", "write_bytes", "write_text", "open", "mkdir", "unlink", "rmdir",
    "touch", "iterdir", "glob", "rglob", "exists", "is_file", "is_dir", "stat", "lstat", "readlink", "chmod",
}
_IO_NAMES = {"FileSystemLoader", "FileSystemBytecodeCache"}


def io_in(path: Path, source: str) -> list[str]:
    wrong = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            wrong += [f"{path}:{node.lineno} imports {a.name}" for a in node.names if a.name in _IO_MODULES]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module in _IO_MODULES:
            wrong.append(f"{path}:{node.lineno} imports from {node.module}")
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in _IO_CALLS:
                wrong.append(f"{path}:{node.lineno} calls {func.id}()")
            elif isinstance(func, ast.Attribute) and func.attr in _IO_METHODS:
                wrong.append(f"{path}:{node.lineno} calls .{func.attr}()")
        elif isinstance(node, ast.Name) and node.id in _IO_NAMES:
            wrong.append(f"{path}:{node.lineno} uses {node.id}")
    return wrong


def test_render_does_no_io():
    wrong = []
    for path in sorted(RENDER.rglob("*.py")):
        wrong += io_in(path.relative_to(PACKAGE), path.read_text(encoding="utf-8"))
    assert not wrong, "rendering does no I/O: read and write in builder/ and hand render/ the data:\n" + "\n".join(wrong)


def test_io_checker_sees_io():
    assert io_in(Path("render/x.py"), "import os\n")
    assert io_in(Path("render/x.py"), "from pathlib import Path\n")
    assert io_in(Path("render/x.py"), "data = open(name).read()\n")
    assert io_in(Path("render/x.py"), "text = path.read_text()\n")
    assert io_in(Path("render/x.py"), "loader = FileSystemLoader(folder)\n")
    assert not io_in(Path("render/x.py"), "text = text.replace('a', 'b')\nparts = name.split('/')\n")
