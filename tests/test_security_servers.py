"""Issue 22 (and 23, item 6), the two local servers, `serve` and the editor of `translate`, held
alike: a flood of idle or dribbling connections gets 503 beyond the cap and is closed, after which
the server answers again; every response carries a restrictive Content-Security-Policy (the
editor's allows only its own scripts and the builder's, so nothing a page's source holds runs
where the session token is); a client that goes away prints nothing. Real sockets on 127.0.0.1,
bounded waits."""
from __future__ import annotations

import http.client
import socket
import threading
import time

import pytest

from conftest import write_tree
from labml_site.builder import local_http
from labml_site.builder.serve import make_server as make_preview
from labml_site.builder.site import BuildConfig, build
from labml_site.workbench.editor import start
from workbench_fixture import make_project

CAP = 6
IDLE = 1.0
HOSTILE_PROSE = (
    '"""\n# Hostile\n\nText <script>window.labmlPwned = 1</script> and '
    '<img src="x.png" onerror="window.labmlPwned = 2"> and <svg onload="window.labmlPwned = 3"></svg>.\n\n![a figure](figures/f.svg)\n"""\nx = 1\n'
)


class _Served:
    def __init__(self, server, host: str, token: str = "", pages: tuple[str, ...] = (), state=None):
        self.threads_before = threading.active_count()
        self.state = state
        self.server, self.port, self.host, self.token, self.pages = server, server.server_address[1], host, token, pages
        self.thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def get(self, path: str, timeout: float = 5.0):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            headers = {"Host": self.host}
            if self.token:
                headers["Cookie"] = f"labml_workbench={self.token}"
                headers["X-Workbench-Token"] = self.token
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            return response.status, response.read(), {k.lower(): v for k, v in response.getheaders()}
        finally:
            conn.close()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
        if self.state is not None:
            self.state.bump()  # wake the reload long polls of the pages opened
        deadline = time.monotonic() + 10  # no thread left behind (workers are forked only without them)
        while threading.active_count() > self.threads_before and time.monotonic() < deadline:
            time.sleep(0.05)


def _site(root):
    src = write_tree(root / "src", {"__init__.py": '"""\n# Home\n"""\n', "tut/page.py": HOSTILE_PROSE,
                                    "tut/figures/f.svg": '<svg xmlns="http://www.w3.org/2000/svg"></svg>'})
    (root / "tr").mkdir()
    build(BuildConfig(src, root / "tr", root / "site", langs=("en",), jobs=1))
    return root / "site"


@pytest.fixture(params=["serve", "translate"])
def served(request, tmp_path):
    if request.param == "serve":
        server, state = make_preview(_site(tmp_path), 0, max_connections=CAP, idle_timeout=IDLE)
        s = _Served(server, "127.0.0.1", pages=("/index.html", "/tut/page.html"), state=state)
    else:
        config = make_project(tmp_path)
        write_tree(tmp_path / "src", {"tut/hostile.py": HOSTILE_PROSE,
                                      "tut/figures/f.svg": '<svg xmlns="http://www.w3.org/2000/svg"></svg>'})
        session, editor_server, url = start(config, "zh")
        editor_server.shutdown()
        editor_server.server_close()  # the editor's session, served here with a small cap
        from labml_site.workbench.server import make_server

        server, token = make_server(session, 0, max_connections=CAP, idle_timeout=IDLE)
        s = _Served(server, f"127.0.0.1:{server.server_address[1]}", token, pages=("/zh/tut/page.html", "/zh/tut/hostile.html"))
    s.kind = request.param
    yield s
    s.stop()


def _wait_until_answers(s: _Served, path: str, within: float = 10.0) -> int:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            status = s.get(path)[0]
            if status != 503:
                return status
        except OSError:
            pass
        time.sleep(0.1)
    pytest.fail("the server did not answer again")


