"""Providers: the bundled embedding model for real, our OpenAI-compatible clients against a
local server speaking that protocol, and the token counters."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from core.providers import ProviderError, get_embedder, get_llm, get_token_counter
from core.providers.embeddings import OpenAICompatibleEmbedder, SentenceTransformerEmbedder
from core.providers.llm import LLMClient
from core.providers.tokens import ByteTokenCounter, WordPieceTokenCounter
from tests.openai_server import OpenAIServer


@pytest.fixture
def server():
    s = OpenAIServer()
    yield s
    s.close()


def cosine(a, b):
    return sum(x * y for x, y in zip(a, b))


# --- the bundled model ---------------------------------------------------------------------

def test_the_bundled_model_embeds_offline_into_unit_vectors(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    embedder = get_embedder()
    assert isinstance(embedder, SentenceTransformerEmbedder) and embedder.dimensions == 384
    pet, dog, tax = embedder.embed([
        "I adopted a puppy last week.", "We got a new dog recently.", "The quarterly tax filing is due in April.",
    ])
    assert len(pet) == 384
    assert math.isclose(math.sqrt(sum(x * x for x in pet)), 1.0, rel_tol=1e-4)
    assert cosine(pet, dog) > cosine(pet, tax) + 0.2
    assert embedder.embed([]) == []


def test_the_model_loads_once_per_process():
    embedder = get_embedder()
    embedder.embed(["warm up"])
    model = embedder._model
    embedder.embed(["again"])
    assert get_embedder() is embedder and embedder._model is model


def test_the_default_runtime_is_onnx_with_the_torch_models_vectors(tmp_path, monkeypatch):
    """Exported into the cache on first use, checked, then reused; its vectors equal the
    torch pipeline's, alone and in batches of mixed lengths (padding, truncation)."""
    cache = tmp_path / "models"
    monkeypatch.setenv("MNEMO_MODEL_CACHE", str(cache))
    embedder, reference = SentenceTransformerEmbedder(), SentenceTransformerEmbedder(runtime="torch")
    texts = ["I adopted a puppy last week.", "ok", "Ünïcödé café 🙂 on 2023-05-08", "long " * 400,
             "What did Caroline say about the adoption agency in May?"] * 3
    got, expected = embedder.embed(texts), reference.embed(texts)
    assert embedder.runtime == "onnx" and reference.runtime == "torch"
    assert [p.suffix for p in cache.iterdir() if not p.name.startswith(".")] == [".onnx"]
    assert min(cosine(a, b) for a, b in zip(got, expected)) > 0.99999
    assert cosine(embedder.embed([texts[3]])[0], got[3]) > 0.999999  # alone as in a batch
    assert embedder._torch_model is None  # torch was needed to export and check, not to run
    again = SentenceTransformerEmbedder()  # another process: loads the cached file, no export
    monkeypatch.setattr("core.providers.onnx_model._export", lambda *a: pytest.fail("exported again"))
    assert cosine(again.embed(["ok"])[0], expected[1]) > 0.99999 and again.runtime == "onnx"


def test_an_onnx_export_that_fails_its_check_leaves_torch_and_says_why(tmp_path, monkeypatch):
    from core.providers import onnx_model

    monkeypatch.setenv("MNEMO_MODEL_CACHE", str(tmp_path / "models"))
    monkeypatch.setattr(onnx_model, "MIN_COSINE", 1.5)  # no export can pass
    embedder = SentenceTransformerEmbedder()
    [vector] = embedder.embed(["I adopted a puppy last week."])
    assert embedder.runtime == "torch" and len(vector) == 384
    assert "differ from the torch model" in embedder.fallback_reason  # and logged as a warning
    assert [p.name for p in (tmp_path / "models").iterdir()] == [".export.lock"]  # nothing unchecked is kept
    with pytest.raises(ProviderError):
        SentenceTransformerEmbedder(runtime="tensorflow")


def test_the_runtime_comes_from_settings(settings):
    from core.providers.embeddings import build_embedder

    settings.MNEMO_EMBEDDING_RUNTIME = "torch"
    assert build_embedder().runtime == "torch"
    settings.MNEMO_EMBEDDING_RUNTIME = "tensorflow"
    with pytest.raises(ProviderError, match="unknown embedding runtime"):
        build_embedder()


# --- OpenAI-compatible embeddings ------------------------------------------------------------

def test_the_http_embedder_orders_and_normalises_vectors(server):
    server.embeddings([[3.0, 4.0], [0.0, 2.0]])
    embedder = OpenAICompatibleEmbedder(base_url=server.url, model="nomic", api_key="sk-test", dimensions=2)
    assert embedder.embed(["a", "b"]) == [[0.6, 0.8], [0.0, 1.0]]
    request = server.requests[0]
    assert request["path"] == "/v1/embeddings"
    assert request["json"] == {"model": "nomic", "input": ["a", "b"]}
    assert request["auth"] == "Bearer sk-test"


def test_the_http_embedder_batches(server):
    server.embeddings([[1.0, 0.0]] * 2)
    server.embeddings([[0.0, 1.0]])
    embedder = OpenAICompatibleEmbedder(base_url=server.url, model="m", dimensions=2, batch_size=2)
    assert embedder.embed(["a", "b", "c"]) == [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]
    assert [len(r["json"]["input"]) for r in server.requests] == [2, 1]


