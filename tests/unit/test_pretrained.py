"""Pretrained models: MiniLM's shown attention is HuggingFace's; the allowlist holds."""

import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from engine.errors import InputError
from engine.models import pretrained as hf
from engine.models import registry

torch.set_num_threads(1)
TEXT = "The unbelievably quick brown fox jumps over the lazy dog."


def loaded(path: Path):
    """A typed model directory's card, loaded (it holds the model and its tokenizer)."""
    return registry.get(registry.directory(str(path))).load()


@pytest.fixture(scope="module")
def minilm():
    return registry.get(registry.MINILM).load()


def test_minilm_trace_equals_huggingface_eager_attention(minilm):
    from transformers import AutoModel, AutoTokenizer

    path = hf.minilm_path()
    ref = AutoModel.from_pretrained(path, local_files_only=True, attn_implementation="eager")
    tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
    with torch.no_grad():
        out = ref.eval()(**tok(TEXT, return_tensors="pt"), output_attentions=True)
    expected = torch.stack(out.attentions)[:, 0].numpy()  # [L, H, T, T]
    shown = hf.trace(minilm, TEXT).maps["encoder_self"]
    assert shown.shape == (6, 12, expected.shape[-1], expected.shape[-1])
    np.testing.assert_allclose(shown.weights, expected, atol=1e-6)
    assert shown.query_labels[0] == "[CLS]" and "##bly" in shown.query_labels


def test_minilm_queries_and_keys_reproduce_its_attention(minilm):
    t = hf.trace(minilm, TEXT)
    q, k = t.vectors["queries.encoder_self"], t.vectors["keys.encoder_self"]
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    w = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(
        w / w.sum(-1, keepdims=True), t.maps["encoder_self"].weights, atol=1e-5
    )


def test_minilm_refuses_empty_and_over_long_text(minilm):
    with pytest.raises(InputError, match="Type"):
        hf.trace(minilm, "   ")
    with pytest.raises(InputError, match="limit here is 256 tokens"):
        hf.trace(minilm, "word " * 400)
    with pytest.raises(InputError, match="characters"):
        hf.trace(minilm, "x" * (hf.MAX_CHARS + 1))


def test_sinks_are_the_boundary_tokens(minilm):
    assert set(minilm.sinks) == {"[CLS]", "[SEP]"}


# -- generic local models -------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    """Three random tiny models (encoder, decoder-only, encoder-decoder) saved like HF does."""
    from transformers import (
        BertConfig,
        BertModel,
        GPT2Config,
        GPT2LMHeadModel,
        T5Config,
        T5ForConditionalGeneration,
    )

    root = tmp_path_factory.mktemp("models")
    torch.manual_seed(0)
    vocab = 30522  # MiniLM's WordPiece tokenizer is reused, so the ids match its vocabulary
    models = {
        "tiny-bert": BertModel(
            BertConfig(
                vocab_size=vocab,
                hidden_size=16,
                num_hidden_layers=2,
                num_attention_heads=2,
                intermediate_size=32,
            )
        ),
        "tiny-gpt2": GPT2LMHeadModel(
            GPT2Config(
                vocab_size=vocab, n_embd=16, n_layer=2, n_head=2, n_positions=64, eos_token_id=102
            )
        ),
        "tiny-t5": T5ForConditionalGeneration(
            T5Config(
                vocab_size=vocab,
                d_model=16,
                d_kv=8,
                d_ff=32,
                num_layers=2,
                num_heads=2,
                decoder_start_token_id=0,
                pad_token_id=0,
                eos_token_id=102,
            )
        ),
    }
    src = hf.minilm_path()
    for name, model in models.items():
        model.save_pretrained(root / name)
        for f in (
            "tokenizer.json",
            "tokenizer_config.json",
            "vocab.txt",
            "special_tokens_map.json",
        ):
            shutil.copy(src / f, root / name / f)
    (root / "empty").mkdir()
    return root


@pytest.fixture
def allowed(tiny_models, monkeypatch):
    monkeypatch.setenv(hf.ALLOWLIST_ENV, str(tiny_models))
    return tiny_models


def test_allowlisted_models_are_listed(allowed):
    assert {"all-MiniLM-L6-v2", "tiny-bert", "tiny-gpt2", "tiny-t5"} <= set(hf.list_models())


