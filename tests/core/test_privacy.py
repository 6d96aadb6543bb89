"""The privacy filter (core/privacy): secrets refused, private blocks removed, reads redacted.

Pure functions, so no database. Every secret here is built from random characters at test
time: none is real, and none is pasted from anywhere.

Property tests draw a *seed* and build each secret with `random.Random(seed)` instead of
letting Hypothesis pick the characters: Hypothesis shrinks towards `AAAA…`, which is a
placeholder, not a credential, and the rules rightly ignore it. Real secrets are random,
so a seeded generator is the faithful model; Hypothesis still chooses the seed, the kind
of secret, where it sits and the prose around it.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.privacy import (
    RULES,
    FilteredText,
    SecretFound,
    SecretMatch,
    filter_for_storage,
    find_secrets,
    redact,
    strip_private,
)

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
UPPER32 = string.ascii_uppercase + "234567"


def _random(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _password(rng: random.Random) -> str:
    """A chosen password: mixed case, a digit and a symbol, starting with a letter."""
    chars = [rng.choice(string.ascii_uppercase), rng.choice(string.digits), rng.choice("!#%&*+-=?@^_~")]
    chars += [rng.choice(ALNUM + "!#%&*+-=?@^_~") for _ in range(rng.randint(6, 14))]
    rng.shuffle(chars)
    return rng.choice(string.ascii_lowercase) + "".join(chars)


def _machine_token(rng: random.Random) -> str:
    token = list(_random(rng, rng.randint(24, 48)) + rng.choice(string.digits))
    rng.shuffle(token)
    return "".join(token)


# Each factory returns (fragment, secret): the fragment as it would be written, and the
# part of it that is the secret and must be covered by the reported span.
def _whole(secret: str) -> tuple[str, str]:
    return secret, secret


def _aws_secret(rng):
    before, after = rng.choice(
        [("aws_secret_access_key = ", ""), ('AWS_SECRET_ACCESS_KEY="', '"'), ('"SecretAccessKey": "', '"')]
    )
    secret = _random(rng, 40, B64)
    return before + secret + after, secret


def _azure_storage(rng):
    secret = base64.b64encode(rng.randbytes(64)).decode()
    name = _random(rng, 10, string.ascii_lowercase)
    fragment = f"DefaultEndpointsProtocol=https;AccountName={name};AccountKey={secret};EndpointSuffix=core.windows.net"
    return fragment, secret


def _azure_shared_access(rng):
    secret = base64.b64encode(rng.randbytes(32)).decode()
    namespace = _random(rng, 8, string.ascii_lowercase)
    fragment = (
        f"Endpoint=sb://{namespace}.servicebus.windows.net/;"
        f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={secret}"
    )
    return fragment, secret


def _slack_token(rng):
    prefix = rng.choice(["xoxb", "xoxp", "xoxa", "xoxr", "xoxs"])
    return _whole(f"{prefix}-{_random(rng, 12, string.digits)}-{_random(rng, 13, string.digits)}-{_random(rng, 24)}")


def _slack_app_token(rng):
    app, stamp, signature = _random(rng, 10, UPPER32), _random(rng, 13, string.digits), _random(rng, 64, "0123456789abcdef")
    return _whole(f"xapp-1-A{app}-{stamp}-{signature}")


def _slack_webhook(rng):
    team, channel = _random(rng, 8, UPPER32), _random(rng, 10, UPPER32)
    return _whole(f"https://hooks.slack.com/services/T{team}/B{channel}/{_random(rng, 24)}")


def _openai(rng):
    # Keys OpenAI issues embed T3BlbkFJ, base64 of "OpenAI".
    kind = rng.choice(["legacy", "proj", "svcacct"])
    if kind == "legacy":
        return _whole(f"sk-{_random(rng, 20)}T3BlbkFJ{_random(rng, 20)}")
    return _whole(f"sk-{kind}-{_random(rng, 74, B64URL)}T3BlbkFJ{_random(rng, 74, B64URL)}")


def _private_key(rng):
    kind = rng.choice(["RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED ", "", "PGP "])
    block = " BLOCK" if kind == "PGP " else ""
    body = base64.b64encode(rng.randbytes(rng.randint(60, 400))).decode()
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return _whole(f"-----BEGIN {kind}PRIVATE KEY{block}-----\n{lines}\n-----END {kind}PRIVATE KEY{block}-----")


def _jwt(rng):
    header = _b64url(json.dumps({"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"}).encode())
    payload = _b64url(json.dumps({"sub": _random(rng, 12), "iat": rng.randint(10**9, 2 * 10**9)}).encode())
    return _whole(f"{header}.{payload}.{_random(rng, 43, B64URL)}")


def _url_password(rng):
    scheme = rng.choice(["postgres", "mysql", "redis", "amqp", "https", "mongodb+srv"])
    user = _random(rng, 6, string.ascii_lowercase)
    secret = _password(rng).replace("#", "!").replace("?", "!")  # `#`, `?` would end the authority
    return f"{scheme}://{user}:{secret}@db-{_random(rng, 5, string.ascii_lowercase)}.internal:5432/app", secret


ASSIGNMENT_STYLES = [
    ("DB_PASSWORD=", "", "password"),
    ('export DB_PASSWORD="', '"', "password"),
    ("password: ", "", "password"),
    ("'password' => '", "'", "password"),
    ("--passwd=", "", "password"),
    ('"apiKey": "', '"', "token"),
    (":api_key => '", "'", "token"),
    ("CLIENT_SECRET=", "", "token"),
    ("github_token: ", "", "token"),
    ("Authorization: Bearer ", "", "token"),
    ("X-API-Key: ", "", "token"),
    ("SECRET_KEY = '", "'", "token"),
    ("private_key = `", "`", "token"),
    ("auth_token := ", "", "token"),
]


def _assigned(rng):
    before, after, kind = rng.choice(ASSIGNMENT_STYLES)
    secret = _password(rng) if kind == "password" else _machine_token(rng)
    return before + secret + after, secret


FACTORIES = {
    "aws_access_key": lambda r: _whole(r.choice(["AKIA", "ASIA"]) + _random(r, 16, UPPER32)),
    "aws_secret_key": _aws_secret,
    "google_api_key": lambda r: _whole("AIza" + _random(r, 35, B64URL)),
    "google_oauth_client_secret": lambda r: _whole("GOCSPX-" + _random(r, 28, B64URL)),
    "google_oauth_token": lambda r: _whole("ya29." + _random(r, r.randint(60, 200), B64URL)),
    "azure_storage_key": _azure_storage,
    "azure_shared_access_key": _azure_shared_access,
    "github_token": lambda r: _whole(r.choice(["ghp", "gho", "ghu", "ghs", "ghr"]) + "_" + _random(r, 36)),
    "github_fine_grained_token": lambda r: _whole(f"github_pat_{_random(r, 22)}_{_random(r, 59)}"),
    "gitlab_token": lambda r: _whole(
        r.choice(["glpat", "gldt", "glrt", "glptt", "glft", "gloas"]) + "-" + _random(r, 20, B64URL)
    ),
    "slack_token": lambda r: r.choice([_slack_token, _slack_app_token])(r),
    "slack_webhook_url": _slack_webhook,
    "stripe_key": lambda r: _whole(
        r.choice(["sk_live_", "sk_test_", "rk_live_", "rk_test_"]) + _random(r, r.choice([24, 99]))
    ),
    "stripe_webhook_secret": lambda r: _whole("whsec_" + _random(r, 32)),
    "anthropic_key": lambda r: _whole(f"sk-ant-api03-{_random(r, 93, B64URL)}AA"),
    "openai_key": _openai,
    "huggingface_token": lambda r: _whole("hf_" + _random(r, 34, string.ascii_letters)),
    "npm_token": lambda r: _whole("npm_" + _random(r, 36)),
    "pypi_token": lambda r: _whole("pypi-AgEIcHlwaS5vcmc" + _random(r, 120, B64URL)),
    "sendgrid_key": lambda r: _whole(f"SG.{_random(r, 22, B64URL)}.{_random(r, 43, B64URL)}"),
    "private_key": _private_key,
    "jwt": _jwt,
    "url_password": _url_password,
    "assigned_secret": _assigned,
    "mnemo_api_key": lambda r: _whole(f"mn_{_random(r, 8)}_{_random(r, 40)}"),
}

# Text that resembles a rule's secret but is not one: nothing may be found in it.
NEAR_MISSES = {
    "aws_access_key": ["AKIA" + "Q2W3E4R5T6Y7U2I", "AKIAXXXXXXXXXXXXXXXX", "XAKIAQ2W3E4R5T6Y7U2IO is a part number"],
    "aws_secret_key": ["aws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}", "aws_region = us-east-1"],
    "google_api_key": ["AIza" + "Sy" + "b" * 10 + "c1d2e3f4g5h6i7j8k9", "Aizawa is a town in Japan"],
    "google_oauth_client_secret": ["GOCSPX-short", "client secret starts with GOCSPX-"],
    "google_oauth_token": ["ya29.short", "the ya29 prefix marks an access token"],
    "azure_storage_key": ["DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=<key>;", "AccountKey=abc123"],
    "azure_shared_access_key": ["SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=..."],
    "github_token": [
        "ghp_" + "Zq8rT2vLm9Kp4sWn7Yc1Xb6Hd5Gf3Je0Ua2",  # 35 characters, one short
        "ghx_" + "Zq8rT2vLm9Kp4sWn7Yc1Xb6Hd5Gf3Je0Ua2Q",
        "ghp_" + "x" * 36,
    ],
    "github_fine_grained_token": ["github_pat_short_token", "see github_pat_ tokens in the docs"],
    "gitlab_token": ["glpat-short", "glpat-xxxxxxxxxxxxxxxxxxxx", "glossary-entries-for-the-team"],
    "slack_token": ["xoxb-not-a-real-token-at-all", "xoxo, see you soon"],
    "slack_webhook_url": ["post to https://hooks.slack.com/services/ with your webhook"],
    "stripe_key": ["pk_live_" + "Zq8rT2vLm9Kp4sWn7Yc1Xb6H", "sk_live_short", "risk_live_monitoring"],
    "stripe_webhook_secret": ["whsec_short", "the whsec_ prefix"],
    "anthropic_key": ["sk-ant-api03-short", "the sk-ant- prefix"],
    "openai_key": ["I use sk-learn and scikit-learn", "sk-" + "abcdefghij" * 4, "sk-12345678901234567890"],
    "huggingface_token": ["hf_" + "abcdefghijklmnopqrstuvwxyzabcdefgh", "hf_hub_download"],
    "npm_token": ["npm_" + "Zq8rT2vLm9Kp4sWn7Yc1Xb6Hd5Gf3Je0Ua2", "npm_config_registry"],
    "pypi_token": ["pypi-simple-index-mirror", "pip install --index-url https://pypi.org/simple"],
    "sendgrid_key": ["SG.short.segments", "SG." + "a" * 22 + "." + "b" * 20],
    "private_key": [
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----",
        "the file starts with -----BEGIN RSA PRIVATE KEY----- and ends with -----END RSA PRIVATE KEY-----",
    ],
    "jwt": [
        # Three base64url segments whose header is JSON without "alg", or not JSON at all.
        _b64url(b'{"foo": "bar"}') + "." + _b64url(b'{"sub": "1"}') + ".c2lnbmF0dXJlc2lnbmF0dXJl",
        "eyeglasses.are-on.the-kitchen-table",
    ],
    "url_password": [
        "postgres://user:password@localhost/db",
        "https://admin:****@example.com",
        "redis://:${REDIS_PASSWORD}@cache:6379",
        "mysql://root:<password>@db/app",
        "ftp://anonymous:@ftp.example.org",
        "ssh://git@github.com/org/repo.git",
        "https://example.com/path?time=10:30@home",
    ],
    "assigned_secret": [
        "my password is too long",
        "the secret: we love hiking",
        "Password: ********",
        "token: expired yesterday",
        "max_tokens: 4096",
        "tokenizer: bert-base-uncased",
        "tokenizer_path=models/tok-v2.json",
        "api_key = settings.OPENAI_API_KEY",
        "api_key = os.environ['OPENAI_API_KEY']",
        "password = getpass()",
        "private_key: /etc/ssl/private/server2048.pem",
        "password_length: 16",
        "secret: surprise-party",
        "Secret: 2024-05-12",
        "compass: N45E12W3",
        "public_key: Zq8rT2vLm9Kp4sWn7Yc1Xb6H",
    ],
    "mnemo_api_key": ["mn_abcdefg_" + "Zq8rT2vLm9Kp4sWn7Yc1Xb6Hd5Gf3Je0Ua2Q9wE4", "mn_Ab3Cd4Ef_short"],
}

PROSE_WORDS = [
    "the", "a", "my", "we", "I", "love", "hiking", "in", "Paris", "on", "May", "7", "at", "3pm", "2024",
    "password", "secret", "token", "key", "api_key", "is", "was", "too", "long", ":", "=", ",", ".", "!",
    "?", "-", "(", ")", "it's", "café", "naïve", "Wednesday", "remember", "sister", "birthday", "😀",
]
prose = st.lists(st.sampled_from(PROSE_WORDS), max_size=30).map(" ".join)
any_prose = st.one_of(prose, st.text(max_size=80))
seeds = st.integers(min_value=0, max_value=2**32 - 1)
rule_names = st.sampled_from(sorted(FACTORIES))


def _covering(matches: list[SecretMatch], secret: str, at: int) -> list[SecretMatch]:
    return [m for m in matches if m.start <= at and at + len(secret) <= m.end]


def test_every_rule_has_a_positive_example_and_a_near_miss():
    names = {rule.name for rule in RULES}
    assert names == set(FACTORIES) == set(NEAR_MISSES)
    assert all(re.fullmatch(r"[a-z0-9]+(?:_[a-z0-9]+)*", name) for name in names)


@pytest.mark.parametrize("rule", sorted(FACTORIES))
def test_it_finds_each_kind_of_secret_in_a_sentence(rule):
    for seed in range(20):
        fragment, secret = FACTORIES[rule](random.Random(seed))
        text = f"Here is what I set up yesterday: {fragment} and then I went home."
        at = text.index(secret)
        matches = find_secrets(text)
        assert [m.rule for m in _covering(matches, secret, at)] == [rule], (seed, matches)


@pytest.mark.parametrize(("rule", "text"), [(rule, text) for rule, texts in NEAR_MISSES.items() for text in texts])
def test_it_ignores_text_that_only_resembles_a_secret(rule, text):
    assert find_secrets(text) == []


@pytest.mark.parametrize(("before", "after", "kind"), ASSIGNMENT_STYLES)
def test_it_finds_random_values_in_every_assignment_style(before, after, kind):
    rng = random.Random(7)
    secret = _password(rng) if kind == "password" else _machine_token(rng)
    text = f"config: {before}{secret}{after}\n"
    [match] = find_secrets(text)
    assert (match.rule, text[match.start : match.end]) == ("assigned_secret", secret)


def test_a_rejected_candidate_does_not_hide_an_assignment_inside_it():
    secret = _password(random.Random(8))
    text = f'set the password: DB_PASSWORD="{secret}" in .env'
    [match] = find_secrets(text)
    assert text[match.start : match.end] == secret


def test_a_password_with_an_at_sign_in_a_url_is_found_whole():
    text = "DATABASE_URL=postgres://app:pa@ss9Wd!x@db.internal:5432/app"
    [match] = find_secrets(text)
    assert (match.rule, text[match.start : match.end]) == ("url_password", "pa@ss9Wd!x")


def test_an_unterminated_private_key_block_is_still_a_key():
    text = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7Zq8rT2vLm9Kp4sWn7Yc1Xb6Hd5Gf3Je0Ua2Q9wE4"
    [match] = find_secrets(text)
    assert (match.rule, match.start, match.end) == ("private_key", 0, len(text))


def test_matches_are_ordered_by_start_and_overlaps_go_to_the_specific_rule():
    rng = random.Random(3)
    github, _ = FACTORIES["github_token"](rng)
    pem, _ = FACTORIES["private_key"](rng)
    text = f"password: {github}\nand the deploy key:\n{pem}"
    assert [m.rule for m in find_secrets(text)] == ["github_token", "private_key"]


def test_filter_for_storage_refuses_a_secret_with_the_first_match():
    rng = random.Random(4)
    token, _ = FACTORIES["stripe_key"](rng)
    key, _ = FACTORIES["aws_access_key"](rng)
    with pytest.raises(SecretFound) as caught:
        filter_for_storage(f"billing uses {token}, storage uses {key}")
    assert isinstance(caught.value, ValueError)
    assert caught.value.match.rule == "stripe_key"
    assert "stripe_key" in str(caught.value) and caught.value.match.description in str(caught.value)


def test_a_secret_inside_a_private_block_is_stripped_not_rejected():
    token, _ = FACTORIES["github_token"](random.Random(5))
    result = filter_for_storage(f"Deploys use the bot account. <private>its token is {token}</private> Ask Sam.")
    assert result == FilteredText(text="Deploys use the bot account. Ask Sam.", private_removed=True)


def test_an_unclosed_private_tag_strips_to_the_end():
    result = strip_private("We met on Tuesday. <private>My home address is 12 Elm St.\nCall after 6.")
    assert result == FilteredText(text="We met on Tuesday.", private_removed=True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Call me <private>Bob</private> tomorrow", "Call me tomorrow"),
        ("I live in <PRIVATE>Springfield</Private>, near the lake.", "I live in, near the lake."),
        ("<private>x</private> hello", "hello"),
        ("one\n<private>\nline two\nline three\n</private>\nfour", "one\nfour"),
        ("a <private>1</private> b <private reason='health'>2</private> c", "a b c"),
        ("outer <private>a <private>nested</private> still private</private> after", "outer after"),
        ("word<private>glued</private>word", "wordword"),
        ("a stray </private> closing tag", "a stray closing tag"),
        # Removing the inner block forms a new, unclosed <private>: it hides the rest.
        ("<priv<private>x</private>ate>hidden</private> shown", ""),
    ],
)
def test_strip_private_removes_blocks_and_closes_the_gap(text, expected):
    assert strip_private(text) == FilteredText(text=expected, private_removed=True)


def test_redact_masks_personal_data_and_secrets():
    token, _ = FACTORIES["mnemo_api_key"](random.Random(6))
    text = (
        f"Mail ana.lopez+work@example.co.uk or call +1 415 555 0100 / (555) 123-4567. "
        f"Server 10.0.0.12 and fe80::1ff:fe23:4567:890a, key {token}, "
        f"db postgres://app:Xk9mP2vQ@db.example.com/app at 12:30:45 on 2024-05-12."
    )
    assert redact(text) == (
        "Mail [email] or call [phone] / [phone]. "
        "Server [ip] and [ip], key [secret:mnemo_api_key], "
        "db postgres://app:[secret:url_password]@db.example.com/app at 12:30:45 on 2024-05-12."
    )


def test_redact_leaves_ordinary_text_alone():
    text = "We hiked 12.5 km in 3:45 on 2024-05-12, version 1.2.3, and paid $1,250.00."
    assert redact(text) == text


@settings(max_examples=300)
@given(rule=rule_names, seed=seeds, before=any_prose, after=any_prose)
def test_property_an_embedded_secret_of_any_kind_is_caught_with_a_covering_span(rule, seed, before, after):
    fragment, secret = FACTORIES[rule](random.Random(seed))
    text = f"{before} {fragment} {after}"
    at = len(before) + 1 + fragment.index(secret)
    covering = _covering(find_secrets(text), secret, at)
    assert [m.rule for m in covering] == [rule]


@given(rule=rule_names, seed=seeds, before=prose, after=prose)
def test_property_errors_and_descriptions_never_contain_the_secret(rule, seed, before, after):
    fragment, secret = FACTORIES[rule](random.Random(seed))
    with pytest.raises(SecretFound) as caught:
        filter_for_storage(f"{before} {fragment} {after}")
    error = caught.value
    assert secret not in str(error) and secret not in repr(error)
    assert secret not in error.match.description
    assert all(secret not in m.description for m in find_secrets(fragment))


open_tags = st.sampled_from(["<private>", "<PRIVATE>", "<Private reason='x'>", "< private >"])
close_tags = st.sampled_from(["</private>", "</PRIVATE>", "</ private>", "</Private >"])
public_text = st.text(alphabet=string.ascii_lowercase + " \n.,!", max_size=40)
private_text = st.text(alphabet=string.ascii_uppercase + string.digits + " \n", min_size=1, max_size=40)


@given(
    blocks=st.lists(st.tuples(public_text, open_tags, private_text, close_tags), max_size=5),
    tail=public_text,
    unclosed=st.one_of(st.none(), st.tuples(open_tags, private_text)),
)
def test_property_strip_private_keeps_only_public_text(blocks, tail, unclosed):
    text = "".join(public + opening + private + closing for public, opening, private, closing in blocks) + tail
    if unclosed:
        text += unclosed[0] + unclosed[1]
    result = strip_private(text)
    # Only private content and tags hold capitals, so none may survive.
    assert not any(char.isupper() for char in result.text)
    public = "".join(public for public, *_ in blocks) + tail
    assert "".join(result.text.split()) == "".join(public.split())
    assert result.private_removed == bool(blocks or unclosed)


tag_soup = st.lists(
    st.sampled_from(
        ["<private>", "</private>", "<PRIVATE>", "<priv", "ate>", "<", ">", "/", " ", "\n", "word", ".", "private"]
    ),
    max_size=25,
).map("".join)


@given(text=st.one_of(tag_soup, st.text(max_size=60)))
def test_property_strip_private_is_idempotent_and_leaves_no_tag(text):
    once = strip_private(text)
    twice = strip_private(once.text)
    assert twice == FilteredText(text=once.text, private_removed=False)


emails = st.builds(
    lambda local, domain, tld: f"{local}@{domain}.{tld}",
    st.from_regex(r"[a-z0-9][a-z0-9._+\-]{0,15}", fullmatch=True),
    st.from_regex(r"[a-z0-9][a-z0-9\-]{0,10}[a-z0-9]", fullmatch=True),
    st.sampled_from(["com", "org", "io", "co.uk", "dev"]),
)
ipv4s = st.tuples(*[st.integers(0, 255)] * 4).map(lambda octets: ".".join(map(str, octets)))


@given(email=emails, ip=ipv4s, rule=rule_names, seed=seeds, words=st.lists(prose, min_size=4, max_size=4))
def test_property_redact_leaves_no_email_ip_or_secret(email, ip, rule, seed, words):
    fragment, secret = FACTORIES[rule](random.Random(seed))
    text = f"{words[0]} {email} {words[1]} {ip} {words[2]} {fragment} {words[3]}"
    redacted = redact(text)
    assert email not in redacted
    assert ip not in redacted
    assert secret not in redacted
    assert f"[secret:{rule}]" in redacted


@given(text=prose)
def test_property_text_without_secrets_or_private_tags_is_stored_unchanged(text):
    assert filter_for_storage(text) == FilteredText(text=text, private_removed=False)
