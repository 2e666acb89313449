"""`build.py serve`: build, serve the site on 127.0.0.1, rebuild when a source changes.

Pages served here get a tiny script (added in the response, never written to disk) that reloads
the page when a rebuild finishes, so an edit shows up without touching the browser. The script
long-polls: `GET /__labml_site_build?after=N` answers as soon as the build number is no longer N
(or after a while, with the same number), so the reload follows the rebuild immediately instead
of at the next tick of a timer. Rebuilds go through the build cache (cache.py), kept in memory
between builds, so only the files an edit touched are analysed and rendered again.
"""
from __future__ import annotations

import http.server
import threading
from functools import partial
from pathlib import Path
from typing import Callable
from urllib.parse import parse_qs, urlsplit

RELOAD_PATH = "/__labml_site_build"
LONG_POLL_SECONDS = 25.0  # below common proxy and browser idle timeouts
_RELOAD_SCRIPT = (
    "<script>(function(){var v=null;function poll(){"
    "fetch('%s'+(v===null?'':'?after='+encodeURIComponent(v)),{cache:'no-store'})"
    ".then(function(r){return r.text()})"
    ".then(function(t){if(v!==null&&t!==v){location.reload();return}v=t;poll()})"
    ".catch(function(){setTimeout(poll,1000)})}poll()})();</script>"
    % RELOAD_PATH
)


class _State:
    """The number of the last finished build; waiters are woken when it changes."""

    def __init__(self) -> None:
        self.build_id = 0
        self.lock = threading.Lock()  # held while a rebuild runs
        self.changed = threading.Condition()

    def bump(self) -> None:
        with self.changed:
            self.build_id += 1
            self.changed.notify_all()

    def wait_for_change(self, after: int, timeout: float) -> int:
        with self.changed:
            self.changed.wait_for(lambda: self.build_id != after, timeout=timeout)
            return self.build_id


class _Handler(http.server.SimpleHTTPRequestHandler):
    state: _State

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - keep the terminal for build logs
        pass

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        url = urlsplit(self.path)
        if url.path == RELOAD_PATH:
            after = parse_qs(url.query).get("after", [""])[0]
            build_id = self.state.build_id
            if after.isdigit():
                build_id = self.state.wait_for_change(int(after), LONG_POLL_SECONDS)
            self._send(200, str(build_id).encode(), "text/plain")
            return
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if path.suffix == ".html" and path.is_file():
            body = path.read_bytes().replace(b"</body>", _RELOAD_SCRIPT.encode() + b"</body>", 1)
            self._send(200, body, "text/html; charset=utf-8")
            return
        if not path.exists():
            not_found = Path(self.directory) / "404.html"
            if not_found.is_file():
                self._send(404, not_found.read_bytes(), "text/html; charset=utf-8")
                return
        super().do_GET()


def make_server(directory: Path, port: int = 8000, host: str = "127.0.0.1") -> tuple[http.server.ThreadingHTTPServer, _State]:
    """A server for `directory` on loopback only: a preview, never a public web server."""
    state = _State()
    handler = type("Handler", (_Handler,), {"state": state})
    server = http.server.ThreadingHTTPServer((host, port), partial(handler, directory=str(directory)))
    server.daemon_threads = True  # long-polling requests must not keep the process alive
    return server, state


def rebuild_now(rebuild: Callable[[], None], state: _State) -> None:
    """Run one rebuild and tell waiting pages about it."""
    with state.lock:
        rebuild()
        state.bump()


def watch_and_rebuild(paths: list[Path], rebuild: Callable[[], None], state: _State, stop: threading.Event | None = None) -> None:
    """Block, rebuilding after each batch of changes under `paths`."""
    from watchfiles import watch

    # A short debounce: editors save in one or two writes, and the rebuild itself is incremental.
    for _changes in watch(*[p for p in paths if p.exists()], stop_event=stop, debounce=30, step=10):
        rebuild_now(rebuild, state)
