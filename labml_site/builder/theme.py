"""The theme: Jinja2 templates and static files, compiled once per build."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import meta
from jinja2 import Environment, FileSystemBytecodeCache, FileSystemLoader, StrictUndefined, TemplateError, select_autoescape

from .config import DEFAULT_TEMPLATES


# The templates the builder renders pages with (builder/site.py names them), and the files
# under static/ that the builder writes itself rather than copies from the theme.
REQUIRED_TEMPLATES = ("page.html", "source.html", "status.html", "404.html", "search.html")
BUILT_STATIC = frozenset({"pygments.css"})


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

    def files(self) -> list[Path]:
        """Every template and static file: what the theme's outputs are made of (the memo layer
        digests them)."""
        return sorted(p for p in self.dir.rglob("*") if p.is_file())


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


# `{{ static }}style.css`, `{{ root }}static/site.js`: the static files a template links.
_STATIC_REF = re.compile(r"\{\{\s*(?:static\s*\}\}|root\s*\}\}static/)([^\"'\s<>{}?#]+)")
_CSS_URL = re.compile(r"""url\(\s*["']?([^"')]+?)["']?\s*\)""")


def theme_problems(folder: Path) -> list[str]:
    """What a theme lacks before it can build a site, each as "what (who needs it)": the
    templates the builder renders, those they extend, include or import, the static files they
    link, the files a static stylesheet's `url()` names; and templates that do not parse,
    as "name:line: message". Empty when the theme is whole."""
    folder = Path(folder)
    env = Environment(loader=FileSystemLoader(str(folder)))
    problems: list[str] = []
    queue = [(name, "rendered by the builder") for name in REQUIRED_TEMPLATES]
    seen: set[str] = set()
    while queue:
        name, needed_by = queue.pop(0)
        if name in seen:
            continue
        seen.add(name)
        path = folder / name
        if not path.is_file():
            problems.append(f"{name} ({needed_by})")
            continue
        try:
            source = path.read_text(encoding="utf-8")
            tree = env.parse(source, name, str(path))
        except (OSError, UnicodeDecodeError) as e:
            problems.append(f"{name} (unreadable: {getattr(e, 'strerror', None) or e})")
            continue
        except TemplateError as e:
            problems.append(f"{name}:{getattr(e, 'lineno', 0) or 0}: {getattr(e, 'message', None) or e}")
            continue
        queue += [(ref, f"used by {name}") for ref in meta.find_referenced_templates(tree) if ref]
        for ref in dict.fromkeys(_STATIC_REF.findall(source)):
            if ref not in BUILT_STATIC and not (folder / "static" / ref).is_file():
                problems.append(f"static/{ref} (linked from {name})")
    static = folder / "static"
    if static.is_dir():
        for css in sorted(static.rglob("*.css")):
            try:
                text = css.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for url in dict.fromkeys(_CSS_URL.findall(text)):
                if re.match(r"^(?:[a-z][a-z0-9+.-]*:|/|#)", url, re.I):
                    continue  # data:, another site, the site's root: not a theme file
                if not (css.parent / url.split("?")[0].split("#")[0]).is_file():
                    rel = css.relative_to(folder).as_posix()
                    problems.append(f"{(css.parent / url).relative_to(folder).as_posix()} (named by {rel})")
    return problems
