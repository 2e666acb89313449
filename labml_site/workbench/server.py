"""The editor's HTTP server: the built site in one language, with the editor added to its pages.

Safety, in the order a request meets it:

- the server binds 127.0.0.1 only, and answers only requests whose `Host` is
  `127.0.0.1:PORT` or `localhost:PORT` (a page elsewhere cannot reach it by DNS rebinding);
- a session token (random, per run) is printed in the URL to open; opening it sets a cookie
  (HttpOnly, SameSite=Strict), and pages get the token (in a `<meta>`) only with that cookie;
- every API request, read or write, must carry the token in `X-Workbench-Token` (a header another
  origin cannot send without a CORS preflight, which is never granted), and a write must be JSON
  with, when the browser sends one, our own `Origin`;
- a write names a page by its URL and a block by its English key: only the translation files of
  the pages this build knows are ever written (`Session.save`), through `safe_files`, and only a
  translation that passes the build's checks and sanitiser;
- every response carries a Content-Security-Policy whose `script-src` names the editor's own
  scripts and the site's theme and index scripts, by path (`_script_sources`): nothing a source or
  a figure holds runs here, where the session's token is; and the server is `serve`'s
  (`builder/local_http.py`): a connection cap (503 beyond it), an idle timeout, a deadline for
  each request, quiet about tabs that close.

Routes: `GET /` → the language's home page; `GET /__workbench/static/…` the editor's script and
style, and `markup.js` (the prose vocabulary, generated from `read/markup.py`);
`GET /__workbench/api/page?url=U`; `GET /__workbench/api/build` (the build's number, which pages
poll to follow a rebuild after an outside change); `POST /__workbench/api/{check,save,review}` with
`{"url", "key", "value", "expected"}` (a save of the English unchanged also needs
`"same_as_english": true`); `POST /__workbench/api/memory` `{"url", "key"}` (translation-memory
suggestions) and `POST /__workbench/api/concordance` `{"q"}`; anything else is a file of the built
site.
"""
from __future__ import annotations

import hmac
import json
import secrets
from functools import partial
from http import HTTPStatus
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from ..builder.local_http import IDLE_TIMEOUT, MAX_CONNECTIONS, GuardedHandler, GuardedServer, guarded_handler
from ..read import markup
from ..read.structure import ORIGINALS_FOLDER as ORIGINALS, lang_prefix
from .session import Refused, Session

PREFIX = "/__workbench/"
MAX_BODY = 1 << 20
COOKIE = "labml_workbench"
_STATIC = {"editor.js": "text/javascript; charset=utf-8", "editor.css": "text/css; charset=utf-8",
           "markup.js": "text/javascript; charset=utf-8"}


def _static(name: str) -> bytes:
    if name == "markup.js":  # the prose vocabulary, generated from its one definition
        return markup.javascript().encode("utf-8")
    return resources.files("labml_site.workbench").joinpath("static", name).read_bytes()


