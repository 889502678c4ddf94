"""Retrieval heads (Wu et al. 2024) on the chat model: the score reads the argmax of the
model's own attention, and the masking pass is the model's own forward when nothing is
masked."""

import numpy as np
import pytest
import torch

from engine.analysis import retrieval_heads as rh
from engine.models import llama


@pytest.fixture(scope="module")
def needle(chat):
    (ex,) = rh.needles(chat.tokenizer, 1, seed=3, length=256)
    return ex


def test_a_needle_s_answer_is_copied_from_its_context(chat, needle):
    assert needle.ids[needle.start :] == needle.answer
    assert [needle.ids[j] for j in needle.source] == needle.answer
    assert max(needle.source) < needle.start


def test_the_score_reads_the_argmax_of_the_model_s_own_attention(chat, needle):
    rows = [needle.start + k - 1 for k in range(len(needle.answer))]
    seen: list = []
    with torch.inference_mode():
        llama.forward(chat.model, needle.ids, rh._attend(chat, len(needle.ids), rows, {}, seen))
        out = chat.model(
            input_ids=torch.tensor([needle.ids]), output_attentions=True, use_cache=False
        )
    ours = torch.stack(seen)  # (L, H, A)
    theirs = torch.stack([a[0, :, rows].argmax(-1) for a in out.attentions])
    assert (ours == theirs).float().mean() > 0.99  # ties and rounding aside
    score = rh.scores(chat, [needle])
    hits = (theirs == torch.as_tensor(needle.source)).float().mean(-1).numpy()
    assert score.shape == (chat.n_layers, chat.n_heads) and np.abs(score - hits).max() <= 0.2


def plain(chat, needle, masked=None):
    attend = rh._attend(chat, len(needle.ids), None, masked or {}, [])
    return llama.forward(chat.model, needle.ids, attend)


def test_nothing_masked_is_the_model_s_forward(chat, needle):
    with torch.inference_mode():
        ours = plain(chat, needle)
        theirs = chat.model(input_ids=torch.tensor([needle.ids]), use_cache=False).logits[0]
    assert torch.allclose(ours.float(), theirs.float(), atol=5e-2)
    found = bool((theirs[needle.start - 1 : -1].argmax(-1) == torch.tensor(needle.answer)).all())
    assert rh.found(chat, needle, {}) == found


def test_masking_every_head_of_a_layer_changes_the_output(chat, needle):
    with torch.inference_mode():
        base = plain(chat, needle)
        cut = plain(chat, needle, {0: list(range(chat.n_heads))})
    assert not torch.allclose(base, cut)


def test_heads_are_grouped_by_layer_and_ranked_by_score():
    score = np.zeros((3, 4))
    score[2, 1], score[0, 3] = 0.9, 0.5
    assert rh.top_heads(score, 2) == [(2, 1), (0, 3)]
    assert rh.by_layer([(2, 1), (0, 3), (2, 0)]) == {2: [1, 0], 0: [3]}
