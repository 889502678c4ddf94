"""Head ablation in the project's Transformer: a zeroed head is the model without that
head's W_O columns, for each kind of attention, and the greedy answer is re-decoded."""

import pytest
import torch

from engine import checkpoints
from engine.analysis import ablation_transformer
from engine.errors import InputError
from engine.models import transformer

DATES = "transformer-dates-sinusoidal"
TEXT = "the 1st of March, 1999"


@pytest.fixture(scope="module")
def tr():
    if DATES not in checkpoints.available("transformer-dates"):
        pytest.skip(f"checkpoint {DATES} not trained yet")
    torch.set_num_threads(1)
    return transformer.load(DATES)


@pytest.fixture(scope="module")
def zero(tr):
    return ablation_transformer.ablate(tr, TEXT, mode="zero")


def teacher_forced_log_prob(tr, answer_text_ids):
    src = transformer.source_ids(tr, TEXT)[1]
    tgt_in = torch.tensor([[transformer.BOS, *answer_text_ids[:-1]]])
    with torch.no_grad():
        logits, _ = tr(src, tgt_in)
    lp = torch.log_softmax(logits[0], -1)
    return float(lp.gather(-1, torch.tensor(answer_text_ids)[:, None]).sum())


@pytest.mark.parametrize(("kind", "layer", "head"), [("encoder_self", 0, 1), ("cross", 1, 3)])
def test_zero_ablation_is_the_model_without_that_heads_columns(tr, zero, kind, layer, head):
    answer = tr.greedy(transformer.source_ids(tr, TEXT)[1], 40)[0, 1:].tolist()
    answer = answer[: answer.index(transformer.EOS) + 1]
    assert abs(teacher_forced_log_prob(tr, answer) - zero.log_prob) < 1e-5
    stack = tr.encoder if kind == "encoder_self" else tr.decoder
    mha = stack[layer].cross_attn if kind == "cross" else stack[layer].self_attn
    d = mha.d_k
    kept = mha.W_O.weight.detach().clone()
    try:
        with torch.no_grad():
            mha.W_O.weight[:, head * d : (head + 1) * d] = 0
        ablated = teacher_forced_log_prob(tr, answer)
    finally:
        with torch.no_grad():
            mha.W_O.weight.copy_(kept)
    assert abs(ablated - zero.log_prob - float(zero.delta_log_prob[kind][layer, head])) < 1e-4


def test_every_head_of_every_kind_gets_a_number_and_a_translation(tr, zero):
    L, H = tr.cfg.n_layers, tr.cfg.n_heads
    assert zero.translation == transformer.translate(tr, TEXT)
    for kind in ablation_transformer.KINDS:
        assert zero.delta_log_prob[kind].shape == (L, H)
        assert torch.isfinite(zero.delta_loss[kind]).all()
        for li in range(L):
            for h in range(H):
                same = zero.ablated_translations[kind][li][h] == zero.translation
                assert bool(zero.changed[kind][li, h]) != same


def test_mean_ablation_and_cancel(tr):
    seen = []
    res = ablation_transformer.ablate(
        tr,
        TEXT,
        mode="mean",
        progress=lambda d, n: seen.append(d),
        should_stop=lambda: len(seen) >= 2,
    )
    assert res.stopped and seen == [1, 2]
    with pytest.raises(InputError) as err:
        ablation_transformer.ablate(tr, TEXT, mode="half")
    assert err.value.message.key == "causal.mode"
    with pytest.raises(InputError):
        ablation_transformer.ablate(tr, "")