@pytest.mark.parametrize("status, retryable", [(500, True), (503, True), (429, True), (400, False), (401, False)])
def test_http_embedder_errors_say_whether_retrying_helps(server, status, retryable):
    server.error(status)
    embedder = OpenAICompatibleEmbedder(base_url=server.url, model="m", dimensions=2)
    with pytest.raises(ProviderError) as info:
        embedder.embed(["a"])
    assert info.value.retryable is retryable


def test_http_embedder_refuses_vectors_of_the_wrong_width(server):
    server.embeddings([[1.0, 0.0, 0.0]])
    embedder = OpenAICompatibleEmbedder(base_url=server.url, model="m", dimensions=2)
    with pytest.raises(ProviderError, match="2 dimensions") as info:
        embedder.embed(["a"])
    assert info.value.retryable is False


def test_an_unreachable_embedding_endpoint_is_retryable():
    embedder = OpenAICompatibleEmbedder(base_url="http://127.0.0.1:1/v1", model="m", dimensions=2)
    with pytest.raises(ProviderError) as info:
        embedder.embed(["a"])
    assert info.value.retryable is True


# --- the LLM client ----------------------------------------------------------------------------

def client_for(server, **kwargs) -> LLMClient:
    return LLMClient(base_url=server.url, model="llama", sleep=lambda s: None, **kwargs)


def test_the_llm_client_asks_for_json_and_parses_it(server):
    server.chat('{"memories": [{"text": "likes tea"}]}')
    answer = client_for(server, api_key="k").complete_json(system="extract", user="I like tea")
    assert answer == {"memories": [{"text": "likes tea"}]}
    sent = server.requests[0]["json"]
    assert sent["response_format"] == {"type": "json_object"}
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]
    assert sent["model"] == "llama" and sent["temperature"] == 0.0


def test_the_llm_client_accepts_fenced_json(server):
    server.chat('```json\n{"ok": true}\n```')
    assert client_for(server).complete_json(system="s", user="u") == {"ok": True}


def test_the_llm_client_retries_server_errors_then_succeeds(server):
    server.error(503)
    server.chat("not json at all")
    server.chat('{"ok": 1}')
    assert client_for(server, retries=2).complete_json(system="s", user="u") == {"ok": 1}
    assert len(server.requests) == 3


def test_the_llm_client_gives_up_after_its_retries(server):
    for _ in range(3):
        server.error(500)
    with pytest.raises(ProviderError) as info:
        client_for(server, retries=2).complete_json(system="s", user="u")
    assert info.value.retryable is True
    assert len(server.requests) == 3


def test_the_llm_client_does_not_retry_a_client_error(server):
    server.error(401)
    with pytest.raises(ProviderError) as info:
        client_for(server, retries=3).complete_json(system="s", user="u")
    assert info.value.retryable is False and len(server.requests) == 1


def test_the_llm_client_times_out(server):
    server.chat('{"late": true}', delay=1.0)
    with pytest.raises(ProviderError, match="timed out") as info:
        client_for(server, timeout=0.2, retries=0).complete_json(system="s", user="u")
    assert info.value.retryable is True


def test_a_json_answer_that_is_not_an_object_is_refused(server):
    server.chat("[1, 2]")
    with pytest.raises(ProviderError, match="not an object"):
        client_for(server, retries=0).complete_json(system="s", user="u")


def test_the_llm_is_off_by_default(settings):
    settings.MNEMO_LLM_URL = ""
    assert get_llm() is None


# --- token counting ----------------------------------------------------------------------------

def test_the_default_counter_is_the_models_tokenizer_without_truncation():
    counter = get_token_counter()
    assert isinstance(counter, WordPieceTokenCounter)
    long_text = "memory " * 600  # far beyond the model's 128-token embedding window
    assert counter.count(long_text) == 600
    assert counter.count("") == 0
    assert counter.count("Caroline went to the LGBTQ support group yesterday.") >= 8


@hsettings(max_examples=200, deadline=None)
@given(st.text(), st.text())
def test_wordpiece_counts_add_up_across_a_space(a, b):
    # Context packs count items separately and join them with whitespace; the joined
    # text must never hold more tokens than the parts say.
    counter = WordPieceTokenCounter()
    assert counter.count(a + " " + b) <= counter.count(a) + counter.count(b)


_TEXTS = st.one_of(
    st.text(),
    st.lists(st.sampled_from(["Caroline", "went", "to", "the", "LGBTQ+", "café", "naïve", "12€", "—", "!!", "日本語",
                              "e\u0301", "\u0301", "don't", "[8", "May", "2023]", "x²", " ", "\n", "\t", "\r",
                              "\u00a0", "\u200b", "\x1c", "\x00", "\ufffd"]), max_size=40).map("".join),
)


@hsettings(max_examples=400, deadline=None)
@given(_TEXTS)
def test_the_wordpiece_count_word_by_word_is_the_tokenizers_count(text):
    counter = WordPieceTokenCounter()
    exact = len(counter._tokenizer.encode(text, add_special_tokens=False).ids)
    assert counter.count(text) == exact
    assert counter.count(text) == exact  # again, from the remembered words


def test_the_wordpiece_counter_forgets_words_beyond_its_bound(monkeypatch):
    monkeypatch.setattr("core.providers.tokens.WORDS_REMEMBERED", 3)
    counter = WordPieceTokenCounter()
    assert counter.count("one two three four five") == 5
    assert len(counter._words) <= 3
    assert counter.count("one two three four five") == 5


@hsettings(max_examples=200, deadline=None)
@given(st.text())
def test_the_byte_counter_never_counts_fewer_than_the_wordpiece_tokenizer(text):
    assert ByteTokenCounter().count(text) >= WordPieceTokenCounter().count(text)
