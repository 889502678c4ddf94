"""The trained variant-quality cells, for a page: one test example through one cell.

``trained_trace(task, variant, seed)`` loads the shipped checkpoint
(assets/checkpoints/variants/<task>-<variant>-s<seed>), runs the first example of the
task's fixed test set and answers with a Trace: every layer's effective map (flagged as
the variant flags it), the tokens as labels, the asked positions, the answers, the
model's predictions and where each answer is read from (its evidence), so a view can
show whether, say, Linformer's query finds its key.
"""

from __future__ import annotations

from engine.data import long_range
from engine.text import InputError
from engine.trace import AttentionMap, Trace

SHOW_N = 128  # tokens shown: the first SHOW_N rows and columns of each map


def token_label(t: int) -> str:
    if t == long_range.BLANK:
        return "·"
    if t == long_range.SLOT:
        return "?"
    if t < long_range.VALUE0:
        return f"k{t - long_range.KEY0}"
    return f"v{t - long_range.VALUE0}"


def trained_trace(task: str, variant: str, seed: int = 0, directory=None) -> Trace:
    """The cell ``task × variant × seed`` on test example 0, maps cropped to SHOW_N."""
    import torch

    from engine import checkpoints
    from engine.training import variants as grid
    from engine.variants.registry import attend_fn, get

    name = grid.checkpoint_name(task, variant, seed)
    try:
        model, meta = grid.load(name, directory)
    except checkpoints.CheckpointError as exc:
        raise InputError(str(exc)) from None
    spec = long_range.Task(meta["task"], long_range.get(task).kind, meta["n"], meta["pairs"])
    x, y = spec.batch(1, grid.TEST_SEED)
    with torch.no_grad():
        attend = attend_fn(variant, {**meta["params"], "seed": seed})
        logits, maps = model(x, attend, want_weights=True)
    pred = logits.argmax(-1)[0]
    asked = (y[0] != long_range.IGNORE).nonzero().flatten().tolist()
    labels = [token_label(int(t)) for t in x[0]]
    m = min(SHOW_N, spec.n)
    v = get(variant)
    weights = torch.stack([w[0, :, :m, :m] for w in maps]).float().numpy()  # [L, H, m, m]
    amap = AttentionMap(
        weights=weights,
        query_labels=labels[:m],
        key_labels=labels[:m],
        kind=v.map_kind,
        exact=v.map_exact,
        implied=v.map_implied,
        normalized=v.map_normalized and m == spec.n,
        layer_labels=[f"layer {i}" for i in range(len(maps))],
        note=(f"first {m} of {spec.n} tokens. " if m < spec.n else "") + v.map_note,
    )
    return Trace(
        model=f"variant-quality:{name}",
        task=task,
        inputs={"task": task, "variant": variant, "seed": seed, "params": meta["params"]},
        outputs={
            "asked": asked,
            "answers": [token_label(int(y[0, i])) for i in asked],
            "evidence": [long_range.evidence(spec.kind, x[0], i) for i in asked],
            "predictions": [token_label(int(pred[i])) for i in asked],
            "accuracy_example": sum(int(pred[i] == y[0, i]) for i in asked) / max(len(asked), 1),
            "accuracy_test": meta["accuracy"],
        },
        maps={"attention": amap},
    )
