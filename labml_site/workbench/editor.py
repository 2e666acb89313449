"""`translate --lang L`: build the site in L, serve it with the editor, rebuild on outside changes."""
from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from ..builder.config import BuildConfig
from .server import make_server
from .session import Session


def git_user_name(cwd: Path | None = None) -> str:
    """`git config user.name`, or "" (no git, no repository, no name)."""
    try:
        done = subprocess.run(["git", "config", "user.name"], cwd=cwd, capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def start(config: BuildConfig, lang: str, port: int = 0, reviewer: str = "", memory: tuple[Path, ...] = ()):
    """Build and start serving (in a thread); returns (session, server, url to open). `memory`:
    folders of other translation files whose entries the translation memory also offers."""
    config.live_reload = True  # the build cache stays in memory between saves
    session = Session(config, lang, reviewer, memory)
    server, token = make_server(session, port)  # the port first: a busy one fails before a build
    try:
        session.rebuild()
    except BaseException:
        server.server_close()
        raise
    threading.Thread(target=server.serve_forever, daemon=True).start()
    threading.Thread(target=session.load_memory, daemon=True, name="translation-memory").start()
    url = f"http://127.0.0.1:{server.server_address[1]}/?token={token}"
    return session, server, url


def watch(session: Session, stop: threading.Event | None = None) -> None:
    """Rebuild after outside changes to the sources, translations or theme (an editor's own
    saves rebuild at once; their change notifications then find nothing new)."""
    from watchfiles import watch as watch_files

    config = session.config
    paths = [p for p in (config.source, config.translations, config.templates) if Path(p).exists()]
    for _changes in watch_files(*paths, stop_event=stop, debounce=50, step=20):
        try:
            session.rebuild()
        except Exception as e:  # keep serving the last good site
            print(f"rebuild failed, still serving the previous site: {e}", file=sys.stderr)
