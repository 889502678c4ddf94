"""Train tiny --quick models, then translate, trace and evaluate them end to end."""

import json

import numpy as np
import pytest

from engine.errors import InputError
from engine.evaluation import nmt as evaluation
from engine.models.bahdanau import RNNSearch
from engine.trace import Trace
from engine.training import nmt as training

pytestmark = pytest.mark.slow  # three --quick trainings: a few seconds each on an idle CPU


@pytest.fixture(scope="module")
def ckpt_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("nmt")
    training.main(["--task", "en-fr", "--quick", "--out-dir", str(d)])
    training.main(["--task", "en-fr", "--no-attention", "--quick", "--out-dir", str(d)])
    training.main(["--task", "dates", "--quick", "--out-dir", str(d)])
    return d


def test_checkpoints_carry_config_vocab_and_the_command(ckpt_dir):
    meta = json.loads((ckpt_dir / "nmt-enfr-additive.json").read_text())
    assert meta["task"] == "en-fr" and meta["config"]["scoring"] == "additive"
    assert meta["src_vocab"]["itos"][:4] == ["<pad>", "<s>", "</s>", "<unk>"]
    assert meta["command"].startswith("python -m engine.train nmt --task en-fr")
    assert meta["train"]["steps"] == training.QUICK["steps"]


def test_translate_returns_a_trace_with_the_alignment_and_its_internals(ckpt_dir):
    tr = RNNSearch.from_pretrained("nmt-enfr-additive", ckpt_dir)
    trace = tr.translate("The agreement on the zorblax was signed.", beam=3)
    amap = trace.maps["alignment"]
    T, K = len(trace.outputs["steps"]), len(trace.inputs["tokens"])
    assert amap.shape == (1, 1, T, K) and amap.kind == "alignment"
    np.testing.assert_allclose(amap.weights.sum(-1), 1.0, atol=1e-5)
    assert trace.outputs["unknown"] == ["zorblax"]
    v = trace.vectors
    assert v["W_a s"].shape[0] == T and v["U_a h"].shape[0] == K and v["tanh"].shape[:2] == (T, K)
    # e_ij = v_aᵀ tanh(W_a s_{i-1} + U_a h_j), and α is its softmax
    np.testing.assert_allclose(v["tanh"] @ v["v_a"], v["e"], atol=1e-5)
    e = v["e"] - v["e"].max(-1, keepdims=True)
    np.testing.assert_allclose(
        np.exp(e) / np.exp(e).sum(-1, keepdims=True), amap.weights[0, 0], atol=1e-5
    )
    assert Trace.from_json(trace.to_json()).outputs == trace.outputs


def test_bad_input_is_refused_with_the_limit(ckpt_dir):
    tr = RNNSearch.from_pretrained("nmt-enfr-additive", ckpt_dir)
    for text in ("", "   \n\t"):
        with pytest.raises(InputError):
            tr.tokens(text)
    with pytest.raises(InputError, match="limit here is 50"):
        tr.tokens("word " * 51)
    dates = RNNSearch.from_pretrained("nmt-dates", ckpt_dir)
    with pytest.raises(InputError, match="characters"):
        dates.tokens("3" * 41)


def test_baseline_has_no_alignment_map(ckpt_dir):
    trace = RNNSearch.from_pretrained("nmt-enfr-none", ckpt_dir).translate(
        "the minister signed .", beam=2
    )
    assert "alignment" not in trace.maps and trace.outputs["translation"] is not None


def test_evaluate_reports_every_metric(ckpt_dir, capsys):
    assert evaluation.main(["--task", "en-fr", "--dir", str(ckpt_dir), "--limit", "25"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    for key in ("exact_match", "bleu", "aer", "aer_argmax_vs_sure", "bleu_by_length"):
        assert key in result
    assert 0 <= result["aer"] <= 1 and 0 <= result["aer_argmax_vs_sure"] <= 1
    assert result["aer"] <= result["aer_argmax_vs_sure"]  # P ⊇ S can only forgive links
    assert set(result["models"]) == {"nmt-enfr-none"}
    assert set(result["bleu_by_length"]) == {"1-10", "11-20", "21-30", "31-40", "41-50"}
