"""The simulated agents of bench/load.py (issue 16): each logs what it hears (single
messages, now and then a batch), asks for context and recalls before answering, and looks
at the review queue. Run by bench/load.py; on its own:

    MNEMO_BENCH_KEY=mn_… locust -f bench/locustfile.py --headless -u 16 -r 16 --run-time 120s \
        --host http://127.0.0.1:8000

Every logged message's id is appended to MNEMO_BENCH_IDS (one per line) when set, so the
caller can measure the lag from ingest to embedded."""

from __future__ import annotations

import itertools
import os
import random
import threading
import uuid

from locust import HttpUser, between, task

KEY = os.environ.get("MNEMO_BENCH_KEY", "")
IDS_FILE = os.environ.get("MNEMO_BENCH_IDS", "")
_ids_lock = threading.Lock()  # locust runs users as greenlets in one process: one writer at a time anyway
_agent_numbers = itertools.count()

LINES = [
    "I moved the deploy to Thursday because the tests were flaky",
    "Can you remind me what we decided about the pricing page?",
    "I prefer short answers with the command first",
    "The customer in Lyon asked again about the invoice export",
    "We met with the design team and agreed on the new onboarding flow",
    "My daughter starts school next week so I will be offline in the mornings",
    "The staging database ran out of disk again last night",
    "I work at Acme Corp and lead the data platform team",
]
QUESTIONS = [
    "what did we decide about the pricing page", "when is the deploy", "what does the customer in Lyon need",
    "how does the user like answers formatted", "what happened with the staging database",
    "who leads the data platform team", "what is the onboarding flow", "when will the user be offline",
]


class Agent(HttpUser):
    # An agent thinks between calls; 16 of them at 0.5-2 s apart is a busy team of agents.
    wait_time = between(0.5, 2.0)

    def on_start(self):
        number = next(_agent_numbers)
        self.client.headers["Authorization"] = f"Bearer {KEY}"
        self.handle = f"agent-{number}-user"
        self.thread = f"load-{number}-{uuid.uuid4().hex[:8]}"
        self.rng = random.Random(number)

    def _item(self) -> dict:
        return {"channel": "chat", "channel_id": self.handle, "sender_name": f"User {self.handle}",
                "thread": self.thread, "content": f"{self.rng.choice(LINES)} ({uuid.uuid4().hex[:6]})"}

    def _remember(self, ids: list[int]) -> None:
        if IDS_FILE and ids:
            with _ids_lock, open(IDS_FILE, "a") as file:
                file.write("".join(f"{i}\n" for i in ids))

    @task(10)
    def log_single(self):
        with self.client.post("/api/v1/interactions", json=self._item(), name="POST /interactions",
                              catch_response=True) as response:
            if response.status_code in (200, 201):
                self._remember([response.json()["id"]])
            else:
                response.failure(f"{response.status_code}: {response.text[:200]}")

    @task(1)
    def log_batch(self):
        items = [self._item() for _ in range(50)]
        with self.client.post("/api/v1/interactions/batch", json={"items": items}, name="POST /interactions/batch",
                              catch_response=True) as response:
            if response.status_code == 200:
                self._remember([r["id"] for r in response.json()["results"] if r["status"] == "created"])
            else:
                response.failure(f"{response.status_code}: {response.text[:200]}")

    # Not named `context`: HttpUser.context() is Locust's own per-request hook.
    @task(4)
    def ask_context(self):
        self.client.post("/api/v1/context", json={"query": self.rng.choice(QUESTIONS), "budget_tokens": 2000},
                         name="POST /context")

    @task(4)
    def ask_recall(self):
        self.client.post("/api/v1/recall", json={"query": self.rng.choice(QUESTIONS), "limit": 10},
                         name="POST /recall")

    @task(2)
    def review_queue(self):
        self.client.get("/api/v1/candidates", params={"status": "pending", "limit": 20}, name="GET /candidates")
