"""The induction toy (Olsson et al. 2022): its shipped timeline shows the phase change, the
one-layer control never forms an induction head, the maps are causal distributions, the
K-composition is the formula of Elhage et al. 2021, and training is reproducible."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

from engine.analysis import induction as analysis
from engine.errors import InputError
from engine.models.induction import AttentionOnlyTransformer, InductionConfig, build
from engine.training import induction as training

LOSS_DROP = 1.0  # nats the held-out loss falls across the phase-change window, at least
CONTROL_CEILING = 0.2  # the one-layer control's induction score stays below this


def shipped(n_layers: int) -> dict:
    try:
        return analysis.load_timeline(n_layers)
    except InputError:
        pytest.skip(f"no shipped {n_layers}-layer timeline: python -m engine.train induction")


def test_the_shipped_two_layer_timeline_shows_the_phase_change():
    tl = shipped(2)
    curves = analysis.headline(tl)
    change = analysis.phase_change(tl["steps"], tl["loss"], curves["induction"])
    assert change is not None, "the induction score never crossed 0.5"
    assert change["before"] < analysis.THRESHOLD <= change["after"]
    assert change["loss_drop"] >= LOSS_DROP, change
    # the window is a real window of the run: not its first or last step
    assert tl["steps"][0] < change["start"] < change["end"] <= tl["steps"][-1]
    assert change == tl["meta"]["phase_change"]  # what the page marks is what was measured
    # the context starts to help: late tokens end far cheaper than early ones
    assert tl["icl"][0] > -0.2 and tl["icl"][-1] < -1.0
    # and K-composition between the heads grows as the circuit forms
    assert curves["k_composition"][-1] > 1.3 * curves["k_composition"][0]


def test_the_one_layer_control_never_forms_an_induction_head():
    tl = shipped(1)
    curves = analysis.headline(tl)
    assert curves["induction"].max() < CONTROL_CEILING
    assert analysis.phase_change(tl["steps"], tl["loss"], curves["induction"]) is None
    assert tl["meta"]["phase_change"] is None
    # it still learns something (which tokens occur), but stays above the two-layer loss
    assert tl["loss"][-1] < tl["loss"][0] - 0.3
    two = shipped(2)
    assert tl["loss"][-1] > two["loss"][-1] + 0.5


@pytest.mark.parametrize("n_layers", [1, 2])
def test_maps_are_causal_and_rows_sum_to_one(n_layers):
    model = build(InductionConfig(n_layers=n_layers, n_heads=2), seed=3)
    tokens = torch.randint(1, 64, (3, 20), generator=torch.Generator().manual_seed(0))
    _, A = model(tokens)
    assert A.shape == (3, n_layers, 2, 20, 20)
    upper = torch.triu(torch.ones(20, 20, dtype=torch.bool), diagonal=1)
    assert torch.all(A[..., upper] == 0)
    assert torch.allclose(A.sum(-1), torch.ones(3, n_layers, 2, 20), atol=1e-6)


def test_shipped_maps_are_causal_distributions():
    maps = shipped(2)["maps"]  # (S, L, H, T, T), stored as float16
    T = maps.shape[-1]
    assert np.all(maps[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] == 0)
    assert np.allclose(maps.sum(-1), 1.0, atol=5e-3)


def two_layer_with(W_QK1: torch.Tensor, W_OV0: torch.Tensor) -> AttentionOnlyTransformer:
    """A model whose layer-1 head 0 has W_QK = W_QK1 and layer-0 head 0 has W_OV = W_OV0
    (both factored as d_head = d: W_Q = I, W_K = W_QK1; W_O = W_OV0, W_V = I)."""
    d = W_QK1.shape[0]
    model = build(InductionConfig(n_layers=2, n_heads=1, d_model=d), seed=0)
    with torch.no_grad():
        model.layers[1].W_Q.copy_(torch.eye(d)[None])
        model.layers[1].W_K.copy_(W_QK1[None])
        model.layers[0].W_O.copy_(W_OV0[None])
        model.layers[0].W_V.copy_(torch.eye(d)[None])
    return model


def test_k_composition_of_constructed_pairs():
    d = 8
    g = torch.Generator().manual_seed(0)
    u, v, w = (torch.randn(d, 1, generator=g) for _ in range(3))
    # h1's keys read exactly the direction h0 writes: ‖w uᵀ u vᵀ‖ = ‖w‖‖u‖²‖v‖ → 1
    assert analysis.k_composition(two_layer_with(w @ u.T, u @ v.T))[0, 0] == pytest.approx(1, 1e-5)
    # h1 reads only coordinates 0–3, h0 writes only 4–7: nothing composes
    reads, writes = torch.zeros(d, d), torch.zeros(d, d)
    reads[:, :4], writes[4:, :] = torch.randn(d, 4, generator=g), torch.randn(4, d, generator=g)
    assert analysis.k_composition(two_layer_with(reads, writes))[0, 0] == pytest.approx(0, abs=1e-7)
    # W_OV = I: ‖M‖ / (‖M‖ √d) = 1/√d whatever M is
    M = torch.randn(d, d, generator=g)
    score = analysis.k_composition(two_layer_with(M, torch.eye(d)))[0, 0]
    assert score == pytest.approx(1 / np.sqrt(d), rel=1e-5)
    # and for arbitrary matrices, the formula with numpy's own norms
    A, B = torch.randn(d, d, generator=g), torch.randn(d, d, generator=g)
    a, b = A.double().numpy(), B.double().numpy()
    want = np.linalg.norm(a @ b) / (np.linalg.norm(a) * np.linalg.norm(b))
    assert analysis.k_composition(two_layer_with(A, B))[0, 0] == pytest.approx(want, rel=1e-5)


@pytest.fixture
def one_thread():
    """As the train command runs: with more threads, reductions split differently and the
    last bits of a map may differ between two runs."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_training_is_reproducible_from_the_seed(one_thread):
    runs = [training.train(2, seed=5, steps=12, log=lambda *_: None) for _ in range(2)]
    (m1, t1), (m2, t2) = ((m, analysis.arrays(tl)) for m, tl in runs)
    for key in ("steps", "loss", "icl", "maps", "previous", "induction", "k_composition"):
        assert np.array_equal(t1[key], t2[key]), key
    for (k, a), b in zip(m1.state_dict().items(), m2.state_dict().values(), strict=True):
        assert torch.equal(a, b), k
    other = analysis.arrays(training.train(2, seed=6, steps=12, log=lambda *_: None)[1])
    assert not np.array_equal(t1["loss"], other["loss"])  # the seed matters


