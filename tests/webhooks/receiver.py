"""A real HTTP receiver on 127.0.0.1 in a thread: answers with the scripted status codes
in turn (then the last one), checks each request's signature the way the README tells
receivers to, and records what came."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    def __init__(self, answers=(200,), secret: str = "", retry_after: str | None = None):
        self.answers, self.secret, self.retry_after = list(answers), secret, retry_after
        self.requests: list[dict] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.record(dict(self.headers), body, self.path)
                status = receiver.answers.pop(0) if len(receiver.answers) > 1 else receiver.answers[0]
                self.send_response(status)
                if receiver.retry_after and status in (429, 503):
                    self.send_header("Retry-After", receiver.retry_after)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/hook"

    def record(self, headers: dict, body: bytes, path: str) -> None:
        # The README's five lines, as a receiver would run them.
        timestamp = headers["X-Mnemo-Timestamp"]
        expected = "sha256=" + hmac.new(self.secret.encode(), f"{timestamp}.".encode() + body,
                                        hashlib.sha256).hexdigest()
        valid = hmac.compare_digest(expected, headers["X-Mnemo-Signature"])
        self.requests.append({"headers": headers, "body": body, "json": json.loads(body), "path": path,
                              "signature_valid": valid})

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