def test_path_outside_the_allowlist_is_refused(tiny_models, monkeypatch, tmp_path):
    monkeypatch.delenv(hf.ALLOWLIST_ENV, raising=False)
    with pytest.raises(InputError, match="outside the model allowlist"):
        hf.load(tiny_models / "tiny-bert")
    monkeypatch.setenv(hf.ALLOWLIST_ENV, str(tiny_models))
    with pytest.raises(InputError, match="outside the model allowlist"):
        hf.load(tiny_models / ".." / Path(tmp_path).name)  # ".." cannot climb out


def test_the_registry_checks_a_typed_directory_on_every_call(tiny_models, monkeypatch):
    """A typed directory is a card name like any other; the allowlist is read when the
    card is asked for, so removing a directory from it refuses the card at once."""
    from engine.models import registry

    name = registry.directory(str(tiny_models / "tiny-bert"))
    monkeypatch.setenv(registry.ALLOWLIST_ENV, str(tiny_models))
    card = registry.get(name)
    assert (card.name, card.family, card.variant) == (name, "pretrained", "encoder")
    monkeypatch.delenv(registry.ALLOWLIST_ENV)
    with pytest.raises(InputError, match="outside the model allowlist"):
        registry.get(name)
    with pytest.raises(InputError, match="not a directory"):
        monkeypatch.setenv(registry.ALLOWLIST_ENV, str(tiny_models))
        registry.get(registry.directory(str(tiny_models / "missing")))


def test_directory_without_a_model_gets_a_message(allowed):
    with pytest.raises(InputError, match="holds no HuggingFace model"):
        hf.load(allowed / "empty")
    with pytest.raises(InputError, match="not a directory"):
        hf.load(allowed / "missing")


def test_generic_encoder(allowed):
    m = loaded(allowed / "tiny-bert")
    t = hf.trace(m, TEXT)
    assert m.arch == "encoder" and set(t.maps) == {"encoder_self"}
    assert t.vectors["queries.encoder_self"].shape[:2] == (2, 2)


def test_decoder_attention_covers_the_generated_tokens(allowed):
    m = loaded(allowed / "tiny-gpt2")
    t = hf.trace(m, "hello world", max_new_tokens=5)
    amap = t.maps["decoder_self"]
    n_prompt = t.outputs["n_prompt_tokens"]
    assert m.arch == "decoder" and amap.shape[2] == n_prompt + 5
    assert np.triu(amap.weights, k=1).max() == 0  # causal, generated rows included
    np.testing.assert_allclose(amap.weights.sum(-1), 1, atol=1e-5)


