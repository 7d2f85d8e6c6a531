"""The rehearsal's web server on 127.0.0.1: the files of a folder laid out by host (``<host>/<path>``, as
:func:`probekit.environ.mirrored` asks for them), 404 for anything else (dead links), and 302 redirects for the
paths given (an image host's "photo unavailable" placeholder)."""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class _Handler(SimpleHTTPRequestHandler):
    redirects: dict[str, str] = {}

    def do_GET(self):
        target = self.redirects.get(self.path)
        if target is None:
            return super().do_GET()
        self.send_response(302)
        self.send_header("Location", target)
        self.end_headers()

    def log_message(self, *args):
        pass


class Server:
    """Serves ``root`` (with ``redirects``: request path -> redirect target path) until :meth:`close`."""

    def __init__(self, root: Path, redirects: dict[str, str]):
        handler = type("Handler", (_Handler,), {"redirects": dict(redirects)})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
