"""The `mnemo` command line: log, batch, recall, context, remember, status and mcp against a
running Mnemo. The server comes from --url or $MNEMO_URL (default http://127.0.0.1:8000),
the key from --key or $MNEMO_API_KEY. Human output by default; --json prints the API's
answer as one JSON document for scripts.

Exit codes: 0 done; 1 the API refused (its error on stderr); 2 usage (bad arguments, no
key, `mcp` without the MCP bridge); 3 the server could not be reached; 4 a batch was
logged but some of its lines were rejected."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections import Counter
from collections.abc import Iterator
from importlib import import_module
from typing import IO, Any

from pydantic import BaseModel

from mnemo_client._core import DEFAULT_URL, MAX_BATCH, api_url
from mnemo_client.client import Mnemo
from mnemo_client.errors import ApiError, ConnectionFailed, MnemoError
from mnemo_client.models import InteractionBatchOut

OK, API_ERROR, USAGE, CONNECTION, REJECTED = 0, 1, 2, 3, 4
BATCH_CHUNK = 500


class UsageError(Exception):
    """Bad arguments or configuration: exit 2."""


# --- parsing ---------------------------------------------------------------------------

def _common(parser: argparse.ArgumentParser, defaults: bool) -> None:
    # The shared options work before or after the command (`mnemo --json recall x` and
    # `mnemo recall x --json`); on the commands they default to "not given" so they do not
    # overwrite what was given before the command.
    def default(value):
        return value if defaults else argparse.SUPPRESS

    parser.add_argument("--url", default=default(None), help=f"Mnemo's address (default $MNEMO_URL, else {DEFAULT_URL})")
    parser.add_argument("--key", default=default(None), help="API key (default $MNEMO_API_KEY)")
    parser.add_argument("--json", action="store_true", default=default(False), help="print the API's answer as JSON")
    parser.add_argument("--timeout", type=float, default=default(30.0), help="seconds per request (default 30)")


def _text(value: str) -> str:
    return sys.stdin.read() if value == "-" else value


def _json_object(value: str) -> dict:
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise argparse.ArgumentTypeError("must be a JSON object")
    return parsed


def _csv(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mnemo", description="Talk to a Mnemo memory service.",
        epilog="Exit codes: 0 done, 1 API error, 2 usage, 3 cannot connect, 4 batch lines rejected.")
    _common(parser, defaults=True)
    common = argparse.ArgumentParser(add_help=False)
    _common(common, defaults=False)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    log = commands.add_parser("log", parents=[common], help="log one interaction")
    log.add_argument("content", help="the message ('-' reads stdin)")
    log.add_argument("--channel", default="cli")
    log.add_argument("--channel-id", default=os.environ.get("USER") or "cli", help="the sender's handle (default $USER)")
    log.add_argument("--sender-name")
    log.add_argument("--sender-kind", choices=["person", "agent", "service", "organisation"])
    log.add_argument("--thread", help="the conversation key")
    log.add_argument("--direction", choices=["inbound", "outbound", "system"])
    log.add_argument("--external-id", help="idempotency key: the same one again answers duplicate")
    log.add_argument("--occurred-at", help="ISO 8601 time (default now)")
    log.add_argument("--metadata", type=_json_object, help="a JSON object")

    batch = commands.add_parser("batch", parents=[common], help="log JSON Lines (one interaction per line)",
                                description="Each line is an interaction as POST /interactions takes it. A line "
                                            "without external_id gets one from its content (jsonl:<hash>, with :2, "
                                            ":3 … for repeats), so running the same input again logs nothing twice.")
    batch.add_argument("file", nargs="?", default="-", help="a .jsonl file (default or '-': stdin)")
    batch.add_argument("--chunk-size", type=int, default=BATCH_CHUNK, help=f"lines per request (1-{MAX_BATCH})")
    batch.add_argument("--no-auto-ids", action="store_true", help="send lines without external_id as they are")
    batch.add_argument("--quiet", action="store_true", help="no progress on stderr")

    recall = commands.add_parser("recall", parents=[common], help="search every kind of memory")
    recall.add_argument("query")
    recall.add_argument("--limit", type=int)
    recall.add_argument("--types", type=_csv, help="comma-separated: fact,preference,interaction,…")
    recall.add_argument("--entity", type=int)
    recall.add_argument("--min-confidence", type=float)
    recall.add_argument("--include-candidates", action="store_true", default=None)

    context = commands.add_parser("context", parents=[common], help="a token-budgeted context pack")
    context.add_argument("query")
    context.add_argument("--budget", type=int, dest="budget_tokens", help="tokens (default 2000)")
    context.add_argument("--session", help="include this session's working memory")
    context.add_argument("--types", type=_csv)
    context.add_argument("--entity", type=int)

    remember = commands.add_parser("remember", parents=[common], help="store a memory")
    remember.add_argument("text", help="what to remember ('-' reads stdin)")
    remember.add_argument("--type", choices=["identity", "preference", "episodic", "fact"], help="default fact")
    remember.add_argument("--certainty", choices=["verbatim", "extracted", "inferred", "consolidated"])
    remember.add_argument("--confidence", type=float)
    remember.add_argument("--importance", type=float)
    remember.add_argument("--entity", type=int, help="the entity it is about")

    commands.add_parser("status", parents=[common], help="the workspace's pending background work")
    commands.add_parser("mcp", parents=[common], help="serve MCP over stdio (needs mnemo-client[mcp])")
    return parser


# --- commands ----------------------------------------------------------------------------

def _dump(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_dump(v) for v in value]
    return value


def _print_json(value: Any, out: IO[str]) -> None:
    out.write(json.dumps(_dump(value), ensure_ascii=False) + "\n")


def _short(text: str, width: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def cmd_log(client: Mnemo, args, out: IO[str]) -> int:
    result = client.log(_text(args.content), channel=args.channel, channel_id=args.channel_id,
                        sender_name=args.sender_name, sender_kind=args.sender_kind, thread=args.thread,
                        direction=args.direction, external_id=args.external_id, occurred_at=args.occurred_at,
                        metadata=args.metadata)
    if args.json:
        _print_json(result, out)
    else:
        out.write(f"{result.status} interaction {result.id} (conversation {result.conversation_id})\n")
    return OK


def cmd_recall(client: Mnemo, args, out: IO[str]) -> int:
    answer = client.recall(args.query, limit=args.limit, types=args.types, entity=args.entity,
                           min_confidence=args.min_confidence, include_candidates=args.include_candidates)
    if args.json:
        _print_json(answer, out)
        return OK
    for item in answer.results:
        label = f"{item.kind}:{item.type}" if item.type and item.type != item.kind else item.kind
        out.write(f"{item.score:.3f}  {label} {item.id}  {_short(item.text)}\n")
    if not answer.results:
        out.write("nothing found\n")
    return OK


def cmd_context(client: Mnemo, args, out: IO[str]) -> int:
    pack = client.context(args.query, budget_tokens=args.budget_tokens, session=args.session, types=args.types,
                          entity=args.entity)
    if args.json:
        _print_json(pack, out)
    else:
        out.write(pack.text.rstrip("\n") + "\n")
        sys.stderr.write(f"pack {pack.pack_id}: {pack.tokens_used}/{pack.budget_tokens} tokens\n")
    return OK


def cmd_remember(client: Mnemo, args, out: IO[str]) -> int:
    stored = client.remember(_text(args.text), type=args.type, certainty=args.certainty, confidence=args.confidence,
                             importance=args.importance, entity=args.entity)
    if args.json:
        _print_json(stored, out)
    else:
        memory = stored.memory
        out.write(f"{stored.outcome} memory {memory.id} ({memory.type}, {memory.status})\n")
    return OK


def cmd_status(client: Mnemo, args, out: IO[str]) -> int:
    status = client.status()
    if args.json:
        _print_json(status, out)
        return OK
    pending = ", ".join(f"{kind} {count}" for kind, count in status.pending.items() if count) or "nothing"
    seen = status.worker.last_seen_at.isoformat() if status.worker.last_seen_at else "never"
    out.write(f"workspace  {status.workspace.name} ({status.workspace.slug})\n"
              f"idle       {'yes' if status.idle else 'no'}\n"
              f"pending    {pending}\n"
              f"worker     last seen {seen}\n")
    return OK


# --- batch ---------------------------------------------------------------------------------

def _lines(stream: IO[bytes]) -> Iterator[tuple[int, int, bytes]]:
    """(line number, bytes read so far, line) for each non-blank line."""
    read = 0
    for number, line in enumerate(stream, start=1):
        read += len(line)
        if line.strip():
            yield number, read, line


def _auto_id(item: dict, repeats: Counter) -> str:
    """An external id from the item's content, stable across runs: the n-th line with the
    same content gets `:n` (n ≥ 2), so two identical messages stay two."""
    digest = hashlib.sha256(json.dumps(item, sort_keys=True, ensure_ascii=False,
                                       separators=(",", ":")).encode()).hexdigest()[:32]
    repeats[digest] += 1
    return f"jsonl:{digest}" + (f":{repeats[digest]}" if repeats[digest] > 1 else "")


class _BatchRun:
    """Totals of a batch run, each rejection named by its input line."""

    def __init__(self) -> None:
        self.created = self.duplicate = 0
        self.rejected: list[dict[str, Any]] = []
        self.results: list[dict[str, Any]] = []

    def local_rejection(self, line: int, message: str) -> None:
        error = {"code": "malformed_json", "message": message}
        self.rejected.append({"line": line, **error})
        self.results.append({"line": line, "status": "rejected", "id": None, "external_id": None, "error": error})

    def add(self, lines: list[int], answer: InteractionBatchOut) -> None:
        self.created += answer.created
        self.duplicate += answer.duplicate
        for line, result in zip(lines, answer.results):
            row = {"line": line, **result.model_dump(mode="json", exclude={"index"})}
            self.results.append(row)
            if result.status == "rejected":
                self.rejected.append({"line": line, **(row["error"] or {})})

    def summary(self) -> str:
        return f"created {self.created}, duplicate {self.duplicate}, rejected {len(self.rejected)}"


def cmd_batch(client: Mnemo, args, out: IO[str]) -> int:
    if not 1 <= args.chunk_size <= MAX_BATCH:
        raise UsageError(f"--chunk-size must be 1 to {MAX_BATCH}")
    if args.file == "-":
        stream, size = sys.stdin.buffer, None
    else:
        try:
            stream = open(args.file, "rb")
        except OSError as exc:
            raise UsageError(f"cannot read {args.file}: {exc.strerror}") from None
        size = os.fstat(stream.fileno()).st_size or None
    run, repeats = _BatchRun(), Counter()
    chunk: list[dict] = []
    chunk_lines: list[int] = []
    chunks_sent = 0
    with stream:
        lines = _lines(stream)
        for number, read, raw in lines:
            try:
                item = json.loads(raw)
                if not isinstance(item, dict):
                    raise ValueError("a line must be a JSON object")
            except (ValueError, UnicodeDecodeError) as exc:
                run.local_rejection(number, f"line {number}: {exc}")
                continue
            if not args.no_auto_ids and not item.get("external_id"):
                item["external_id"] = _auto_id(item, repeats)
            chunk.append(item)
            chunk_lines.append(number)
            if len(chunk) == args.chunk_size:
                run.add(chunk_lines, client.log_batch(chunk, chunk_size=args.chunk_size))
                chunk, chunk_lines, chunks_sent = [], [], chunks_sent + 1
                # Long inputs say how far they got; one chunk's worth says nothing until done.
                if not args.quiet:
                    share = f", {100 * read // size}% of the file" if size else ""
                    sys.stderr.write(f"mnemo batch: {number} lines read{share}: {run.summary()}\n")
        if chunk:
            run.add(chunk_lines, client.log_batch(chunk, chunk_size=args.chunk_size))
    if args.json:
        _print_json({"created": run.created, "duplicate": run.duplicate, "rejected": len(run.rejected),
                     "results": run.results}, out)
    else:
        out.write(run.summary() + "\n")
        for rejection in run.rejected:
            out.write(f"  line {rejection['line']}: {rejection.get('code')}: {rejection.get('message')}\n")
    return REJECTED if run.rejected else OK


# --- mcp -----------------------------------------------------------------------------------

_MCP_MODULE = "mnemo_client.mcp_stdio"


def cmd_mcp(url: str, key: str) -> int:
    """The stdio MCP bridge, imported only here: the client itself does not need the `mcp`
    package. A missing bridge or SDK is a usage error with the way to install it."""
    try:
        bridge = import_module(_MCP_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name not in (_MCP_MODULE, "mcp") and not (exc.name or "").startswith("mcp."):
            raise
        sys.stderr.write(f"mnemo mcp: the MCP bridge is not available ({exc.name} is missing). "
                         "Install it with: pip install 'mnemo-client[mcp]'\n")
        return USAGE
    return int(bridge.main(url, key) or 0)


# --- main ----------------------------------------------------------------------------------

COMMANDS = {"log": cmd_log, "batch": cmd_batch, "recall": cmd_recall, "context": cmd_context,
            "remember": cmd_remember, "status": cmd_status}


def _report(error: ApiError, args) -> None:
    if args.json:
        sys.stderr.write(json.dumps(error.envelope, ensure_ascii=False) + "\n")
        return
    sys.stderr.write(f"mnemo: {error.status or 'refused before sending'} {error.code}: {error.message}\n")
    for item in error.details.get("errors", [])[:10]:
        where = ".".join(str(part) for part in item.get("loc", []))
        sys.stderr.write(f"  {where}: {item.get('msg')}\n")
    extra = {k: v for k, v in error.details.items() if k != "errors"}
    if extra:
        sys.stderr.write(f"  details: {json.dumps(extra, ensure_ascii=False)}\n")


def main(argv: list[str] | None = None, out: IO[str] | None = None) -> int:
    out = out or sys.stdout
    args = build_parser().parse_args(argv)
    key = args.key or os.environ.get("MNEMO_API_KEY")
    site = api_url(args.url).removesuffix("/api/v1/")
    try:
        if not key:
            raise UsageError("no API key: set MNEMO_API_KEY or pass --key")
        if args.command == "mcp":
            return cmd_mcp(site, key)
        with Mnemo(site, key, timeout=args.timeout) as client:
            return COMMANDS[args.command](client, args, out)
    except UsageError as exc:
        sys.stderr.write(f"mnemo: {exc}\n")
        return USAGE
    except ApiError as exc:
        _report(exc, args)
        return API_ERROR
    except ConnectionFailed as exc:
        sys.stderr.write(f"mnemo: cannot reach {site}: {exc.__cause__ or exc}\n")
        return CONNECTION
    except MnemoError as exc:
        sys.stderr.write(f"mnemo: {exc}\n")
        return API_ERROR
    except KeyboardInterrupt:
        return 130
