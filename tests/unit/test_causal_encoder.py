"""Head ablation in MiniLM: a zeroed head is the encoder without that head's W_O columns,
and the embedding shift is 0 where nothing is ablated."""

import pytest
import torch
import torch.nn.functional as F

from engine.analysis import ablation_encoder
from engine.errors import InputError
from engine.models import pretrained, registry

TEXT = "The cat sat on the mat because it was tired."


@pytest.fixture(scope="module")
def minilm():
    if not pretrained.minilm_path().exists():
        pytest.skip("MiniLM is not installed: run bash scripts/setup.sh")
    torch.set_num_threads(1)
    return registry.get(registry.MINILM).load()


def embedding(m):
    enc = pretrained.encode(m, TEXT)
    with torch.no_grad():
        return ablation_encoder._embed(m.model(**enc).last_hidden_state, enc["attention_mask"])[0]


def test_zero_ablation_is_the_encoder_without_that_heads_columns(minilm):
    layer, head = 3, 5
    res = ablation_encoder.ablate(minilm, TEXT)
    dense = minilm.model.encoder.layer[layer].attention.output.dense
    d = dense.weight.shape[1] // minilm.model.config.num_attention_heads
    e, kept = embedding(minilm), dense.weight.detach().clone()
    try:
        with torch.no_grad():
            dense.weight[:, head * d : (head + 1) * d] = 0
        ablated = embedding(minilm)
    finally:
        with torch.no_grad():
            dense.weight.copy_(kept)
    want = 1 - F.cosine_similarity(ablated, e, dim=0)
    assert abs(float(res.shift[layer, head]) - float(want)) < 1e-5
    assert res.shift.shape == (6, 12) and (res.shift >= -1e-6).all()
    assert res.token_shift.shape == (6, 12, len(res.tokens))


def test_mean_ablation_cancel_and_bad_input(minilm):
    seen = []
    res = ablation_encoder.ablate(
        minilm,
        TEXT,
        mode="mean",
        progress=lambda d, n: seen.append(d),
        should_stop=lambda: seen == [1],
    )
    assert res.stopped and not res.shift[0].isnan().any() and res.shift[1:].isnan().all()
    for text, mode, key in ((TEXT, "resample", "causal.mode"), ("  ", "zero", "text.empty")):
        with pytest.raises(InputError) as err:
            ablation_encoder.ablate(minilm, text, mode=mode)
        assert err.value.message.key == key
