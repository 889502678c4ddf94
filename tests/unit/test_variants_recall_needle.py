"""Issue 20, item 7: the state each grid model keeps (recall against state, as in Zoology
and Based) and the needle probe (a key at each depth of inputs of several lengths)."""

from __future__ import annotations

import pytest
import torch

from engine.analysis import needle, recall_state
from engine.data import long_range
from engine.evaluation import variants as evaluation
from engine.models.variant_lm import VariantModel, VariantModelConfig
from engine.training import variants as grid
from engine.variants.registry import REGISTRY, attend_fn

torch.set_num_threads(1)

CONFIG = VariantModelConfig(vocab=long_range.VOCAB).to_dict()  # the grid's: 64 wide, 2 × 32
H, D, L, F32 = 2, 32, 2, 4


def state_of(variant: str, n: int = 256) -> dict:
    return recall_state.state(variant, grid.BUDGETS[variant], n, CONFIG)


def test_kv_cache_bytes_by_hand():
    full = state_of("full")
    assert full["state_bytes"] == L * 2 * H * D * 256 * F32  # keys and values, every token
    assert full["bytes_per_token"] == L * 2 * H * D * F32
    assert full["kind"] == "grows"
    assert state_of("gqa")["state_bytes"] == full["state_bytes"] // H  # G = 1 of H = 2
    # latent + RoPE key at the grid head size 32: d_c = 4·32, d_R = 32 / 2 (DeepSeek-V2)
    assert state_of("mla")["state_bytes"] == L * (128 + 16) * 256 * F32
    assert state_of("differential")["state_bytes"] == full["state_bytes"]
    assert state_of("full", 512)["state_bytes"] == 2 * full["state_bytes"]


def test_windows_and_recurrent_states_stop_growing():
    sinks = state_of("sinks")
    assert sinks["state_bytes"] == L * 2 * H * D * (16 + 4) * F32  # w + s tokens
    assert sinks["kind"] == "fixed" and state_of("sinks", 8)["kind"] == "grows"
    for name in ("retnet", "gla", "deltanet", "gated_deltanet"):
        s = state_of(name)
        assert s["state_bytes"] == L * H * D * D * F32 and s["kind"] == "fixed", name
    assert state_of("based")["state_bytes"] == L * H * (1 + 16 + 16**2) * (D + 1) * F32
    assert state_of("linear")["state_bytes"] == L * H * D * (D + 1) * F32
    assert state_of("mamba")["state_bytes"] == L * H * D * 8 * F32
    assert state_of("longformer")["state_bytes"] == L * 2 * H * D * (16 + 1) * F32
    # A fixed state costs fewer bytes per token the longer the input.
    assert state_of("retnet", 512)["bytes_per_token"] == state_of("retnet")["bytes_per_token"] / 2


def test_every_grid_variant_has_a_memory_model():
    for name in grid.BUDGETS:
        s = state_of(name)
        assert s["state_bytes"] > 0 and s["source"], name
    # Not a grid cell, but a variant all the same: decoding keeps every token's keys, values.
    assert recall_state.layer_bytes("kv_cache", {}, 256, D, H) == 2 * H * D * 256 * F32
    assert recall_state.source("kv_cache").startswith("KV cache of every token read")


def test_table_keeps_the_recall_tasks_and_every_seed():
    cells = [
        {"variant": "full", "task": "mqar-256", "seed": 1, "accuracy": 0.5},
        {"variant": "full", "task": "mqar-256", "seed": 0, "accuracy": 1.0},
        {"variant": "full", "task": "control-128", "seed": 0, "accuracy": 1.0},
    ]
    shapes = {("full", "mqar-256", 64): (256, CONFIG), ("full", "control-128", 64): (128, CONFIG)}
    (row,) = recall_state.table(cells, grid.BUDGETS, shapes)
    assert row["task"] == "mqar-256" and row["seeds"] == [0, 1] and row["width"] == 64
    assert row["accuracy"] == [1.0, 0.5] and row["mean"] == 0.75
    assert row["state_bytes"] == state_of("full")["state_bytes"]
    assert "| full | mqar-256 | 64 | 1.000 / 0.500 | 0.750 |" in evaluation.recall_markdown(
        {"recall_state": [row]}
    )


def test_the_width_sweep_gives_a_variant_one_row_per_width_and_its_state_grows():
    cells = [
        {"variant": "gla", "task": "mqar-256", "seed": 0, "accuracy": 0.1, "width": 64},
        {"variant": "gla", "task": "mqar-256", "seed": 0, "accuracy": 0.3, "width": 128},
    ]
    wide = {**CONFIG, "d_model": 2 * CONFIG["d_model"]}
    shapes = {("gla", "mqar-256", 64): (256, CONFIG), ("gla", "mqar-256", 128): (256, wide)}
    narrow, broad = recall_state.table(cells, grid.BUDGETS, shapes)
    assert (narrow["width"], broad["width"]) == (64, 128)
    assert broad["state_bytes"] == 4 * narrow["state_bytes"]  # d × d per head: d doubled


