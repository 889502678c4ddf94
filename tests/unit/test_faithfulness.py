"""The faithfulness meter: attention beside occlusion, gradient × input and IG.

Properties that must hold: an input the output cannot see has occlusion exactly 0;
integrated gradients sum to f(x) − f(0) (completeness); on hand-built rows the rank
correlation and top-1 agreement are what they must be; the real models' attributions
have the shapes of their attention and their identities.
"""

import numpy as np
import pytest
import torch

from engine.analysis import faithfulness as F
from engine.analysis import faithfulness_memory, faithfulness_nmt, faithfulness_retrieval, retrieval
from engine.data import enfr
from engine.data.babi import dataset
from engine.masks import causal_mask, masked_softmax
from engine.models import chat as chat_model
from engine.models import registry

torch.set_num_threads(1)


class TinyCausal(torch.nn.Module):
    """One causal self-attention layer over input embeddings, a class read at each position."""

    def __init__(self, d: int = 8, classes: int = 5):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.q, self.k, self.v, self.out = (
            torch.randn(d, d, generator=g, dtype=torch.float64) for _ in range(4)
        )
        self.w = torch.randn(d, classes, generator=g, dtype=torch.float64)

    def forward(self, x):  # x (B, T, d) → log p (B, T, classes)
        scores = (x @ self.q) @ (x @ self.k).transpose(-1, -2) / 8**0.5
        a = masked_softmax(scores, causal_mask(x.shape[1]))
        h = torch.tanh((a @ (x @ self.v)) @ self.out + x)
        return torch.log_softmax(h @ self.w, -1)


def test_occluding_a_causal_future_token_changes_nothing_exactly():
    model, T, t = TinyCausal(), 7, 3
    x = torch.randn(1, T, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(1))

    def score(keep):  # the output at position t, each input erased in turn
        return model(x * keep[..., None])[:, t, 2]

    delta = F.occlusion(score, T)
    assert (delta[t + 1 :] == 0).all()  # exactly: the future is never read
    assert (delta[: t + 1] != 0).all()


def test_integrated_gradients_are_complete_within_the_trapezoid_error():
    model = TinyCausal()
    x = torch.randn(6, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(2))

    def f(xb):  # the last position's log p of class 1
        return model(xb)[:, -1, 1]

    ig = F.integrated_gradients(f, x, steps=256)
    delta = float(f(x[None])[0] - f(torch.zeros_like(x)[None])[0])
    assert ig.delta == pytest.approx(delta, abs=1e-12)
    assert abs(ig.attributions.sum() - delta) < 1e-3 * max(1.0, abs(delta))
    assert float(ig.completeness_error) < 1e-3 * max(1.0, abs(delta))


def test_gradient_x_input_of_a_linear_output_is_each_inputs_term():
    w = torch.tensor([[1.0, 2.0], [-3.0, 0.5], [0.0, 4.0]], dtype=torch.float64)
    x = torch.tensor([[2.0, 1.0], [1.0, 2.0], [5.0, -1.0]], dtype=torch.float64)
    got = F.gradient_x_input(lambda e: (w * e).sum((-1, -2)), x[None])[0]
    np.testing.assert_allclose(got, [4.0, -2.0, -4.0])
    ig = F.integrated_gradients(lambda e: (w * e).sum((-1, -2)), x, steps=4)
    np.testing.assert_allclose(ig.attributions, got)  # linear: IG = g·x, exactly complete


@pytest.mark.parametrize(
    ("attention", "attribution", "rho", "top1"),
    [
        ([0.1, 0.6, 0.3], [1.0, 3.0, 2.0], 1.0, True),
        ([0.1, 0.6, 0.3], [3.0, 1.0, 2.0], -1.0, False),
        ([0.5, 0.3, 0.2], [0.1, 2.0, -1.0], 0.5, False),
        ([0.2, 0.2, 0.6], [0.0, 0.0, 1.0], 1.0, True),  # ties take average ranks
        ([0.2, 0.5, 0.3], [1.0, 1.0, 1.0], None, False),  # a constant side: ρ undefined
    ],
)
def test_agreement_on_hand_built_rows(attention, attribution, rho, top1):
    a = F.agreement(attention, attribution)
    assert a.top1 is top1
    assert a.spearman == (None if rho is None else pytest.approx(rho))
    rows = [a, F.agreement([0.9, 0.1], [2.0, 1.0])]
    s = F.summarise(rows)
    assert s["n"] == 2 and s["top1"] == pytest.approx((top1 + 1) / 2)


