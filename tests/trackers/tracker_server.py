"""A local HTTP server speaking the few GitHub and GitLab REST routes Mnemo uses, for
testing the tracker clients over a real socket (the one fake the house rules allow: no
tracker exists here). GitHub answers at the root, a self-hosted GitLab under /gitlab.

It checks what the real ones check — the token and its header, the JSON body, a project
it knows (GitLab's given URL-encoded, as the raw request path shows) — keeps the issues
it opened, and can be told to answer the next request with an error or to hang. More
GitHub repositories can be added (`add_github_project`), for workspaces that each have
their own."""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

TOKEN = "ghp_s3cr3t-T0KEN-never-shown"
GITHUB_PROJECT = "acme/agents"
GITLAB_PROJECT = "acme/platform/agents"
GITLAB_PROJECT_ID = "42"  # the same project by its numeric id

_GITHUB = re.compile(r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)(?P<issues>/issues(?:/(?P<number>\d+)(?P<tail>/comments)?)?)?$")
_GITLAB = re.compile(r"^/gitlab/api/v4/projects/(?P<project>[^/]+)(?P<issues>/issues(?:/(?P<number>\d+)(?P<tail>/notes)?)?)?$")


@dataclass
class Scripted:
    status: int = 500
    headers: dict = field(default_factory=dict)
    body: dict | str = field(default_factory=lambda: {"message": "scripted failure"})
    hang: float = 0.0


@dataclass
class Issue:
    title: str
    body: str
    labels: list[str]
    state: str = "open"
    comments: list[str] = field(default_factory=list)


