"""The one HTTP server behind `serve` and `translate`: loopback only, and hard to silence.

Both serve pages to the person at this machine, and both are reachable by every local process
and, through the browser, by every page it opens. So both:

* serve at most `MAX_CONNECTIONS` connections at once; one more is answered `503` and closed at
  once, so a flood cannot exhaust threads or file descriptors, and the server answers again as
  soon as the flood ends;
* close a connection that sends nothing for `IDLE_TIMEOUT` seconds while its request is read, and
  one whose request line and headers take longer than `REQUEST_DEADLINE` in all (a client that
  dribbles a byte at a time);
* treat a client that goes away (a closed tab: `BrokenPipeError`, a reset) as normal: no
  traceback, nothing printed;
* send with every response a restrictive `Content-Security-Policy` (`policy`), with
  `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer` and no framing; an SVG opened
  on its own is also sandboxed (`sandbox`: no script, no origin).
"""
from __future__ import annotations

import http.server
import socket
import sys
import threading
import time

MAX_CONNECTIONS = 64  # a few tabs' long polls and their browsers' parallel connections
IDLE_TIMEOUT = 20.0  # seconds a connection may stay silent while its request is read
REQUEST_DEADLINE = 30.0  # seconds to send a request line and its headers, however slowly

# What every page of the site needs and nothing more: its own scripts, styles and images (MathML
# and the figures' dark mode use inline styles; matplotlib figures embed data: images).
SITE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
_CLIENT_GONE = (ConnectionError, TimeoutError, socket.timeout)


def policy(script_src: str = "'self'", sandbox: bool = False) -> str:
    """The Content-Security-Policy: the site's, with `script-src` as given."""
    found = SITE_POLICY.replace("script-src 'self'", f"script-src {script_src}")
    return found + ("; sandbox" if sandbox else "")


class GuardedHandler(http.server.SimpleHTTPRequestHandler):
    """Quiet, bounded in time, and sending the security headers with every response."""

    script_src = "'self'"  # a subclass narrows it (the workbench: its own scripts only)
    server: "GuardedServer"

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - keep the terminal for the build's messages
        pass

    def handle_one_request(self) -> None:
        # The request line and headers must arrive within the deadline, however they are dribbled
        # (a read's timeout alone restarts with each byte); the server's reaper closes it otherwise.
        self.server.reaper.watch(self.connection, REQUEST_DEADLINE)
        try:
            super().handle_one_request()
        finally:
            self.server.reaper.forget(self.connection)

    def parse_request(self) -> bool:
        parsed = super().parse_request()
        self.server.reaper.forget(self.connection)  # headers read: the response may take its time
        return parsed

    def security_headers(self) -> dict[str, str]:
        svg = self.path.split("?", 1)[0].lower().endswith(".svg")
        return {
            "Content-Security-Policy": policy(self.script_src, sandbox=svg),
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "X-Frame-Options": "DENY",
            "Cross-Origin-Opener-Policy": "same-origin",
        }

    def end_headers(self) -> None:
        for name, value in self.security_headers().items():
            self.send_header(name, value)
        super().end_headers()


class _Reaper:
    """One thread that shuts down the connections whose request is overdue."""

    def __init__(self) -> None:
        self.deadlines: dict[socket.socket, float] = {}
        self.lock = threading.Lock()
        self.stopped = threading.Event()

    def start(self) -> threading.Thread:
        self.stopped.clear()
        thread = threading.Thread(target=self._run, name="labml-site-reaper", daemon=True)
        thread.start()
        return thread

    def watch(self, conn: socket.socket, seconds: float) -> None:
        with self.lock:
            self.deadlines[conn] = time.monotonic() + seconds

    def forget(self, conn: socket.socket) -> None:
        with self.lock:
            self.deadlines.pop(conn, None)

    def _run(self) -> None:
        while not self.stopped.wait(0.25):
            now = time.monotonic()
            with self.lock:
                overdue = [c for c, deadline in self.deadlines.items() if deadline < now]
                for conn in overdue:
                    del self.deadlines[conn]
            for conn in overdue:
                try:
                    conn.shutdown(socket.SHUT_RDWR)  # the handler's read ends; its thread closes it
                except OSError:
                    pass


class GuardedServer(http.server.ThreadingHTTPServer):
    """A thread per connection, at most `max_connections` at once; the rest get 503."""

    daemon_threads = True  # long polls must not keep the process alive
    request_queue_size = 128  # a flood waits in the kernel's queue to be answered 503, not dropped

    def __init__(self, address, handler, max_connections: int = MAX_CONNECTIONS) -> None:
        self.slots = threading.BoundedSemaphore(max_connections)
        self.reaper = _Reaper()
        self.open: set[socket.socket] = set()  # the connections being served
        super().__init__(address, handler)

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        # The reaper lives while the server serves (no thread is left behind by a server that
        # was made and never served, or was shut down: forking workers needs a lone thread).
        reaper = self.reaper.start()
        try:
            super().serve_forever(poll_interval)
        finally:
            self.reaper.stopped.set()
            reaper.join(timeout=2)

    def server_close(self) -> None:
        """Also end the connections still open (their threads then end too)."""
        super().server_close()
        with self.reaper.lock:
            open_now = list(self.open)
        for conn in open_now:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def process_request(self, request, client_address) -> None:
        if not self.slots.acquire(blocking=False):
            try:
                request.settimeout(1.0)
                request.sendall(
                    b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 0\r\n"
                    b"Retry-After: 1\r\nConnection: close\r\n\r\n"
                )
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request, client_address) -> None:
        with self.reaper.lock:
            self.open.add(request)
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self.reaper.lock:
                self.open.discard(request)
            self.slots.release()

    def handle_error(self, request, client_address) -> None:
        """A client that went away is normal; anything else is printed as before (a bug)."""
        error = sys.exc_info()[1]
        if isinstance(error, _CLIENT_GONE):
            return
        super().handle_error(request, client_address)


def guarded_handler(base: type[GuardedHandler], idle_timeout: float = IDLE_TIMEOUT, **attributes) -> type[GuardedHandler]:
    """`base` with `idle_timeout` on its connections: StreamRequestHandler sets `timeout` on the
    socket, so a read that waits longer (a client that connects and sends nothing) ends it."""
    return type(base.__name__, (base,), {"timeout": idle_timeout, **attributes})