def test_agreement_refuses_rows_of_different_lengths():
    with pytest.raises(ValueError):
        F.agreement([0.5, 0.5], [1.0, 2.0, 3.0])


def test_a_sentences_mean_scores_each_attribution_over_its_steps():
    alpha = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]])
    same, flipped = alpha * 2.0, alpha[:, ::-1].copy()  # α's order; its reverse
    s = faithfulness_nmt.Saliency(alpha, same, flipped, flipped[[1, 0]], np.zeros(2))
    mean = s.mean()
    assert mean["occlusion"] == {"spearman": 1.0, "top1": 1.0, "n": 2, "n_spearman": 2}
    assert mean["grad_x_input"]["spearman"] == -1.0 and mean["grad_x_input"]["top1"] == 0.0
    assert mean == {m: F.summarise(rows) for m, rows in s.agreement().items()}


@pytest.fixture(scope="module")
def translator():
    return registry.get(registry.default("en-fr", family="nmt").name).load()


def test_nmt_saliency_has_alphas_shape_and_ig_is_complete(translator):
    pair = enfr.splits(0, n_train=0, n_test=4)["test"][0]
    s = faithfulness_nmt.saliency(translator, list(pair.src), list(pair.tgt), steps=256)
    T, K = len(pair.tgt) + 1, len(pair.src)  # every word and </s>
    np.testing.assert_allclose(s.alpha, translator.align(list(pair.src), list(pair.tgt)), 1e-5)
    for m in s.methods().values():
        assert m.shape == (T, K) and np.isfinite(m).all()
    assert (s.ig_error < 0.05).all()  # nats, 256 trapezoid intervals
    assert len(s.agreement()["occlusion"]) == T


def test_removing_each_fact_is_the_answer_with_that_slot_masked():
    card = registry.for_babi_task(1)
    reader = card.load()
    sample = dataset(1, "test")[0]
    r = faithfulness_memory.remove_each(reader, sample)
    n = len(sample.story[-reader.cfg.memory :])
    assert r.hops.shape == (reader.cfg.hops, n) and r.delta.shape == (n,)
    np.testing.assert_allclose(r.hops.sum(-1), 1.0, atol=1e-5)
    assert reader.candidates[r.answer] == sample.answer  # task 1's model answers it
    assert set(r.support) == set(sample.support)
    # the supporting fact is the one the answer cannot do without
    assert r.changes()[list(r.support)].all()


@pytest.fixture(scope="module")
def chat():
    if not chat_model.available():
        pytest.skip(f"{chat_model.CHAT_DIR} is missing: run bash scripts/setup.sh")
    return registry.chat().load()


def test_dropping_each_passage_reads_the_answer_the_trace_wrote(chat):
    sample = dataset(1, "test")[0]
    passages = retrieval.story_passages(sample)[-4:]
    trace = retrieval.answer(chat, sample.question, passages, mode="story", max_new_tokens=4)
    r = faithfulness_retrieval.drop_each(chat, trace)
    assert r.attention.shape == r.delta.shape == r.grad_x_input.shape == (len(passages),)
    assert int(r.attention.argmax()) == trace.outputs["most_read"]
    assert np.isfinite(r.delta).all() and np.isfinite(r.grad_x_input).all()
    # teacher-forced log p of the answer ≈ what generation wrote (float16 steps differ)
    wrote = sum(trace.outputs["log_probs"][s] for s in retrieval.answer_steps(trace))
    assert r.answer_log_prob == pytest.approx(wrote, abs=0.1)
    asked = []  # Stop pressed at the third run: no result, and nothing runs after it
    stop = lambda: asked.append(1) or len(asked) > 2  # noqa: E731
    assert faithfulness_retrieval.drop_each(chat, trace, should_stop=stop) is None
    assert len(asked) == 3