def _closed(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    deadline = time.monotonic() + within
    try:
        while time.monotonic() < deadline:
            if sock.recv(100) == b"":
                return True
    except (socket.timeout, ConnectionError):
        return False
    return False


def test_a_flood_of_idle_connections_gets_503_then_the_server_answers_again(served):
    held = [socket.create_connection(("127.0.0.1", served.port), timeout=5) for _ in range(CAP)]
    flood = []
    try:
        time.sleep(0.2)  # the cap's worth are being served (reading their requests)
        for _ in range(CAP * 15):
            sock = socket.create_connection(("127.0.0.1", served.port), timeout=5)
            flood.append(sock)
        answers = []
        for sock in flood:
            sock.settimeout(5)
            answers.append(sock.recv(100))
        assert all(a.startswith(b"HTTP/1.0 503") for a in answers), [a for a in answers if not a.startswith(b"HTTP/1.0 503")][:3]
        assert all(_closed(sock, IDLE * 10) for sock in held)  # the idle ones are closed
    finally:
        for sock in held + flood:
            sock.close()
    assert _wait_until_answers(served, served.pages[0]) == 200


def test_dribbling_requests_are_closed_at_the_deadline(served, monkeypatch):
    monkeypatch.setattr(local_http, "REQUEST_DEADLINE", 1.0)
    dribblers = [socket.create_connection(("127.0.0.1", served.port), timeout=5) for _ in range(CAP)]
    started = time.monotonic()
    try:
        closed = [False] * CAP
        request = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200
        i = 0
        while not all(closed) and time.monotonic() - started < 8:
            for n, sock in enumerate(dribblers):
                if closed[n]:
                    continue
                try:
                    sock.send(request[i:i + 1] if i < len(request) else b"a")
                except OSError:
                    closed[n] = True
            i += 1
            time.sleep(IDLE / 3)  # each byte well within the idle timeout
            for n, sock in enumerate(dribblers):
                sock.setblocking(False)
                try:
                    if sock.recv(100) == b"":
                        closed[n] = True
                except BlockingIOError:
                    pass
                except OSError:
                    closed[n] = True
                sock.setblocking(True)
        assert all(closed), "a dribbling request kept its connection"
        assert time.monotonic() - started < 6
    finally:
        for sock in dribblers:
            sock.close()
    assert _wait_until_answers(served, served.pages[0]) == 200


def _policy(headers: dict) -> dict[str, str]:
    value = headers.get("content-security-policy", "")
    return {part.strip().split(" ", 1)[0]: part.strip().partition(" ")[2] for part in value.split(";") if part.strip()}


def test_every_response_carries_a_restrictive_policy(served):
    paths = list(served.pages) + ["/static/site.js", "/static/style.css", "/no/such/page.html", "/favicon.ico"]
    if served.kind == "translate":
        paths += ["/__workbench/static/editor.js", "/__workbench/api/build", "/__workbench/nothing"]
    else:
        paths += ["/__labml_site_build", "/__labml_site_build?after=x", "/__labml_site_build.js"]
    for path in paths:
        status, _body, headers = served.get(path)
        policy = _policy(headers)
        assert policy, (path, status, headers)
        script = policy.get("script-src", "")
        assert "'unsafe-inline'" not in script and "'unsafe-eval'" not in script and "*" not in script, (path, script)
        assert policy.get("object-src") == "'none'" and policy.get("base-uri") == "'none'"
        assert policy.get("frame-ancestors") == "'none'"
        assert headers.get("x-content-type-options") == "nosniff"
        if served.kind == "translate":
            assert "'self'" not in script and "/__workbench/static/" in script, script
    # refusals too
    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=5)
    try:
        conn.request("GET", "/", headers={"Host": "evil.example"})
        response = conn.getresponse()
        response.read()
        assert response.status == 421 and _policy({k.lower(): v for k, v in response.getheaders()})
    finally:
        conn.close()


def test_a_figure_opened_on_its_own_is_sandboxed(served):
    path = "/tut/figures/f.svg" if served.kind == "serve" else "/zh/tut/figures/f.svg"
    status, _body, headers = served.get(path)
    assert status == 200 and "sandbox" in _policy(headers)


def test_a_client_that_goes_away_prints_nothing(served, capfd):
    page = served.pages[0]
    for _ in range(20):
        sock = socket.create_connection(("127.0.0.1", served.port), timeout=5)
        cookie = f"Cookie: labml_workbench={served.token}\r\n" if served.token else ""
        sock.sendall(f"GET {page} HTTP/1.1\r\nHost: {served.host}\r\n{cookie}\r\n".encode())
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # a reset
        sock.close()
        sock = socket.create_connection(("127.0.0.1", served.port), timeout=5)
        sock.sendall(f"GET /static/style.css HTTP/1.1\r\nHost: {served.host}\r\n\r\n".encode())
        sock.shutdown(socket.SHUT_RD)
        sock.close()
    time.sleep(0.5)
    assert _wait_until_answers(served, page) == 200
    err = capfd.readouterr()
    assert "Traceback" not in err.err + err.out and "BrokenPipe" not in err.err + err.out
    assert "ConnectionReset" not in err.err + err.out


def test_the_policy_stops_script_in_a_page_in_chromium(served, browser):
    context = browser.new_context()
    if served.token:
        context.add_cookies([{"name": "labml_workbench", "value": served.token, "domain": "127.0.0.1", "path": "/"}])
    page = context.new_page()
    violations = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    try:
        page.goto(f"http://127.0.0.1:{served.port}{served.pages[1]}")
        page.wait_for_timeout(300)
        assert page.evaluate("typeof window.labmlPwned") == "undefined"
        assert violations  # the inline script and handlers were refused, not absent
        if served.kind == "translate":  # the editor itself still runs
            page.wait_for_selector("body.wb-on", timeout=5000)
        else:
            assert page.evaluate("document.querySelector('script[src=\"/__labml_site_build.js\"]') !== null")
    finally:
        context.close()
