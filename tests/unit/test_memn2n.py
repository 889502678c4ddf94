"""MemN2N: the paper's equations, tying schemes, Trace shape and bad input."""

import numpy as np
import pytest
import torch

from engine.data.babi import Sample, dataset, words
from engine.data.babi_encode import encode, noisy_times, times_and_mask
from engine.data.vocab import Vocab
from engine.errors import InputError
from engine.models.memn2n import (
    MemN2N,
    MemN2NConfig,
    answer,
    position_encoding,
)


def tiny(tying="adjacent", hops=3, **kw):
    torch.manual_seed(0)
    return MemN2N(
        MemN2NConfig(vocab_size=30, answers=(5, 6, 7), d=8, hops=hops, memory=10, tying=tying, **kw)
    )


def batch(B=4, M=6, J=5, Jq=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    story = torch.randint(1, 30, (B, M, J), generator=g)
    story[:, :, -1] = 0  # some padding words
    n_facts = torch.tensor([6, 3, 1, 5][:B])
    story[torch.arange(M)[None, :].expand(B, M) >= n_facts[:, None]] = 0
    query = torch.randint(1, 30, (B, Jq), generator=g)
    times, mask = times_and_mask(n_facts, M)
    return story, times, mask, query


def test_position_encoding_is_the_papers_formula():
    J, d = 4, 6
    l = position_encoding(torch.tensor([J, 2]), 5, d)
    for j in range(1, J + 1):
        for k in range(1, d + 1):
            ref = (1 - j / J) - (k / d) * (1 - 2 * j / J)
            assert l[0, j - 1, k - 1].item() == pytest.approx(ref, abs=1e-6)
    assert (l[0, J:] == 0).all() and (l[1, 2:] == 0).all()


def reference_forward(model, story, times, mask, query):
    """The paper's equations written out with loops, adjacent tying."""
    E = [e.weight for e in model.E]
    T = list(model.T)
    cfg = model.cfg

    def bag(table, ids):
        J = int((ids != 0).sum())
        out = torch.zeros(cfg.d)
        for j, w in enumerate(ids.tolist(), start=1):
            if w:
                kk = torch.arange(1, cfg.d + 1)
                l = (1 - j / J) - (kk / cfg.d) * (1 - 2 * j / J)
                out = out + l * E[table][w]
        return out

    logits, ps = [], []
    for b in range(story.shape[0]):
        n = int(mask[b].sum())
        u = bag(0, query[b])
        hop_p = []
        for k in range(cfg.hops):
            m = torch.stack([bag(k, story[b, i]) + T[k][times[b, i]] for i in range(n)])
            c = torch.stack([bag(k + 1, story[b, i]) + T[k + 1][times[b, i]] for i in range(n)])
            p = torch.softmax(m @ u, 0)
            o = p @ c
            hop_p.append(torch.nn.functional.pad(p, (0, story.shape[1] - n)))
            z = u + o
            u = z
        logits.append(z @ E[cfg.hops][list(cfg.answers)].T)
        ps.append(torch.stack(hop_p))
    return torch.stack(logits), torch.stack(ps)


def test_forward_equals_the_equations_written_out():
    model = tiny()
    story, times, mask, query = batch()
    with torch.no_grad():
        logits, p, m = model(story, times, mask, query)
        ref_logits, ref_p = reference_forward(model, story, times, mask, query)
    torch.testing.assert_close(logits, ref_logits, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(p, ref_p, atol=1e-6, rtol=1e-5)
    assert m.shape == (4, 6, 8)


@pytest.mark.parametrize("tying", ["adjacent", "layerwise"])
def test_attention_rows_are_distributions_over_real_sentences(tying):
    model = tiny(tying)
    story, times, mask, query = batch()
    logits, p, _ = model(story, times, mask, query)
    assert logits.shape == (4, 3) and p.shape == (4, 3, 6)
    torch.testing.assert_close(p.sum(-1), torch.ones(4, 3))
    assert (p[~mask[:, None, :].expand_as(p)] == 0).all()


def test_tying_schemes_own_the_right_tables():
    assert len(tiny("adjacent", hops=3).E) == 4  # A¹, C¹ = A², C² = A³, C³ = Wᵀ
    lw = tiny("layerwise", hops=3)
    assert len(lw.E) == 3 and hasattr(lw, "H") and hasattr(lw, "W")  # A, C, B + H, W


def test_linear_start_removes_the_softmax():
    model = tiny()
    story, times, mask, query = batch()
    _, p, _ = model(story, times, mask, query, linear=True)
    assert not torch.allclose(p.sum(-1), torch.ones(4, 3))
    assert (p[~mask[:, None, :].expand_as(p)] == 0).all()


def test_null_word_embeds_to_zero_and_padding_changes_nothing():
    model = tiny()
    story, times, mask, query = batch(B=2)
    wider = torch.nn.functional.pad(story, (0, 3))  # more null words per sentence
    with torch.no_grad():
        a = model(story, times, mask, query)[0]
        b = model(wider, times, mask, query)[0]
    torch.testing.assert_close(a, b)


def test_random_noise_leaves_order_and_stays_in_memory():
    g = torch.Generator().manual_seed(0)
    n_facts = torch.tensor([20, 5, 1])
    for _ in range(20):
        times, mask = noisy_times(n_facts, 20, 50, 0.1, g)
        for b, n in enumerate(n_facts.tolist()):
            t = times[b, :n]
            assert (t[:-1] > t[1:]).all(), "older sentences keep larger temporal indices"
            assert t.min() >= 0 and t.max() <= n - 1 + int(np.ceil(0.1 * n))


@pytest.fixture(scope="module")
def reader():
    train = dataset(1, "train")[:100]
    vocab = Vocab.build(words(x) for s in train for x in (*s.story, s.question, s.answer))
    answers = tuple(sorted({s.answer for s in train}))
    torch.manual_seed(0)
    cfg = MemN2NConfig(len(vocab), tuple(vocab.stoi[a] for a in answers), d=10)
    return MemN2N(cfg, vocab, answers, {"tasks": [1]}, "test-model").eval()


def test_answer_returns_a_memory_trace(reader):
    s = dataset(1, "test")[3]
    trace = answer(reader, s)
    amap = trace.maps["memory"]
    assert amap.kind == "memory" and amap.shape == (3, 1, 1, len(s.story))
    assert amap.key_labels == s.story and amap.query_labels == (s.question,)
    np.testing.assert_allclose(amap.weights.sum(-1), 1, atol=1e-5)
    probs = trace.outputs["probabilities"]
    assert sum(probs) == pytest.approx(1, abs=1e-5)
    assert trace.outputs["answer"] in reader.candidates
    assert trace.vectors["memory"].shape == (len(s.story), 10)
    assert trace.outputs["support"] == list(s.support)


def test_unknown_words_are_named_and_long_stories_keep_the_latest_50(reader):
    story = tuple(f"Mary went to the kitchen number{i}." for i in range(60))
    trace = answer(reader, Sample(story, "Where is Mary zorblax?", "", ()))
    assert "zorblax" in trace.outputs["unknown_words"]
    assert trace.outputs["dropped_sentences"] == 10
    assert trace.maps["memory"].key_labels == story[-50:]


@pytest.mark.parametrize(
    "sample",
    [
        Sample((), "Where is Mary?", "", ()),
        Sample(("Mary went to the kitchen.",), "Qwerty zxcv?", "", ()),
    ],
)
def test_unanswerable_input_is_an_input_error(reader, sample):
    with pytest.raises(InputError):
        answer(reader, sample)


def test_memories_of_many_stories_match_each_trace(reader):
    samples = dataset(1, "test")[:3]
    vecs = reader.memories(samples)
    for s, v in zip(samples, vecs, strict=True):
        np.testing.assert_allclose(v, answer(reader, s).vectors["memory"], atol=1e-5)


def test_encode_keeps_support_in_the_latest_memories():
    s = Sample(tuple(f"Mary went to room{i}." for i in range(8)), "Where is Mary?", "x", (1, 6))
    vocab = Vocab.build([words(x) for x in (*s.story, s.question)])
    enc = encode([s], vocab, ("x",), memory=5)
    assert enc.dropped[0] == 3 and enc.n_facts[0] == 5
    assert enc.support[0].tolist() == [False, False, False, True, False]


def test_quick_training_writes_a_checkpoint_that_loads_and_scores(tmp_path, capsys):
    from engine.evaluation.memn2n import choose, score
    from engine.models.memn2n import load
    from engine.training.memn2n import main

    argv = ["--task", "1", "--quick", "--out", str(tmp_path), "--hops", "2", "--jobs", "1"]
    assert main(argv) == 0
    r = load("memn2n-task1", tmp_path)
    assert r.cfg.hops == 2 and r.meta["tasks"] == [1]
    assert r.meta["command"] == "python -m engine.train memn2n --task 1 --quick --hops 2"
    result = score(r, 1)
    assert 0 <= result["accuracy"] <= 1 and len(result["support_hit_per_hop"]) == 2
    assert result["support_hit_any_hop"] >= max(result["support_hit_per_hop"])
    name, dev = choose(1, tmp_path)
    assert name == "memn2n-task1" and set(dev) == {"memn2n-task1"}


def test_training_reproduces_from_its_seed():
    from engine.training.memn2n import train

    runs = [train((1,), hops=2, d=8, epochs=2, per_task=40, progress=False) for _ in range(2)]
    a, b = (r[0].state_dict() for r in runs)
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=0, atol=0)


def test_linear_start_then_softmax_and_the_kept_epoch_is_scored_with_softmax():
    """The kept model answers with softmax, so its recorded validation loss must be the
    softmax one, even when the best epoch is the first after linear start."""
    from engine.data.babi_encode import encode
    from engine.training.memn2n import corpus, evaluate_loss, split, train, validation

    model, vocab, answers, info = train(
        (1,), hops=2, d=8, epochs=1, per_task=40, progress=False, ls_epochs=2
    )
    assert info["linear_start_epochs"] == 2 and info["best_epoch"] == 2
    _, val = split(corpus((1,), "1k", 40)[0], 0)
    enc = encode(validation(val), vocab, answers, model.cfg.memory)
    loss, acc = evaluate_loss(model, enc, linear=False)
    assert loss == pytest.approx(info["val_loss"]) and acc == info["val_accuracy"]