def test_a_short_run_saves_a_timeline_that_loads(tmp_path):
    model, tl = training.train(1, seed=0, steps=12, log=lambda *_: None)
    meta = training.save(model, tl, "python -m engine.train induction --layers 1", tmp_path)
    back = analysis.load_timeline(1, tmp_path)
    assert list(back["steps"]) == training.snapshot_steps(12)
    assert np.allclose(back["maps"], analysis.arrays(tl)["maps"], atol=1e-3)  # float16 on disk
    assert back["meta"]["command"] == meta["command"]
    assert "k_composition" not in back


def test_a_missing_or_truncated_timeline_is_a_clear_message(tmp_path):
    with pytest.raises(InputError, match="not shipped"):
        analysis.load_timeline(2, tmp_path)
    model, tl = training.train(2, seed=0, steps=12, log=lambda *_: None)
    training.save(model, tl, "python -m engine.train induction", tmp_path)
    path = tmp_path / f"{analysis.timeline_name(2)}.safetensors"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="cannot be read"):
        analysis.load_timeline(2, tmp_path)
    path.write_bytes(data)
    for suffix in (".safetensors", ".json"):  # a two-layer timeline under the control's name
        name = analysis.timeline_name(2) + suffix
        shutil.copy(tmp_path / name, tmp_path / name.replace("-2l-", "-1l-"))
    with pytest.raises(InputError, match="not a 1-layer timeline"):
        analysis.load_timeline(1, tmp_path)


def test_phase_change_finds_the_crossing_window():
    steps = [0, 10, 20, 40, 80, 160, 320]
    loss = [4.0, 3.9, 3.5, 3.4, 2.0, 1.5, 1.4]
    ind = [0.1, 0.1, 0.1, 0.2, 0.6, 0.8, 0.8]
    change = analysis.phase_change(steps, loss, ind)
    assert (change["start"], change["end"]) == (20, 160)
    assert change["loss_drop"] == pytest.approx(2.0)
    assert analysis.phase_change(steps, loss, [0.1] * 7) is None
    # a crossing that falls back does not count; the last crossing for good does
    assert analysis.phase_change(steps, loss, [0.1, 0.6, 0.1, 0.2, 0.6, 0.8, 0.8])["end"] == 160


