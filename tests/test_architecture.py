"""The package's shape: no import cycles between modules, and packages that only import the
stages before them (read → typeset → translate → render → builder → workbench → cli), so each can be read
and changed knowing only what comes before it. Every import counts, including those inside
functions and under `TYPE_CHECKING`: a cycle hidden in a function is still a cycle to a reader."""
from __future__ import annotations

import ast
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
