"""The pluggable attention core: one attend signature, exact variants change nothing.

Properties, not snapshots: the trained Transformer with an exact variant in every
encoder layer translates as it does by default; MiniLM with an exact variant through
transformers' AttentionInterface gives its own weights and hidden states; the pattern
builder keeps the promised band, and kernels and variants agree on it.
"""

import pytest
import torch

from engine import checkpoints, patterns
from engine.attention import MultiHeadAttention, exact, scaled_dot_product_attention
from engine.errors import InputError
from engine.masks import padding_lengths, padding_mask
from engine.models import registry
from engine.variants import REGISTRY, attend_fn, get

DATES = "transformer-dates-sinusoidal"
FIRST_DATE = "Tuesday, 3 May 1979"  # the dates model card's first example


@pytest.fixture(scope="module")
def dates():
    from engine.models import transformer

    if DATES not in checkpoints.available("transformer-dates"):
        pytest.skip(f"checkpoint {DATES} not trained yet")
    return transformer.load(DATES)


def exact_variants(n: int) -> list[tuple[str, dict | None]]:
    """Every registry variant that is exact when its budget covers n tokens."""
    return [
        ("full", None),
        ("flash", None),
        ("longformer", {"window": n, "globals": 0}),
        ("chunked", {"chunk": n, "overlap": 0}),
        ("bigbird", {"block": max(2, n), "global_blocks": 0, "random_blocks": 0}),
        ("sparse", {"block": n, "summary": 1}),
        ("linformer", {"k": n}),  # k = n: E = I
    ]


def test_exact_attend_matches_masked_softmax_with_padding_and_causal():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(3, 2, 7, 16, generator=g) for _ in range(3))
    lengths = torch.tensor([7, 4, 1])
    mask = padding_mask(lengths, 7)[:, None]  # (B, 1, 1, K)
    for causal in (False, True):
        want, w_want = scaled_dot_product_attention(q, k, v, mask, causal=causal)
        out, w = exact(q, k, v, mask=mask, causal=causal)
        assert torch.allclose(out, want, atol=1e-6) and torch.allclose(w, w_want, atol=1e-6)
        assert (w[1, :, :, 4:] == 0).all()  # masked keys exactly 0


def test_padding_lengths_reads_right_padding_and_refuses_other_masks():
    mask = padding_mask(torch.tensor([5, 3]), 5)[:, None]
    assert padding_lengths(mask, 2, 5, 5).tolist() == [5, 3]
    assert padding_lengths(torch.ones(2, 1, 1, 5, dtype=torch.bool), 2, 5, 5) is None
    with pytest.raises(ValueError, match="right-padding"):
        padding_lengths(patterns.window_pattern(5, 1), 2, 5, 5)


def test_multihead_attention_takes_an_attend_function():
    torch.manual_seed(0)
    mha = MultiHeadAttention(32, 2).eval()
    x = torch.randn(2, 9, 32)
    with torch.no_grad():
        ref, w_ref = mha(x)
        out, w = mha(x, attend=attend_fn("flash"))
    assert torch.allclose(out, ref, atol=1e-5) and torch.allclose(w, w_ref, atol=1e-5)


def test_a_variant_attend_runs_a_padded_batch_per_sentence():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 2, 8, 16, generator=g) for _ in range(3))
    mask = padding_mask(torch.tensor([8, 5]), 8)[:, None]
    out, w = get("full").attend()(q, k, v, mask=mask)
    want, _ = scaled_dot_product_attention(q, k, v, mask)
    assert torch.allclose(out[:, :, :5], want[:, :, :5], atol=1e-5)
    assert (out[1, :, 5:] == 0).all() and (w[1, :, :, 5:] == 0).all()
    with pytest.raises(InputError, match="right-padding"):
        get("full").attend()(q, k, v, mask=patterns.window_pattern(8, 2))


def test_variant_attend_refuses_bad_parameters_at_once():
    with pytest.raises(InputError, match="no parameter"):
        attend_fn("full", {"window": 3})
    with pytest.raises(InputError, match="Unknown variant"):
        attend_fn("nope")


def test_trained_transformer_with_every_exact_variant_in_every_encoder_layer(dates):
    from engine.models import transformer

    text = FIRST_DATE
    n = len(transformer.source_ids(dates, text)[0])
    default = transformer.translate(dates, text)
    assert default == transformer.trace(dates, text).outputs["translation"]
    for name, hp in exact_variants(n):
        got = transformer.translate(dates, text, attend=name, attend_hp=hp)
        assert got == default, f"{name} {hp}: {got!r} != {default!r}"
    tr = transformer.trace(dates, text, attend="longformer", attend_hp={"window": n})
    assert tr.outputs["translation"] == default
    assert tr.inputs["attend"] == "longformer" and tr.maps["encoder_self"].exact