def test_the_two_layer_card_continues_a_repeated_block_and_the_control_does_not():
    """Through its card, like every model: in the block's second copy the two-layer toy
    predicts the token that followed the current one in the first copy; the one-layer
    control, with no head to compose, mostly does not."""
    from engine.models import registry
    from engine.models.cards.induction import REPEATED

    ids = [int(w) for w in REPEATED.split()]
    block = 5  # REPEATED is a block of five ids, then the block again, then two more
    right = {}
    for name in ("induction-2l", "induction-1l"):
        card = registry.get(name)
        trace = card.trace(REPEATED)
        amap = trace.maps["self"]
        assert amap.weights.shape[:2] == (card.layers, card.meta["config"]["n_heads"])
        assert np.allclose(amap.weights.sum(-1), 1, atol=1e-5)  # causal distributions
        nxt = trace.outputs["next"]  # nxt[i] predicts token i + 1 of [BOS, *ids]
        repeats = range(block + 1, len(ids))  # positions whose next token was seen before
        right[name] = np.mean([nxt[i] == ids[i] for i in repeats])
    assert right["induction-2l"] == 1.0
    assert right["induction-1l"] < 0.5
    with pytest.raises(InputError, match="token ids"):
        registry.get("induction-2l").trace("12 64")  # a whole number is an id: 1 … 63
    for digits in ("1234567", "9" * 390):  # a number, not a symbol; no int() of it
        with pytest.raises(InputError, match="token ids"):
            registry.get("induction-2l").trace(f"12 {digits}")


def test_symbols_are_read_as_ids_in_the_order_first_typed():
    """A teacher types letters or words: each distinct symbol stands for the next id (a → 1,
    b → 2 …), so the toy runs exactly as on those ids, and the maps and predictions name
    the symbols; a prediction no symbol stands for is ``#id``. A non-ASCII digit is a
    symbol, not a crash (``"²".isdigit()`` is True, ``int("²")`` raises)."""
    from engine.models import registry

    card = registry.get("induction-2l")
    typed, ids = card.trace("a b c a b c"), card.trace("1 2 3 1 2 3")
    assert np.array_equal(typed.maps["self"].weights, ids.maps["self"].weights)
    assert typed.outputs["next"] == ids.outputs["next"]
    assert typed.outputs["symbols"] == ["a", "b", "c"] and ids.outputs["symbols"] == []
    assert list(typed.maps["self"].key_labels) == ["BOS", "a", "b", "c", "a", "b", "c"]
    names = {1: "a", 2: "b", 3: "c"}
    assert typed.outputs["named"] == [names.get(i, f"#{i}") for i in ids.outputs["next"]]
    assert ids.outputs["named"] == [str(i) for i in ids.outputs["next"]]
    assert typed.outputs["named"][4:6] == ["b", "c"]  # the block's second copy, continued
    assert card.trace("² 3").outputs["symbols"] == ["²", "3"]
    # Split as the page counts them under the box: marks apart, a CJK character each.
    assert card.trace("猫狗猫狗").outputs["symbols"] == ["猫", "狗"]
    assert card.trace("sat. sat.").inputs["tokens"] == [0, 1, 2, 1, 2]


def test_the_evaluation_reads_the_shipped_weights_and_timeline():
    """The card's numbers are what ``python -m engine.evaluate induction`` measures now."""
    from engine.evaluation import induction as evaluation
    from engine.models import registry

    for n_layers in (2, 1):
        shipped(n_layers)
        card = registry.get(f"induction-{n_layers}l")
        assert card.results() == json_round(evaluation.measure(n_layers))
    assert registry.get("induction-2l").results()["phase_change"] is not None
    assert registry.get("induction-1l").results()["phase_change"] is None


def json_round(value):
    import json

    return json.loads(json.dumps(value))


def test_the_live_command_never_writes_over_the_shipped_toy(tmp_path, monkeypatch, capsys):
    """The Learning page's train-it-now caption gives ``--live``: run as copied, it wrote the
    800-step toy over the shipped one (``assets/checkpoints/induction``) before ``--live``."""
    shipped_dir, scratch = tmp_path / "shipped", tmp_path / "scratch"
    shipped_dir.mkdir(), scratch.mkdir()
    monkeypatch.setattr(training, "OUT_DIR", shipped_dir)
    monkeypatch.setattr("tempfile.tempdir", str(scratch))
    tl = training.live(1, 3, steps=12)
    assert (
        tl.meta["command"]
        == "python -m engine.train induction --layers 1 --seed 3 --live --steps 12"
    )
    assert tl.meta["wall_s"] >= 0 and tl.meta["cpu_s"] >= 0
    assert training.main(tl.meta["command"].split()[4:]) == 0
    assert not any(shipped_dir.iterdir())
    written = capsys.readouterr().out.split("writing to ")[1].split()[0]
    back = analysis.load_timeline(1, written)
    assert np.array_equal(back["loss"], analysis.arrays(tl)["loss"])
