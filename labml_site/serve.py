"""`build.py serve`: build, serve the site on 127.0.0.1, rebuild when a source changes.

Pages served here get a tiny polling script (added in the response, never written to disk) that
reloads the page when a rebuild finishes, so an edit shows up without touching the browser.
"""
from __future__ import annotations

import http.server
import threading
from functools import partial
from pathlib import Path
from typing import Callable

RELOAD_PATH = "/__labml_site_build"
_RELOAD_SCRIPT = (
    "<script>(function(){var v=null;setInterval(function(){fetch('%s').then(function(r){return r.text()})"
    ".then(function(t){if(v!==null&&t!==v){location.reload()}v=t}).catch(function(){})},250)})();</script>"
    % RELOAD_PATH
)


class _State:
    def __init__(self) -> None:
        self.build_id = 0
        self.lock = threading.Lock()


class _Handler(http.server.SimpleHTTPRequestHandler):
    state: _State

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - keep the terminal for build logs
        pass

    def do_GET(self) -> None:  # noqa: N802
        if self.path == RELOAD_PATH:
            body = str(self.state.build_id).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if path.suffix == ".html" and path.is_file():
            body = path.read_bytes().replace(b"</body>", _RELOAD_SCRIPT.encode() + b"</body>", 1)
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if not path.exists():
            not_found = Path(self.directory) / "404.html"
            if not_found.is_file():
                body = not_found.read_bytes()
                self.send_response(404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
        super().do_GET()


def make_server(directory: Path, port: int = 8000, host: str = "127.0.0.1") -> tuple[http.server.ThreadingHTTPServer, _State]:
    """A server for `directory` on loopback only: a preview, never a public web server."""
    state = _State()
    handler = type("Handler", (_Handler,), {"state": state})
    server = http.server.ThreadingHTTPServer((host, port), partial(handler, directory=str(directory)))
    return server, state


def watch_and_rebuild(paths: list[Path], rebuild: Callable[[], None], state: _State, stop: threading.Event | None = None) -> None:
    """Block, rebuilding after each batch of changes under `paths`."""
    from watchfiles import watch

    for _changes in watch(*[p for p in paths if p.exists()], stop_event=stop, debounce=50, step=20):
        with state.lock:
            rebuild()
            state.build_id += 1
