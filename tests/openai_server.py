"""A local HTTP server speaking the OpenAI protocol (/v1/chat/completions, /v1/embeddings),
for testing our clients over a real socket: the one fake the house rules allow, since a
remote LLM cannot exist here. Each test scripts the answers it wants, in order."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from core.providers import llm as llm_module


@dataclass
class Reply:
    status: int = 200
    body: dict | str | None = None
    delay: float = 0.0


@dataclass
class OpenAIServer:
    replies: deque = field(default_factory=deque)
    requests: list = field(default_factory=list)
    # System-prompt marker -> its own replies, for a test of one caller while others (the
    # memory extractor) use the same LLM: their requests get the queue above (a 500 when empty).
    replies_for: dict = field(default_factory=dict)

    def __post_init__(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                payload = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append({"path": self.path, "json": payload, "auth": self.headers.get("Authorization")})
                reply = server._reply_for(payload)
                if reply.delay:
                    time.sleep(reply.delay)
                body = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                data = body.encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out first, which is what the test wanted

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def _reply_for(self, payload: dict) -> Reply:
        first = (payload.get("messages") or [{}])[0]
        system = str(first.get("content") or "") if isinstance(first, dict) else ""
        for marker, queue in self.replies_for.items():
            if marker in system and queue:
                return queue.popleft()
        return self.replies.popleft() if self.replies else Reply(500, {"error": "no reply scripted"})

    def chat(self, content: str, status: int = 200, delay: float = 0.0, *, when: str | None = None) -> None:
        """Script the next chat answer; with `when`, the next one for a system prompt holding it."""
        body = {"id": "x", "object": "chat.completion", "model": "test",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}
        queue = self.replies if when is None else self.replies_for.setdefault(when, deque())
        queue.append(Reply(status, body, delay))

    def embeddings(self, vectors: list[list[float]]) -> None:
        body = {"object": "list", "model": "test",
                "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in reversed(list(enumerate(vectors)))]}
        self.replies.append(Reply(200, body))

    def error(self, status: int, delay: float = 0.0, *, when: str | None = None) -> None:
        queue = self.replies if when is None else self.replies_for.setdefault(when, deque())
        queue.append(Reply(status, {"error": {"message": f"status {status}"}}, delay))

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def llm_pointed_at(server: OpenAIServer, settings):
    """Generator for a fixture: the LLM provider talks to `server` (no retries) until the
    fixture ends; the provider's cached client is dropped on both sides."""
    settings.MNEMO_LLM_URL, settings.MNEMO_LLM_MODEL, settings.MNEMO_LLM_RETRIES = server.url, "test-model", 0
    llm_module._llm = None
    yield server
    llm_module._llm = None
