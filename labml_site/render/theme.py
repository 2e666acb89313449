"""The theme: Jinja2 templates and static files, compiled once per build."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
from jinja2 import Environment, FileSystemBytecodeCache, FileSystemLoader, StrictUndefined, TemplateError, select_autoescape

DEFAULT_TEMPLATES = Path(__file__).resolve().parent.parent / "theme"  # shipped inside the package


class Theme:
    """A folder of Jinja2 templates plus `static/` files copied into the site as they are."""

    def __init__(self, templates_dir: Path = DEFAULT_TEMPLATES, compiled_dir: Path | None = None) -> None:
        """`compiled_dir`: where compiled templates are kept between processes (checked against
        each template's source, so an edited template is compiled again)."""
        self.dir = Path(templates_dir)
        if not (self.dir / "page.html").exists():
            raise FileNotFoundError(
                f"templates folder {self.dir} has no page.html: pass --templates DIR pointing at a theme"
            )
        self.env = Environment(
            loader=FileSystemLoader(str(self.dir)),
            autoescape=select_autoescape(["html", "xml"]),
            undefined=StrictUndefined,  # a typo in a template fails the build instead of printing nothing
            trim_blocks=True,
            lstrip_blocks=True,
            auto_reload=False,
            bytecode_cache=_bytecode_cache(compiled_dir),
        )
        self._templates: dict[str, Any] = {}

    @property
    def static_dir(self) -> Path:
        return self.dir / "static"

    def render(self, name: str, **context: Any) -> str:
        return self._template(name).render(**context)

    def _template(self, name: str) -> Any:
        template = self._templates.get(name)
        if template is None:
            template = self._templates[name] = self.env.get_template(name)
        return template

    def compile_all(self) -> None:
        """Compile the theme's templates now (before forking workers, which then share them). A
        template that does not compile is left for the render that uses it to report."""
        for name in self.env.list_templates(filter_func=lambda n: n.endswith(".html")):
            try:
                self._template(name)
            except TemplateError:
                pass

    def fingerprint(self) -> str:
        """A hash of every template and static file, so caches notice theme edits."""
        import hashlib

        digest = hashlib.sha256()
        for path in sorted(p for p in self.dir.rglob("*") if p.is_file()):
            digest.update(str(path.relative_to(self.dir)).encode())
            digest.update(path.read_bytes())
        return digest.hexdigest()


class _SafeBytecodeCache(FileSystemBytecodeCache):
    """Jinja's file cache, where a damaged entry of any kind is a miss (compiled again), never
    a crash."""

    def load_bytecode(self, bucket) -> None:  # type: ignore[override]
        try:
            super().load_bytecode(bucket)
        except Exception:  # noqa: BLE001 - truncated, garbled or foreign files alike
            bucket.reset()


def _bytecode_cache(folder: Path | None) -> FileSystemBytecodeCache | None:
    if folder is None:
        return None
    # One folder per Jinja version: compiled code is only valid for the version that made it.
    folder = Path(folder) / f"jinja-{jinja2.__version__}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # compiling every time is slower, not wrong
    return _SafeBytecodeCache(str(folder))