class _Handler(GuardedHandler):
    session: Session
    token: str
    port: int

    # -- answers --------------------------------------------------------------------------

    def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data: Any) -> None:
        self._send(status, json.dumps(data, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8")

    def _error(self, status: int, message: str, **extra) -> None:
        self._json(status, {"error": message, **extra})

    # -- gates ----------------------------------------------------------------------------

    def _host_ok(self) -> bool:
        host = self.headers.get("Host", "")
        if host in (f"127.0.0.1:{self.port}", f"localhost:{self.port}"):
            return True
        self._send(HTTPStatus.MISDIRECTED_REQUEST, b"wrong Host header: open the address the editor printed\n",
                   "text/plain; charset=utf-8")
        return False

    def _has_cookie(self) -> bool:
        for part in self.headers.get("Cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == COOKIE and hmac.compare_digest(value.encode(), self.token.encode()):
                return True
        return False

    def _token_ok(self) -> bool:
        given = self.headers.get("X-Workbench-Token", "")
        if given and hmac.compare_digest(given.encode(), self.token.encode()):
            return True
        self._error(HTTPStatus.FORBIDDEN, "missing or wrong session token: open the address the editor printed")
        return False

    def _origin_ok(self) -> bool:
        origin = self.headers.get("Origin")
        if origin is None or origin in (f"http://127.0.0.1:{self.port}", f"http://localhost:{self.port}"):
            return True
        self._error(HTTPStatus.FORBIDDEN, "cross-origin request refused")
        return False

    # -- routes ---------------------------------------------------------------------------

    def do_HEAD(self) -> None:  # noqa: N802
        self.do_GET()

    def do_GET(self) -> None:  # noqa: N802
        if not self._host_ok():
            return
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        given = query.get("token", [""])[0]
        if given:  # the printed address: remember the session in a cookie, drop the token from the URL
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                self._send(HTTPStatus.FORBIDDEN, b"wrong session token\n", "text/plain; charset=utf-8")
                return
            cookie = f"{COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/"
            self._send(HTTPStatus.SEE_OTHER, b"", "text/plain", {"Location": url.path or "/", "Set-Cookie": cookie})
            return
        if url.path == "/":
            self._send(HTTPStatus.SEE_OTHER, b"", "text/plain", {"Location": "/" + self._prefix() + "index.html"})
            return
        if url.path.startswith(PREFIX + "static/"):
            name = url.path[len(PREFIX + "static/"):]
            if name in _STATIC:
                self._send(200, _static(name), _STATIC[name])
            else:
                self._error(404, "no such file")
            return
        if url.path == PREFIX + "api/build":  # the number of the last build, polled by the pages
            if self._token_ok():
                self._json(200, {"build": self.session.build_id})
            return
        if url.path == PREFIX + "api/page":
            if self._token_ok():
                self._api(lambda: self.session.page_state(query.get("url", [""])[0]))
            return
        if url.path.startswith(PREFIX):
            self._error(404, "no such route")
            return
        self._serve_site(url.path)

    def do_POST(self) -> None:  # noqa: N802
        if not self._host_ok() or not self._origin_ok() or not self._token_ok():
            return
        route = urlsplit(self.path).path
        actions = {
            PREFIX + "api/check": lambda b: self.session.check(_str(b, "url"), _str(b, "key"), _str(b, "value")),
            PREFIX + "api/save": lambda b: self.session.save(
                _str(b, "url"), _str(b, "key"), _str(b, "value"), b.get("expected") if isinstance(b.get("expected"), str) else None,
                b.get("same_as_english") is True,
            ),
            PREFIX + "api/memory": lambda b: self.session.suggestions(_str(b, "url"), _str(b, "key")),
            PREFIX + "api/concordance": lambda b: self.session.concordance(_str(b, "q")),
            PREFIX + "api/review": lambda b: self.session.mark_reviewed(_str(b, "url"), _str(b, "key")),
        }
        if route not in actions:
            self._error(404, "no such route")
            return
        if not self.headers.get("Content-Type", "").startswith("application/json"):
            self._error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send JSON")
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 < length <= MAX_BODY:
            self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE if length > MAX_BODY else 400, "bad request size")
            return
        try:
            body = json.loads(self.rfile.read(length).decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            self._error(400, "the request is not JSON")
            return
        if not isinstance(body, dict):
            self._error(400, "the request must be a JSON object")
            return
        self._api(lambda: actions[route](body))

    def _api(self, call) -> None:
        try:
            self._json(200, call())
        except Refused as e:
            self._error(e.status, e.message, **e.extra)

    def _prefix(self) -> str:
        return lang_prefix(self.session.lang, self.session.config.base_lang)

    def _serve_site(self, path: str) -> None:
        target = Path(self.translate_path(path))
        if target.is_dir():
            target = target / "index.html"
            path = path.rstrip("/") + "/index.html"
        if target.suffix == ".html" and target.is_file() and not target.is_symlink():
            body = target.read_bytes()
            prefix = "/" + self._prefix()
            path = unquote(path)  # pages are known by their names; links to them are percent-encoded
            page_url = path[len(prefix):] if path.startswith(prefix) else None
            if page_url is not None and page_url in self.session.pages:
                if not self._has_cookie():
                    self._send(HTTPStatus.FORBIDDEN, _LOCKED.encode(), "text/html; charset=utf-8")
                    return
                body = _with_editor(body, self.token, page_url)
            self._send(200, body, "text/html; charset=utf-8")
            return
        super().do_GET()


_LOCKED = ("<!doctype html><meta charset=utf-8><title>Translation editor</title>"
           "<p>Open the address the editor printed in the terminal (it holds this session's token).</p>")


def _with_editor(body: bytes, token: str, page_url: str) -> bytes:
    head = (
        f'<meta name="labml-workbench-token" content="{token}">'
        f'<meta name="labml-workbench-page" content="{_attr(page_url)}">'
        f'<link rel="stylesheet" href="{PREFIX}static/editor.css">'
        f'<script src="{PREFIX}static/markup.js" defer></script>'
        f'<script src="{PREFIX}static/editor.js" defer></script>'
    ).encode()
    return body.replace(b"</head>", head + b"</head>", 1)


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def _str(body: dict, name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str):
        raise Refused(400, f"{name!r} must be a string")
    return value


def _script_sources(port: int, prefix: str) -> str:
    """`script-src` of the editor: its own scripts, and the builder's (the theme's, the search
    index, the English originals, the language's prose as Markdown for notebooks), by path on
    both loopback names. Sources and figures cannot write there (those folders and names are
    reserved), so nothing they hold runs."""
    paths = list(dict.fromkeys([PREFIX + "static/", "/static/", f"/{ORIGINALS}/", f"/{prefix}{ORIGINALS}/",
                                f"/{prefix}search-index.js"]))
    return " ".join(f"http://{host}:{port}{path}" for host in ("127.0.0.1", "localhost") for path in paths)


def make_server(
    session: Session, port: int = 0, host: str = "127.0.0.1", token: str | None = None,
    max_connections: int = MAX_CONNECTIONS, idle_timeout: float = IDLE_TIMEOUT,
):
    """A server for the session's site on loopback only; returns (server, token)."""
    if host not in ("127.0.0.1", "::1", "localhost"):
        raise ValueError("the editor serves on loopback only")
    token = token or secrets.token_urlsafe(24)
    handler = guarded_handler(_Handler, idle_timeout, session=session, token=token, port=0)
    server = GuardedServer((host, port), partial(handler, directory=str(session.config.out)), max_connections)
    handler.port = server.server_address[1]
    handler.script_src = _script_sources(handler.port, lang_prefix(session.lang, session.config.base_lang))
    return server, token


__all__ = ["make_server", "PREFIX"]