def test_trained_transformer_with_linformer_in_every_encoder_layer(dates):
    from engine.models import transformer

    got = transformer.translate(dates, "12 March 2021", attend="linformer", attend_hp={"k": 4})
    assert isinstance(got, str) and got
    tr = transformer.trace(dates, "12 March 2021", attend="linformer", attend_hp={"k": 4})
    amap = tr.maps["encoder_self"]
    assert amap.implied and not amap.exact and "Linformer" in amap.note
    with pytest.raises(InputError, match="at most n"):
        transformer.translate(dates, "12 March 2021", attend="linformer", attend_hp={"k": 40})


def test_layer_qkv_gives_what_each_encoder_layer_projects(dates):
    from engine.models import transformer

    q0, k0, v0, tokens = transformer.layer_qkv(dates, "12 March 2021")
    q1, *_ = transformer.layer_qkv(dates, "12 March 2021", layer=1)
    assert q0.shape == q1.shape == (1, dates.cfg.n_heads, len(tokens), 32)
    tr = transformer.trace(dates, "12 March 2021")
    assert torch.allclose(torch.from_numpy(tr.vectors["queries.encoder_self"][1]), q1[0])


@pytest.fixture(scope="module")
def minilm():

    return registry.get(registry.MINILM).load()


@pytest.mark.parametrize("name", ["full", "flash"])
def test_minilm_with_an_exact_variant_through_attention_interface(minilm, name):
    from engine.models import pretrained

    text = "The quick brown fox jumps over the lazy dog."
    enc = minilm.tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        own = minilm.model(**enc, output_attentions=True, output_hidden_states=True)
    default = pretrained.trace(minilm, text)
    swapped = pretrained.trace(minilm, text, attend=name)
    w = torch.stack([a[0] for a in own.attentions]).numpy()
    assert abs(default.maps["encoder_self"].weights - w).max() == 0
    assert abs(swapped.maps["encoder_self"].weights - w).max() < 1e-5
    assert swapped.inputs["attend"] == name
    # the same hidden states, and the model itself is left as it was
    token = pretrained.ATTEND.set(attend_fn(name))
    try:
        with torch.no_grad():
            via = minilm.model(**enc, output_hidden_states=True)
    finally:
        pretrained.ATTEND.reset(token)
    for a, b in zip(via.hidden_states, own.hidden_states, strict=True):
        assert torch.allclose(a, b, atol=1e-4)
    again = pretrained.trace(minilm, text)
    assert abs(again.maps["encoder_self"].weights - w).max() == 0


def test_minilm_with_an_approximate_variant_runs_and_says_so(minilm):
    from engine.models import pretrained

    tr = pretrained.trace(
        minilm, "attention is all you need", attend="linformer", attend_hp={"k": 4}
    )
    amap = tr.maps["encoder_self"]
    assert amap.implied and "Linformer" in amap.note


@pytest.mark.parametrize("n,window,block", [(50, 5, 16), (77, 20, 16), (130, 64, 64), (9, 1, 16)])
def test_window_means_the_band_and_kernels_and_variants_agree(n, window, block):
    i = torch.arange(n)
    band = (i[:, None] - i[None, :]).abs() <= window
    assert torch.equal(patterns.window_pattern(n, window), band)
    # the kernels' block mask keeps exactly the blocks that hold a band pair
    assert torch.equal(
        patterns.sliding_window_block_mask(n, window=window, block_size=block)[0],
        patterns.block_mask_of(band, block),
    )
    # the Longformer variant computes the same band (no globals) …
    q = torch.randn(1, 1, n, 8)
    res = get("longformer").run(q, q, q, hp={"window": window, "globals": 0})
    assert torch.equal(res.pattern.reshape(n, n), band)
    # … and with globals, the pattern the kernel's block mask covers
    g = 2
    token = patterns.longformer_pattern(n, window=window, n_global=g)
    res = get("longformer").run(q, q, q, hp={"window": window, "globals": g})
    assert torch.equal(res.pattern.reshape(n, n), token)
    blocks = patterns.longformer_block_mask(
        n, window=window, global_tokens=range(g), block_size=block
    )
    assert torch.equal(blocks[0], patterns.block_mask_of(token, block))


def test_bigbird_variant_and_kernel_mask_draw_the_same_blocks():
    n, b, heads = 96, 16, 3
    hp = {"block": b, "global_blocks": 1, "random_blocks": 2, "seed": 7}
    q = torch.randn(1, heads, n, 8)
    res = get("bigbird").run(q, q, q, hp=hp)
    kb = get("bigbird").key_blocks(n, heads, get("bigbird").resolve(hp))
    mask = patterns.key_blocks_to_mask(kb, n // b, 1)
    assert torch.equal(patterns.block_mask_of(res.pattern[0], b), mask)


def test_every_variant_gives_an_attend_function():
    for name, variant in REGISTRY.items():
        fn = variant.attend()
        assert callable(fn) and fn.__name__ == name