def test_a_cell_s_own_parameters_set_its_state_where_they_follow_the_width():
    """MLA's latent follows the head size (d_c = 4·d_h, Variant.grid_hp): a cell's state
    comes from the parameters it ran with, not the grid's nominal budget."""
    cells = [
        {"variant": "mla", "task": "mqar-256", "seed": 0, "accuracy": 1.0, "width": w}
        for w in (64, 128)
    ]
    wide = {**CONFIG, "d_model": 2 * CONFIG["d_model"]}
    mla = REGISTRY["mla"]
    shapes = {
        ("mla", "mqar-256", 64): (256, CONFIG, mla.grid_hp(D)),
        ("mla", "mqar-256", 128): (256, wide, mla.grid_hp(2 * D)),
    }
    narrow, broad = recall_state.table(cells, grid.BUDGETS, shapes)
    assert narrow["state_bytes"] == L * (4 * D + D // 2) * 256 * F32
    assert broad["state_bytes"] == 2 * narrow["state_bytes"]


@pytest.mark.parametrize("length", needle.LENGTHS)
def test_the_needle_sits_at_each_depth_and_its_answer_is_its_value(length):
    for depth in needle.DEPTHS:
        x, y = needle.needle_batch(length, depth, 6, seed=3)
        p = needle.needle_position(length, depth)
        assert p == round(depth * (length - 3)) and 0 <= p and p + 1 <= length - 2
        key = x[:, p]
        assert (x[:, -1] == key).all()  # the question is the needle's key
        assert (y[:, -1] == x[:, p + 1]).all()  # the answer is the value after it
        assert ((long_range.KEY0 <= key) & (key < long_range.VALUE0)).all()
        assert ((y[:, -1] >= long_range.VALUE0) & (y[:, -1] < long_range.VOCAB)).all()
        assert (y[:, :-1] == long_range.IGNORE).all()  # nothing else is asked
        assert ((x == key[:, None]).sum(1) == 2).all()  # the key nowhere else
        is_key = (x >= long_range.KEY0) & (x < long_range.VALUE0)
        assert (is_key.sum(1) == needle.DISTRACTORS + 2).all()  # needle, question, distractors
        # Every distractor key is followed by a value: pairs, as in MQAR.
        rows, cols = is_key[:, :-1].nonzero(as_tuple=True)
        assert (x[rows, cols + 1] >= long_range.VALUE0).all()
    assert needle.needle_position(length, 0.0) == 0
    assert needle.needle_position(length, 1.0) + 1 == length - 2


def test_needle_batches_are_seeded_and_limits_are_refused():
    a, b = needle.needle_batch(64, 0.5, 4, seed=1), needle.needle_batch(64, 0.5, 4, seed=1)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert not torch.equal(a[0], needle.needle_batch(64, 0.5, 4, seed=2)[0])
    with pytest.raises(ValueError, match="depth"):
        needle.needle_position(64, 1.5)
    with pytest.raises(ValueError, match="distractors"):
        needle.needle_batch(20, 0.5, 2, seed=0)


class Oracle(torch.nn.Module):
    """Answers at every position with the token after that token's first occurrence."""

    def __init__(self):
        super().__init__()
        self.cfg = VariantModelConfig(vocab=long_range.VOCAB, n_max=4096)

    def forward(self, x, attend=None):
        logits = torch.zeros(*x.shape, long_range.VOCAB)
        for b in range(x.shape[0]):
            first = (x[b] == x[b, -1]).nonzero()[0, 0]
            logits[b, -1, x[b, first + 1]] = 1.0
        return logits, []


def test_probe_scores_a_model_that_reads_the_needle_as_all_right():
    acc = needle.probe(Oracle(), None, lengths=(64, 128), depths=(0.0, 0.5, 1.0), size=4)
    assert acc == [[1.0, 1.0]] * 3


def test_longer_positions_keep_the_weights_and_the_short_outputs():
    torch.manual_seed(0)
    model = VariantModel(VariantModelConfig(vocab=long_range.VOCAB, n_max=64)).eval()
    longer = needle.at_length(model, 128)
    assert longer.cfg.n_max == 128 and needle.at_length(model, 64) is model
    x, _ = needle.needle_batch(64, 0.5, 2, seed=0)
    with torch.no_grad():
        assert torch.allclose(model(x)[0], longer(x)[0])
        assert longer(needle.needle_batch(128, 0.5, 2, seed=0)[0])[0].shape[1] == 128


def test_evaluate_reports_state_missing_cells_and_the_probe(tmp_path, monkeypatch, capsys):
    from engine.training.variants import main

    argv = ["--quick", "--task", "mqar-256", "--variant", "gqa", "retnet", "--seeds", "0"]
    assert main([*argv, "--lr", "3e-3", "--out-dir", str(tmp_path), "--jobs", "1"]) == 0
    result = evaluation.evaluate(tmp_path)
    rows = {r["variant"]: r for r in result["recall_state"]}
    assert set(rows) == {"gqa", "retnet"} and rows["gqa"]["n"] == grid.QUICK_TASK_N
    assert rows["gqa"]["kind"] == "grows" and rows["retnet"]["kind"] == "fixed"
    assert set(result["not_in_grid"]) >= {"kv_cache", "int8", "full"}
    assert "round()" in result["not_in_grid"]["int8"]
    assert "engine.train variants --variant full" in result["not_in_grid"]["full"]
    assert "mqar-256-gqa-s1" in result["missing_cells"]
    assert "mqar-256-gqa-s0" not in result["missing_cells"]
    assert [f["source"][:5] for f in result["recall_published"]["findings"]] == ["Arora"] * 2
    assert evaluation.evaluate(tmp_path, jobs=2)["cells"] == result["cells"]  # a pool: same
    # Four steps leave the cells at chance: the probe lists them, it does not probe them.
    probe = needle.run(tmp_path)
    assert set(probe["skipped"]) == {"gqa", "retnet"} and not probe["mean"]
    monkeypatch.setattr(needle, "PROBE_MIN", 0.0)
    monkeypatch.setattr(needle, "LENGTHS", (64, 128))
    monkeypatch.setattr(needle, "DEPTHS", (0.0, 1.0))
    probe = needle.run(tmp_path, variants=["retnet"])
    grid_ = probe["accuracy"]["retnet"]["0"]
    assert len(grid_) == 2 and len(grid_[0]) == 2 and probe["mean"]["retnet"] == grid_
    assert all(0.0 <= a <= 1.0 for row in grid_ for a in row)
    assert "| retnet |" in evaluation.needle_markdown({**probe, "trained_n": 64})


def test_a_probe_of_a_few_variants_merges_into_the_saved_one():
    setup = {k: 1 for k in needle.SETUP}
    old = {**setup, "accuracy": {"a": 1, "b": 2}, "mean": {"a": 1, "b": 2}, "skipped": {"c": 0}}
    new = {**setup, "accuracy": {"b": 3}, "mean": {"b": 3}, "skipped": {"a": 0.01}}
    merged = needle.merge(old, new)
    assert merged["accuracy"] == {"b": 3} and merged["skipped"] == {"c": 0, "a": 0.01}
    assert needle.merge({**old, "size": 2}, new) == new  # probed otherwise: replaced
    assert needle.merge(None, new) == new


@pytest.mark.parametrize("variant", list(grid.BUDGETS))
def test_every_grid_variant_runs_in_the_grid_model_with_and_without_gradients(variant):
    """The model hands each variant q, k, v as strided views of one projection (not
    contiguous): training, rescoring and the probe all run through that."""
    torch.manual_seed(0)
    task = long_range.Task("probe", "mqar", 64, 8)
    model = grid.build(task, grid.QUICK, variant)
    attend = attend_fn(variant, {**grid.BUDGETS[variant], "seed": 0})
    x, _ = task.batch(2, 0)
    logits, _ = model(x, attend)
    logits.sum().backward()
    with torch.no_grad():
        assert torch.allclose(model(x, attend)[0], logits, atol=1e-5)


def test_the_grid_model_learns_each_heads_sink_logit():
    """The sinks cell holds σ per head and layer as parameters (Variant.learned) that train
    with the model; a variant that learns nothing adds no parameter."""
    task = long_range.Task("probe", "mqar", 64, 8)
    model = grid.build(task, grid.QUICK, "sinks")
    sigma = model.blocks[0].learned["sink_logit"]
    assert sigma.shape == (model.cfg.n_heads,) and sigma.requires_grad
    attend = attend_fn("sinks", {**grid.BUDGETS["sinks"], "seed": 0})
    x, _ = task.batch(2, 0)
    model(x, attend)[0].sum().backward()
    assert sigma.grad is not None and sigma.grad.abs().sum() > 0
    plain = grid.build(task, grid.QUICK, "full")
    assert not any("learned" in name for name, _ in plain.named_parameters())


def test_the_shipped_grid_trains_full_attention_to_recall_on_every_seed():
    """Issue 20 item 11: every recall cell's schedule is long enough that full attention
    reaches ≥ 0.99 on every seed, so a variant at chance is at chance for its state; the
    width sweep is complete and feeds the recall-against-state rows."""
    from engine.models import variant_lm

    result = variant_lm.results()
    assert not result["missing_cells"]
    recall = [c for c in result["cells"] if c["task"].startswith("mqar")]
    full = [c for c in recall if c["variant"] in ("full", "flash")]
    assert len(full) == 2 * len(grid.SEEDS) * 2 and all(c["accuracy"] >= 0.99 for c in full)
    assert {c["steps"] for c in recall} == {grid.RECALL_STEPS}
    sweep = result["width_sweep"]
    assert not sweep["missing_cells"] and sweep["widths"] == sorted({64, *grid.SWEEP_WIDTHS})
    rows = {(r["variant"], r["width"]) for r in result["recall_state"] if r["task"] == "mqar-256"}
    assert rows == {(v, w) for v in grid.BUDGETS for w in sweep["widths"]}


def test_with_the_recipe_attention_recalls_at_every_point_of_zoologys_grid():
    """Issue 31's bar, on the shipped plan: full attention >= 0.99 at every (length,
    width) point, seed 1 included; DeltaNet and Based >= 0.9 on both seeds at (256, 16),
    d = 64; every cell trained at the one rate its variant's sweep kept."""
    from engine.models import variant_lm
    from engine.training import _grid_plan as plans

    found = variant_lm.plan_results()[plans.Recipe().tag]
    cells = found["cells"]
    full = {
        (c["task"], c["width"], c["seed"]): c["accuracy"] for c in cells if c["variant"] == "full"
    }
    assert set(full) == {(p.task, p.width, s) for p in plans.ZOOLOGY.points for s in p.seeds}
    assert min(full.values()) >= 0.99, full
    for variant in ("deltanet", "based"):
        tuned = [c for c in cells if c["variant"] == variant and c["task"] == "mqar-256-16"]
        both = [c["accuracy"] for c in tuned if c["width"] == 64]
        assert len(both) == 2 and min(both) >= 0.9, (variant, both)
    for variant in {c["variant"] for c in cells}:
        assert len({c["recipe"]["lr"] for c in cells if c["variant"] == variant}) == 1, variant


def test_every_shipped_recall_cell_has_its_training_timeline():
    from engine.models import variant_lm

    for task in ("mqar-256", "mqar-512"):
        for variant in grid.BUDGETS:
            for seed in grid.SEEDS:
                tl = variant_lm.cell_timeline(task, variant, seed)
                assert tl.steps[0] == 0 and tl.steps[-1] == grid.RECALL_STEPS, (task, variant)
                assert len(tl.probes) == len(tl.steps) and tl.probes[-1][0].maps["attention"]


def test_the_verdict_names_the_outcome_the_smallest_recalling_state_and_the_kept_rate():
    from engine.analysis.recall_state import verdict

    def row(variant, task, width, accs, state):
        mean = sum(accs) / len(accs)
        return dict(
            variant=variant, task=task, width=width, accuracy=accs, mean=mean, state_bytes=state
        )

    rows = [
        row("full", "mqar-256-16", 64, [1.0, 0.99], 9000),
        row("full", "mqar-64-4", 32, [0.95], 1000),
        row("full", "mqar-64-4", 64, [0.5], 500),  # cheaper but under the bar
        row("based", "mqar-256-16", 64, [0.4], 7000),
        row("linear", "mqar-256-16", 64, [0.02], 3000),
    ]
    tune = [
        dict(variant="full", lr=1e-3, validation_accuracy=0.9, kept=False, conv=4),
        dict(variant="full", lr=1e-2, validation_accuracy=1.0, kept=True, conv=4),
    ]
    found = {v["variant"]: v for v in verdict(rows, tune)}
    assert [v["variant"] for v in verdict(rows, tune)] == ["full", "based", "linear"]
    assert found["full"]["outcome"] == "recalls" and found["full"]["mean"] == 0.995
    assert found["full"]["smallest_state"] == dict(
        task="mqar-64-4", width=32, state_bytes=1000, mean=0.95
    )
    assert (found["full"]["lr"], found["full"]["conv"]) == (1e-2, 4)
    assert found["full"]["validation_by_lr"] == {1e-3: 0.9, 1e-2: 1.0}
    assert found["based"]["outcome"] == "partial" and found["based"]["smallest_state"] is None
    assert found["linear"]["outcome"] == "chance" and found["linear"]["lr"] is None