def test_decoder_rows_are_the_attention_each_token_had_when_generated(allowed):
    """Row t of the one causal pass equals a pass over the first t + 1 tokens alone."""
    m = loaded(allowed / "tiny-gpt2")
    full = hf.trace(m, "hello world", max_new_tokens=4).maps["decoder_self"].weights
    ids = m.tokenizer("hello world", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        part = m.model(input_ids=ids, output_attentions=True).attentions
    n = ids.shape[1]
    np.testing.assert_allclose(full[:, :, :n, :n], torch.stack(part)[:, 0].numpy(), atol=1e-6)


def test_encoder_decoder_has_three_maps(allowed):
    m = loaded(allowed / "tiny-t5")
    t = hf.trace(m, "hello world", max_new_tokens=3)
    assert m.arch == "encoder-decoder" and set(t.maps) == {"encoder_self", "decoder_self", "cross"}
    S, T = t.maps["encoder_self"].shape[2], t.maps["decoder_self"].shape[2]
    assert t.maps["cross"].shape[2:] == (T, S)


def test_generated_token_count_is_limited(allowed):
    m = loaded(allowed / "tiny-gpt2")
    with pytest.raises(InputError, match="New tokens"):
        hf.trace(m, "hello", max_new_tokens=hf.MAX_NEW_TOKENS + 1)


def test_a_card_states_the_architecture_its_loaded_model_has(minilm, chat):
    """The caption's facts come from config.json, before any load: they must be the
    loaded model's own (the chat card's are drawn while SmolLM2 is still loading)."""
    from engine.models import registry

    own = dict(n_layers=chat.n_layers, n_heads=chat.n_heads)
    own |= dict(n_kv_heads=chat.n_kv_heads, head_dim=chat.head_dim)
    assert registry.get("smollm2").config == own
    c = minilm.model.config
    heads = c.num_attention_heads
    own = dict(n_layers=c.num_hidden_layers, n_heads=heads, n_kv_heads=heads)
    assert registry.get("minilm").config == own | dict(head_dim=c.hidden_size // heads)


def test_a_card_reads_gpt2_names_and_says_nothing_of_an_unreadable_config(tmp_path):
    import json

    from engine.models.cards.pretrained import PretrainedCard

    card = PretrainedCard("hf:x", {"path": str(tmp_path), "display": "x", "arch": "decoder"})
    assert card.config == {}  # no config.json
    (tmp_path / "config.json").write_text("{ not json")
    assert card.config == {}
    (tmp_path / "config.json").write_text(json.dumps({"n_layer": 12, "n_head": 12, "n_embd": 768}))
    assert card.config == {"n_layers": 12, "n_heads": 12, "n_kv_heads": 12, "head_dim": 64}


@pytest.mark.parametrize("name", ["tiny-bert", "tiny-gpt2", "tiny-t5"])
def test_a_directory_card_states_the_limit_and_architecture_its_loaded_model_has(allowed, name):
    """The Transformer page's caption and text box read the card before the model loads:
    tiny-gpt2 has 64 positions, so its card must say 64 tokens, not the pages' 256."""
    from engine.models import registry

    card, m = registry.get(registry.directory(str(allowed / name))), loaded(allowed / name)
    assert (card.meta["arch"], card.limits.max_tokens) == (m.arch, m.max_tokens)
    assert card.limits.max_tokens == (64 if name == "tiny-gpt2" else hf.MAX_TOKENS)


def test_minilm_card_states_its_loaded_limit(minilm):
    from engine.models import registry

    assert registry.get("minilm").limits.max_tokens == minilm.max_tokens


def test_a_loaded_card_is_the_model_all_the_way_down(minilm):
    """No wrapper type between the nn.Module and its card: loading gives the card holding
    the model and its tokenizer, which traces itself as the listed card traces it."""
    from engine.models.cards.pretrained import PretrainedCard

    card = registry.get(registry.MINILM)
    assert isinstance(minilm, PretrainedCard) and minilm.name == card.name
    assert isinstance(minilm.model, torch.nn.Module) and minilm.tokenizer is not None
    assert card.model is None and minilm.load() is minilm  # loading twice loads nothing
    own, listed = minilm.trace(TEXT), card.trace(TEXT, model=minilm)
    assert np.array_equal(own.maps["encoder_self"].weights, listed.maps["encoder_self"].weights)
    assert own.model == minilm.display == "all-MiniLM-L6-v2"


def test_byte_level_token_names_are_labelled_as_text(tmp_path, monkeypatch):
    """A GPT-2-style vocabulary names tokens by bytes ("Ġcaf", "æ³"): a map labels them by
    their text, and word merging still finds the words (a split character counted once)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    from engine.models import chat as chat_model

    if not chat_model.available():
        pytest.skip(f"{chat_model.CHAT_DIR} is missing: run bash scripts/setup.sh")
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=49152, n_embd=16, n_layer=1, n_head=2, n_positions=64)
    GPT2LMHeadModel(config).save_pretrained(tmp_path / "bytes-gpt2")
    for f in ("tokenizer.json", "tokenizer_config.json"):  # SmolLM2's byte-level BPE
        shutil.copy(chat_model.CHAT_DIR / f, tmp_path / "bytes-gpt2" / f)
    monkeypatch.setenv(hf.ALLOWLIST_ENV, str(tmp_path))
    model = loaded(tmp_path / "bytes-gpt2")
    amap = hf.trace(model, "The café, 注意", max_new_tokens=0).maps["decoder_self"]
    words = ["The", " café", ",", " 注 1/3", " 注 2/3", " 注 3/3", "意 1/3", "意 2/3", "意 3/3"]
    assert list(amap.query_labels) == words
    assert list(amap.merge_word_pieces().query_labels) == ["The", "café,", "注意"]


def test_the_chat_cards_evaluations_are_read_one_at_a_time_as_their_commands_saved_them():
    """A page reads one shipped evaluation through the card (``evaluation(key)``), whether
    or not the model is converted; ``results()`` is every one of them; an unknown key is a
    programming error, not a missing file."""
    from engine import checkpoints
    from engine.evaluation import cache as cache_eval
    from engine.evaluation import causal, retrieval_heads

    card = registry.chat()
    for key, result in (
        ("causal", causal.RESULT),
        ("retrieval_heads", retrieval_heads.RESULT),
        ("presses", cache_eval.RESULT),
    ):
        assert card.evaluation(key) == checkpoints.load_result(result), key
    everything = card.results() or {}
    assert everything == {k: v for k in card.EVALUATIONS if (v := card.evaluation(k)) is not None}
    with pytest.raises(KeyError):
        card.evaluation("bleu")
