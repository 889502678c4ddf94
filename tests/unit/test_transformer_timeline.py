"""The Transformer's training timeline: written beside the checkpoint with increasing steps,
the probe set's maps and the task metric; recording it leaves the trained weights unchanged."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from engine import timeline
from engine.data import enfr
from engine.data.vocab import Vocab
from engine.models.transformer import Transformer, TransformerConfig, build
from engine.training import transformer as training
from engine.translation_quality import argmax_links


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # bit-for-bit comparisons need one reduction order
    yield
    torch.set_num_threads(threads)


def test_recording_leaves_the_trained_weights_unchanged():
    runs = [
        training.train(
            "dates", "sinusoidal", steps=12, batch=8, n_valid=16, record=record, log=lambda *_: None
        )
        for record in (True, False)
    ]
    (recorded, _, tl), (plain, _, none) = runs
    assert none is None and tl.steps == timeline.snapshot_steps(12)
    a, b = recorded.state_dict(), plain.state_dict()
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a), "recording changed the weights"
    assert recorded.training, "the probe must hand the model back in train mode"


def test_quick_run_writes_a_timeline_beside_the_checkpoint(tmp_path):
    argv = ["--task", "dates", "--quick", "--out-dir", str(tmp_path)]
    assert training.main(argv) == 0
    name = "transformer-dates-sinusoidal"
    assert (tmp_path / f"{name}.safetensors").exists() and timeline.exists(name, tmp_path)
    tl = timeline.load(name, tmp_path)
    steps = training.QUICK["steps"]
    assert tl.steps == timeline.snapshot_steps(steps) and tl.steps[-1] == steps
    assert all(b > a for a, b in zip(tl.steps, tl.steps[1:], strict=False))
    for metric in ("loss", "token_accuracy", "exact_match"):
        values = tl.metrics[metric]
        assert len(values) == len(tl.steps) and all(v is not None for v in values), metric
    assert all(0 <= v <= 1 for v in tl.metrics["exact_match"] + tl.metrics["token_accuracy"])
    assert tl.metrics["train_loss"][0] is None and tl.metrics["train_loss"][-1] > 0
    # Training moves the held-out loss down even in a few steps (a run that recorded the
    # same snapshot 16 times would not).
    assert tl.metrics["loss"][-1] < tl.metrics["loss"][0]
    assert tl.meta["command"] == "python -m engine.train transformer --task dates --quick"
    texts = training.probe_texts("dates")
    for traces in tl.probes:
        assert [p.inputs["text"] for p in traces] == texts
        for p in traces:
            assert set(p.maps) == {"encoder_self", "decoder_self", "cross"} and not p.vectors
            assert p.maps["cross"].shape[:2] == (2, 4)  # every layer, every head
            assert p.maps["encoder_self"].query_labels == tuple(p.inputs["text"])
            np.testing.assert_allclose(p.maps["cross"].weights.sum(-1), 1.0, atol=1e-3)
    assert not np.allclose(
        tl.probes[0][0].maps["encoder_self"].weights, tl.probes[-1][0].maps["encoder_self"].weights
    ), "the probe's maps did not change while the model trained"


def _tiny_enfr() -> tuple[Transformer, list]:
    pairs = list(enfr.EXAMPLES.values())
    src, tgt = Vocab.build(p.src for p in pairs), Vocab.build(p.tgt for p in pairs)
    cfg = TransformerConfig(
        len(src), len(tgt), d_model=32, n_heads=2, n_layers=2, d_ff=64, max_len=64
    )
    meta = {"task": "en-fr", "max_tgt": max(len(p.tgt) for p in pairs) + 4}
    return build(cfg, 0, src_vocab=src, tgt_vocab=tgt, meta=meta, name="tiny").eval(), pairs


def test_enfr_metrics_are_bleu_and_each_layers_head_averaged_aer():
    tr, pairs = _tiny_enfr()
    metrics = training.held_out_metrics(tr, pairs)
    assert set(metrics) == {"loss", "token_accuracy", "bleu", "aer.L0", "aer.L1"}
    assert all(0 <= metrics[f"aer.L{layer}"] <= 1 for layer in (0, 1))
    assert 0 <= metrics["bleu"] <= 100 and metrics["loss"] > 0


def test_aer_scores_each_layers_heads_averaged_cross_attention():
    """Gold links taken from layer 1's head-averaged argmax: that layer's AER must be exactly
    0 (a single head, or the other layer, would not match them all)."""
    tr, pairs = _tiny_enfr()
    src, tgt_in, _ = training.batch_tensors(pairs, tr.src_vocab, tr.tgt_vocab)
    with torch.no_grad():
        mean = tr(src, tgt_in)[1].cross.mean(2).numpy()  # (B, L, T, S)
    gold = [
        replace(p, sure=frozenset(links), possible=frozenset(links))
        for b, p in enumerate(pairs)
        for links in [argmax_links(mean[b, 1, : len(p.tgt), : len(p.src)])]
    ]
    metrics = training.held_out_metrics(tr, gold)
    assert metrics["aer.L1"] == 0.0 and metrics["aer.L0"] > 0.0
