"""`build.py serve`: build, serve the site on 127.0.0.1, rebuild when a source changes.

Pages served here get a tiny script (added in the response, never written to disk) that reloads
the page when a rebuild finishes, so an edit shows up without touching the browser. The script
long-polls: `GET /__labml_site_build?after=N` answers as soon as the build number is no longer N
(or after a while, with the same number), so the reload follows the rebuild immediately instead
of at the next tick of a timer. Rebuilds go through the build cache (cache.py), kept in memory
between builds, so only the files an edit touched are analysed and rendered again.

It is a preview for the person at this machine, never a web server, and it defends itself as one:
it listens on 127.0.0.1; it answers only requests whose Host is `127.0.0.1`, `localhost` or
`[::1]` (with any port), so a web page cannot reach it through DNS rebinding (421 otherwise); a
query it does not understand gets 400; the server itself (`local_http.py`, shared with the
editor's) serves at most `MAX_CONNECTIONS` connections at once (the others get 503), closes a
connection that sends nothing for `IDLE_TIMEOUT` seconds or dribbles its request, sends a
restrictive Content-Security-Policy with every response (so the reload script is a file,
`/__labml_site_build.js`, not inline) and takes a closed tab in its stride.
"""
from __future__ import annotations

import html
import re
import sys
import threading
from functools import partial
from pathlib import Path
from typing import Callable
from urllib.parse import parse_qs, urlsplit

from .local_http import IDLE_TIMEOUT, MAX_CONNECTIONS, GuardedHandler, GuardedServer, guarded_handler

RELOAD_PATH = "/__labml_site_build"
RELOAD_SCRIPT_PATH = RELOAD_PATH + ".js"
LONG_POLL_SECONDS = 25.0  # below common proxy and browser idle timeouts
WATCH_STEP_MS = 5  # measured: a step of 10 ms made a save wait 15 ms for its batch, 5 ms about 6 ms
ALLOWED_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})
_HOST_RE = re.compile(r"(\[[0-9a-fA-F:.]+\]|[^:\[\]]+)(?::(\d{1,5}))?")
_BUILD_NUMBER_RE = re.compile(r"\d{1,18}")


def host_allowed(host: str | None) -> bool:
    """Whether a request's Host header names this machine's loopback (any port)."""
    if not host:
        return False
    m = _HOST_RE.fullmatch(host.strip())
    return bool(m) and m.group(1).lower().rstrip(".") in ALLOWED_HOSTS
_RELOAD_JS = (
    "(function(){var v=null;function poll(){"
    "fetch('%s'+(v===null?'':'?after='+encodeURIComponent(v)),{cache:'no-store'})"
    ".then(function(r){return r.text()})"
    ".then(function(t){if(v!==null&&t!==v){location.reload();return}v=t;poll()})"
    ".catch(function(){setTimeout(poll,1000)})}poll()})();\n"
    % RELOAD_PATH
).encode()
_RELOAD_SCRIPT = f'<script src="{RELOAD_SCRIPT_PATH}"></script>'  # a file: the policy allows no inline script


def _errors_box(errors: tuple[str, ...]) -> str:
    """The last build's errors over the page being previewed (which is the last good version of
    a page whose source stopped parsing): the author sees what to fix without leaving the page."""
    if not errors:
        return ""
    lines = "\n".join(html.escape(e) for e in errors[:50])
    more = f"\n… and {len(errors) - 50} more" if len(errors) > 50 else ""
    return (
        '<div id="labml-build-errors" role="alert" style="position:fixed;inset:auto 0 0 0;z-index:99;'
        "max-height:40vh;overflow:auto;margin:0;padding:.75em 1em;background:#fff3f3;color:#7a0000;"
        'border-top:3px solid #c00;font:14px/1.4 monospace">'
        f"<strong>The last build has errors; this page may be its last good version.</strong>"
        f"<pre style=\"margin:.5em 0 0;white-space:pre-wrap\">{lines}{more}</pre></div>"
    )