@dataclass
class TrackerServer:
    requests: list = field(default_factory=list)
    github: dict = field(default_factory=dict)  # number -> Issue, in GITHUB_PROJECT
    gitlab: dict = field(default_factory=dict)  # iid -> Issue
    scripted: deque = field(default_factory=deque)

    def __post_init__(self):
        server = self
        self.github_projects = {GITHUB_PROJECT: self.github}  # "owner/repo" -> {number: Issue}

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                self._handle()

            def do_POST(self):
                self._handle()

            def do_PATCH(self):
                self._handle()

            def do_PUT(self):
                self._handle()

            def _handle(self):
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                request = {"method": self.command, "path": self.path, "headers": dict(self.headers),
                           "content_type": self.headers.get("Content-Type", ""), "raw": raw}
                server.requests.append(request)
                if server.scripted:
                    reply = server.scripted.popleft()
                    if reply.hang:
                        time.sleep(reply.hang)
                    if reply.status:  # else a slow answer: routed as usual below
                        self._answer(reply.status, reply.body, reply.headers)
                        return
                try:
                    payload = json.loads(raw) if raw else {}
                except ValueError:
                    self._answer(400, {"message": "Problems parsing JSON"})
                    return
                request["json"] = payload
                status, body = server.route(self.command, self.path, self.headers, payload)
                self._answer(status, body)

            def _answer(self, status: int, body, headers: dict | None = None):
                data = (body if isinstance(body, str) else json.dumps(body)).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up first, which is what a hanging test wants

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def fail_next(self, status: int, *, headers: dict | None = None, body: dict | str | None = None) -> None:
        self.scripted.append(Scripted(status, headers or {}, body if body is not None else {"message": f"status {status}"}))

    def hang_next(self, seconds: float) -> None:
        self.scripted.append(Scripted(200, {}, {}, hang=seconds))

    def slow_next(self, seconds: float) -> None:
        """The next request is answered as usual, after `seconds`."""
        self.scripted.append(Scripted(0, {}, {}, hang=seconds))

    def add_github_project(self, project: str) -> dict:
        """Another repository the token may reach; returns its issues (number -> Issue)."""
        return self.github_projects.setdefault(project, {})

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # --- the two trackers ---------------------------------------------------------------

    def route(self, method: str, path: str, headers, payload: dict) -> tuple[int, dict]:
        if match := _GITHUB.match(path):
            return self._github(method, match, headers, payload)
        if match := _GITLAB.match(path):
            return self._gitlab(method, match, headers, payload)
        return 404, {"message": "Not Found"}

    def _github(self, method, match, headers, payload) -> tuple[int, dict]:
        if headers.get("Authorization") != f"Bearer {TOKEN}":
            return 401, {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}
        if headers.get("Accept") != "application/vnd.github+json" or headers.get("X-GitHub-Api-Version") != "2022-11-28":
            return 400, {"message": "missing the API media type or version"}
        project = f"{match['owner']}/{match['repo']}"
        issues = self.github_projects.get(project)
        if issues is None:
            return 404, {"message": "Not Found"}
        if match["issues"] is None:  # the repository itself
            return (200, {"full_name": project}) if method == "GET" else (404, {"message": "Not Found"})
        number, tail = match["number"], match["tail"]
        if number is None:
            if method != "POST":
                return 404, {"message": "Not Found"}
            if not isinstance(payload.get("title"), str) or not payload["title"] or not isinstance(payload.get("body"), str) \
                    or not all(isinstance(label, str) for label in payload.get("labels", [])):
                return 422, {"message": "Validation Failed", "errors": [{"resource": "Issue", "code": "invalid"}]}
            number = len(issues) + 1
            issues[number] = Issue(payload["title"], payload["body"], list(payload.get("labels", [])))
            return 201, {"number": number, "html_url": f"https://github.com/{project}/issues/{number}",
                         "state": "open", "title": payload["title"]}
        issue = issues.get(int(number))
        if issue is None:
            return 404, {"message": "Not Found"}
        if tail and method == "POST" and isinstance(payload.get("body"), str):
            issue.comments.append(payload["body"])
            return 201, {"id": len(issue.comments), "body": payload["body"]}
        if not tail and method == "PATCH" and payload.get("state") in ("open", "closed"):
            issue.state = payload["state"]
            return 200, {"number": int(number), "state": issue.state}
        return 422, {"message": "Validation Failed", "errors": [{"code": "invalid"}]}

    def _gitlab(self, method, match, headers, payload) -> tuple[int, dict]:
        if headers.get("PRIVATE-TOKEN") != TOKEN:
            return 401, {"message": "401 Unauthorized"}
        if unquote(match["project"]) not in (GITLAB_PROJECT, GITLAB_PROJECT_ID):
            return 404, {"message": "404 Project Not Found"}
        if match["issues"] is None:
            return (200, {"id": int(GITLAB_PROJECT_ID), "path_with_namespace": GITLAB_PROJECT}) if method == "GET" \
                else (404, {"message": "404 Not Found"})
        number, tail = match["number"], match["tail"]
        if number is None:
            if method != "POST":
                return 404, {"message": "404 Not Found"}
            if not isinstance(payload.get("title"), str) or not payload["title"]:
                return 400, {"error": "title is missing"}
            if not isinstance(payload.get("labels", ""), str):
                return 400, {"error": "labels is invalid"}
            iid = len(self.gitlab) + 1
            labels = [label for label in payload.get("labels", "").split(",") if label]
            self.gitlab[iid] = Issue(payload["title"], payload.get("description", ""), labels)
            return 201, {"id": 9000 + iid, "iid": iid, "state": "opened",
                         "web_url": f"https://gitlab.example.com/{GITLAB_PROJECT}/-/issues/{iid}"}
        issue = self.gitlab.get(int(number))
        if issue is None:
            return 404, {"message": "404 Not found"}
        if tail and method == "POST" and isinstance(payload.get("body"), str):
            issue.comments.append(payload["body"])
            return 201, {"id": len(issue.comments), "body": payload["body"]}
        if not tail and method == "PUT" and payload.get("state_event") in ("close", "reopen"):
            issue.state = "closed" if payload["state_event"] == "close" else "opened"
            return 200, {"iid": int(number), "state": issue.state}
        return 400, {"error": "state_event does not have a valid value"}