class _State:
    """The number of the last finished build; waiters are woken when it changes."""

    def __init__(self) -> None:
        self.build_id = 0
        self.lock = threading.Lock()  # held while a rebuild runs
        self.changed = threading.Condition()
        self.errors: tuple[str, ...] = ()  # the last build's errors, shown over every page

    def report(self, errors: list[str]) -> None:
        """The errors of the build that just ended (file:line: message), or none."""
        self.errors = tuple(errors)

    def bump(self) -> None:
        with self.changed:
            self.build_id += 1
            self.changed.notify_all()

    def wait_for_change(self, after: int, timeout: float) -> int:
        with self.changed:
            self.changed.wait_for(lambda: self.build_id != after, timeout=timeout)
            return self.build_id


class _Handler(GuardedHandler):
    state: _State

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _refuse(self, status: int, why: str) -> None:
        self.close_connection = True
        self._send(status, (why + "\n").encode(), "text/plain; charset=utf-8")

    def _host_ok(self) -> bool:
        if host_allowed(self.headers.get("Host")):
            return True
        self._refuse(421, "this preview answers only requests for 127.0.0.1 or localhost")
        return False

    def do_HEAD(self) -> None:  # noqa: N802
        if self._host_ok():
            super().do_HEAD()

    def do_GET(self) -> None:  # noqa: N802
        if not self._host_ok():
            return
        url = urlsplit(self.path)
        if url.path == RELOAD_SCRIPT_PATH:
            self._send(200, _RELOAD_JS, "text/javascript; charset=utf-8")
            return
        if url.path == RELOAD_PATH:
            try:
                query = parse_qs(url.query, keep_blank_values=True, max_num_fields=2)
            except ValueError:
                return self._refuse(400, "bad query")
            values = query.pop("after", [])
            if query or len(values) > 1 or (values and not _BUILD_NUMBER_RE.fullmatch(values[0])):
                return self._refuse(400, "the only query is ?after=<build number>")
            build_id = self.state.build_id
            if values:
                build_id = self.state.wait_for_change(int(values[0]), LONG_POLL_SECONDS)
            self._send(200, str(build_id).encode(), "text/plain")
            return
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if path.suffix == ".html" and path.is_file():
            added = _errors_box(self.state.errors) + _RELOAD_SCRIPT
            body = path.read_bytes().replace(b"</body>", added.encode() + b"</body>", 1)
            self._send(200, body, "text/html; charset=utf-8")
            return
        if not path.exists():
            not_found = Path(self.directory) / "404.html"
            if not_found.is_file():
                self._send(404, not_found.read_bytes(), "text/html; charset=utf-8")
                return
        super().do_GET()


def make_server(
    directory: Path, port: int = 8000, host: str = "127.0.0.1",
    max_connections: int = MAX_CONNECTIONS, idle_timeout: float = IDLE_TIMEOUT,
) -> tuple[GuardedServer, _State]:
    """A server for `directory` on loopback only: a preview, never a public web server."""
    state = _State()
    handler = guarded_handler(_Handler, idle_timeout, state=state)
    server = GuardedServer((host, port), partial(handler, directory=str(directory)), max_connections)
    return server, state


def rebuild_now(rebuild: Callable[[], None], state: _State) -> None:
    """Run one rebuild and tell waiting pages about it; then record what the next rebuild learns
    from it (`settle`), which the pages need not wait for."""
    from . import settle

    with state.lock:
        rebuild()
        state.bump()
        try:
            settle()
        except Exception as e:  # the site is in place; the next rebuild does again what was not recorded
            print(f"the build cache could not be updated: {e}", file=sys.stderr)


def watch_and_rebuild(paths: list[Path], rebuild: Callable[[], None], state: _State, stop: threading.Event | None = None) -> None:
    """Block, rebuilding after each batch of changes under `paths`."""
    from watchfiles import watch

    # A short debounce: editors save in one or two writes, and the rebuild itself is incremental.
    # `step` (the quiet that ends a batch of changes) is all latency, added to every save: the
    # writes of one save land within a millisecond or two, and a save split in two batches costs
    # one more rebuild, not a wrong page.
    for _changes in watch(*[p for p in paths if p.exists()], stop_event=stop, debounce=30, step=WATCH_STEP_MS):
        rebuild_now(rebuild, state)
