"""The small model every attention variant is trained in, for the variant-quality grid.

One encoder, identical for every variant but for its attention function (the pluggable
``attend``, engine.attention.attend): token embedding beside the previous token's embedding
(a width-2 short convolution, as in Zoology's and Mamba's blocks, so a value's position
also shows its key; one table for both halves, so a query token and the key it asks
for look alike) + sinusoidal positions (Vaswani et al. 2017), then
pre-norm blocks x ← x + MHA(conv(LN x)), x ← x + FFN(LN x), then a linear read-out of
the answer at every position.

    h⁰_t = [E[x_t] ; E[x_{t−1}]] + PE(t)
    u = conv(LN hˡ⁻¹),   u_t = Σ_{s<K} c_s ⊙ (LN hˡ⁻¹)_{t−s}    (depthwise, causal; K = conv)
    hˡ = hˡ⁻¹ + W^O attend(W^Q u, W^K u, W^V u)
    logits_t = W_out LN(h^L_t)

The short convolution before each mixer is the field's recipe (Zoology's and Based's
``ShortConvolution``, fla's ``ShortConvolution``: kernel 4, one filter per channel), the
same for every variant. It starts as the identity (c_0 = 1, the rest 0), so at step 0 a
model with it computes what the model without it does; ``conv = 0`` (the default, and
every cell trained before the recipe) has no convolution at all.

Bidirectional (causal=False) for every variant; Mamba is causal by construction, which
the tasks allow (every answer's evidence comes before its query).

The grid's cells (``python -m engine.train variants``) ship under
``assets/checkpoints/variants/<task>-<variant>-s<seed>``; :func:`load` reads one back and
:func:`trace` runs one of its held-out probe examples (:func:`probe_batch`; the cell's
card, ``engine.models.cards.variant_cell``, is the way in), so a page can show whether,
say, Linformer's query finds its key. :func:`results` is the grid's score sheet
(``python -m engine.evaluate variants --save``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from engine import checkpoints, timeline
from engine.attention.attend import Attend, exact
from engine.attention.multihead import MultiHeadAttention
from engine.data import long_range
from engine.messages import Message
from engine.positional import sinusoidal
from engine.trace import AttentionMap, Trace
from engine.variants.registry import get

FAMILY = "variant-quality"
OUT_DIR = checkpoints.CHECKPOINT_DIR / "variants"
# The test set's seed. It is also seed 1's training batch at step 3 (1·10⁶ + 3): copy-128's
# 16-example batch there holds 16 of its 256 test examples (mqar and control-128: none).
# Measured for the 23 shipped seed-1 copy cells (2026-12-05): on those 16 they score 0.015
# lower on average than on the other 240 (at most 0.021 higher: reformer), and their shipped
# score is within 0.004 of the 240's alone. A new seed here would change every shipped score.
TEST_SEED = 1_000_003
# The validation set that picks a cell's learning rate: its own seed, beyond every training
# batch's (seed·10⁶ + step for seeds < 7) and never the test set's.
VALID_SEED = 7_000_003
RESULT = checkpoints.result_name("variants")  # python -m engine.evaluate variants --save
SHOW_N = 128  # tokens a trace shows: the first SHOW_N rows and columns of each map
PROBE_SIZE = 64  # held-out examples a cell's training timeline measures at each snapshot


@dataclass
class VariantModelConfig:
    vocab: int
    n_max: int = 512
    d_model: int = 64
    n_heads: int = 2
    n_layers: int = 2
    d_ff: int = 128
    recall_init: bool = True
    conv: int = 0  # kernel of the short convolution before each mixer; 0: none
    # The variant whose own learned values (Variant.learned: gpt-oss's sink logit per
    # head, MLA's projections) each block holds as parameters; "" for cells trained before
    # they were learned.
    variant: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


class ShortConv(nn.Module):
    """Causal depthwise convolution over time, kernel K: ``(B, n, d) → (B, n, d)``.

    Its parameters are made without drawing random numbers, so every other weight of a
    model with the convolution starts as in the same model without it (a clean ablation).
    """

    def __init__(self, d_model: int, kernel: int):
        super().__init__()
        weight = torch.zeros(d_model, 1, kernel)  # (d, 1, K): one filter per channel
        weight[:, 0, -1] = 1.0  # the identity: the last tap reads this token
        self.weight = nn.Parameter(weight)
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        n, kernel = x.shape[1], self.weight.shape[-1]
        u = F.pad(x.transpose(1, 2), (kernel - 1, 0))  # (B, d, K−1+n): the past only
        return F.conv1d(u, self.weight, self.bias, groups=x.shape[-1])[..., :n].transpose(1, 2)


class Block(nn.Module):
    def __init__(self, cfg: VariantModelConfig):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.conv = ShortConv(cfg.d_model, cfg.conv) if cfg.conv else None
        self.attn = MultiHeadAttention(cfg.d_model, cfg.n_heads)
        self.ffn = nn.Sequential(
            nn.Linear(cfg.d_model, cfg.d_ff), nn.GELU(), nn.Linear(cfg.d_ff, cfg.d_model)
        )
        heads, d = cfg.n_heads, cfg.d_model // cfg.n_heads
        learned = get(cfg.variant).learned(heads, d) if cfg.variant else {}
        self.learned = nn.ParameterDict({k: nn.Parameter(v) for k, v in learned.items()})

    def forward(self, h, attend: Attend, want_weights: bool):
        x = self.ln1(h)
        if self.conv is not None:
            x = self.conv(x)
        q, k, v = self.attn.project(x, x, x)  # (B, H, n, d_k)
        # Called directly (not MultiHeadAttention.forward) so training can skip the map:
        # some variants' maps cost far more than their outputs (Mamba's is O(n²·d·N)).
        own = {"learned": dict(self.learned)} if self.learned else {}
        o, weights = attend(q, k, v, causal=False, want_weights=want_weights, **own)
        B, _, n, _ = o.shape
        h = h + self.attn.W_O(o.transpose(1, 2).reshape(B, n, -1))
        return h + self.ffn(self.ln2(h)), weights


class VariantModel(nn.Module):
    def __init__(self, cfg: VariantModelConfig):
        super().__init__()
        self.cfg = cfg
        assert cfg.d_model % 2 == 0, "d_model must be even: half this token, half the previous"
        self.embed = nn.Embedding(cfg.vocab, cfg.d_model // 2)
        pe = torch.from_numpy(sinusoidal(cfg.n_max, cfg.d_model)).float()
        self.register_buffer("pe", pe, persistent=False)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = nn.LayerNorm(cfg.d_model)
        self.out = nn.Linear(cfg.d_model, cfg.vocab)
        if cfg.recall_init:
            self._recall_init()

    @torch.no_grad()
    def _recall_init(self) -> None:
        """Head 0 of layer 0 starts by matching a token to the previous-token half.

        q = this token's half, k = the previous token's half: the query for key κ starts
        pointed at the position after κ (where κ's value sits). Without it, a 2-layer
        model on this CPU budget stays on the recall plateau (loss ln |values|) for
        thousands of steps; with it, what is left to learn is reading the value out, and
        whether the variant lets the query reach that position decides the score.
        """
        half, dk = self.cfg.d_model // 2, self.cfg.d_model // self.cfg.n_heads
        attn = self.blocks[0].attn
        eye = torch.eye(min(half, dk))
        attn.W_Q.weight[:dk].zero_()
        attn.W_K.weight[:dk].zero_()
        attn.W_Q.weight[: eye.shape[0], : eye.shape[0]] = eye
        attn.W_K.weight[: eye.shape[0], half : half + eye.shape[0]] = eye

    def forward(self, x, attend: Attend | None = None, *, want_weights: bool = False):
        """``x [B, n]`` → ``(logits [B, n, V], maps)``: one ``[B, H, n, n]`` per layer
        when ``want_weights`` (the variant's effective map), else an empty list."""
        B, n = x.shape
        assert n <= self.cfg.n_max, f"length {n} exceeds n_max = {self.cfg.n_max}"
        prev = torch.cat([x.new_zeros(B, 1), x[:, :-1]], dim=1)  # token 0 (blank) before t = 0
        h = torch.cat([self.embed(x), self.embed(prev)], dim=-1) + self.pe[:n]  # (B, n, d)
        maps = []
        for block in self.blocks:
            h, w = block(h, attend or exact, want_weights)
            if want_weights:
                maps.append(w)
        return self.out(self.norm(h)), maps


GRID_WIDTH = 64  # d_model of the grid's cells; the width sweep's others carry "-d<width>"


def width_of(meta: dict) -> int:
    """A cell's width tag: the grid's, or the sweep's ``--width`` (cells trained before the
    tag was written: their d_model, or the grid's for a ``--quick`` cell)."""
    if "width" in meta:
        return int(meta["width"])
    return GRID_WIDTH if meta.get("quick") else int(meta["config"]["d_model"])


def recipe_of(meta: dict) -> dict:
    """A cell's recipe as its JSON records it (engine.training._grid_plan); a cell trained
    before the recipe had no convolution and its schedule's one rate."""
    if "recipe" in meta:
        return {k: meta["recipe"][k] for k in ("conv", "lrs", "lr")}
    lr = meta["schedule"]["lr"]
    return {"conv": int(meta["config"].get("conv", 0)), "lrs": [lr], "lr": lr}


FROZEN_FLAG = "--frozen-variant"


def learns(variant: str, config: dict) -> bool:
    """Whether the variant holds weights of its own in a model of this config (Variant.learned:
    GLA's gate, Mamba's selection, MLA's projections, NSA's gates, the λ, the sink logit)."""
    heads = config.get("n_heads", 2)
    return bool(get(variant).learned(heads, config.get("d_model", GRID_WIDTH) // heads))


def frozen(meta: dict) -> bool:
    """A cell whose variant's own weights stayed at their seeded values: trained with
    ``--frozen-variant`` (its JSON lists no ``learned`` weights), or before they were
    learned (a config that names no variant)."""
    if not learns(meta["variant"], meta["config"]):
        return False
    if "learned" in meta:
        return not meta["learned"]
    return not meta["config"].get("variant")


def command_of(meta: dict) -> str:
    """The command that trains the cell again: a cell from before the recipe gets the flags
    that are no longer the defaults (``--conv 0 --lr 0.003``), and one from before its
    variant's weights were learned ``--frozen-variant``."""
    command = meta["command"]
    if frozen(meta) and FROZEN_FLAG not in command:
        command += f" {FROZEN_FLAG}"
    if "recipe" in meta or "--conv" in command:
        return command
    recipe = recipe_of(meta)
    return f"{command} --conv {recipe['conv']} --lr {recipe['lr']:g}"


def checkpoint_name(task: str, variant: str, seed: int, width: int = GRID_WIDTH) -> str:
    """``<task>-<variant>-s<seed>``; a cell of the width sweep adds ``-d<width>``."""
    return f"{task}-{variant}-s{seed}" + ("" if width == GRID_WIDTH else f"-d{width}")


def load(name: str, directory: Path | None = None) -> tuple[VariantModel, dict]:
    """A trained cell: the model in float32 and its JSON (``name`` = task-variant-sSEED)."""
    state, meta = checkpoints.load(name, Path(directory) if directory else OUT_DIR)
    cfg = VariantModelConfig(**meta["config"])
    if cfg.variant and not any(".learned." in key for key in state):
        # Trained before its variant learned anything (GLA's gate, Mamba's selection, MLA's
        # projections were seeded): the variant's seeded weights, as when it was trained.
        cfg = replace(cfg, variant="")
    model = VariantModel(cfg)
    model.load_state_dict({k: v.float() for k, v in state.items()})
    return model.eval(), meta


def cell_timeline(task: str, variant: str, seed: int, directory=None) -> timeline.Timeline:
    """The training timeline saved beside cell ``task × variant × seed`` (engine.timeline):
    probe loss, accuracy and evidence mass, and probe example 0's pooled maps, at ≈ 12
    log-spaced steps. InputError (``timeline.missing`` / ``timeline.bad``) names the command
    that trains the cell again."""
    d = Path(directory) if directory is not None else OUT_DIR
    name = checkpoint_name(task, variant, seed)
    try:
        command = command_of(checkpoints.load_meta(name, d))
    except (checkpoints.CheckpointError, KeyError):  # no cell: how to train one
        command = f"python -m engine.train variants --task {task} --variant {variant}"
        command += f" --seeds {seed}"
    return timeline.load(name, d, command)


def cell_timeline_stamp(task: str, variant: str, seed: int, directory=None) -> tuple | None:
    d = Path(directory) if directory is not None else OUT_DIR
    return timeline.stamp(checkpoint_name(task, variant, seed), d)


def results(directory: Path | None = None) -> dict | None:
    """The shipped grid's evaluation (``RESULT``), or None when not saved or unreadable."""
    return checkpoints.load_result(RESULT, directory)


PLANS_DIR = OUT_DIR  # a plan's cells: <plan>/<recipe>/, its tuning runs in <recipe>/tune/


def plan_result_name(plan: str, recipe: str) -> str:
    """Where ``python -m engine.evaluate variants --plan PLAN --save`` writes the evaluation
    of one recipe folder (``variants-eval-zoology-conv4-lr…``): never the grid's own file."""
    return checkpoints.result_name("variants", f"{plan}-{recipe}")


def plan_results(plan: str = "zoology", directory: Path | None = None) -> dict[str, dict]:
    """Every saved evaluation of a plan, by recipe folder (``conv4-lr…``); a file that
    cannot be read is left out."""
    root = Path(directory) if directory is not None else checkpoints.CHECKPOINT_DIR
    prefix = plan_result_name(plan, "")
    out = {}
    for path in sorted(root.glob(f"{prefix}*.json")):
        found = checkpoints.load_result(path.stem, root)
        if isinstance(found, dict) and isinstance(found.get("recall_state"), list):
            out[path.stem[len(prefix) :]] = found
    return out


def recipe_folder(tuning: list[dict]) -> str:
    """The folder of the field's recipe among a plan's tuning runs: the one sweeping rates
    with a convolution on (an ablation's folder has it off, or one rate and no tuning)."""
    return next((r["recipe"] for r in tuning if r["conv"] > 0 and len(r["lrs"]) > 1), "")


def best_lr(runs: dict[float, dict]) -> float:
    """The rate whose run scored best on the validation set, never the test set. Rates
    tied there (full attention recalls at three of four) are told apart by the training
    loss they ended on, lowest first: the run furthest past its plateau, which is the rate
    that still converges in the same steps at the grid's narrower points (full attention
    at d = 32: 0.980–0.992 at the lowest tied rate, ≥ 0.998 at the others). Then the
    first in the sweep's order."""

    def key(lr: float) -> tuple[float, float]:
        curve = runs[lr].get("loss_curve") or [[0, math.inf]]
        return runs[lr]["validation_accuracy"], -curve[-1][1]

    return max(runs, key=key)


def tuning(plan: str = "zoology", directory: Path | None = None) -> list[dict]:
    """Every learning-rate tuning run a plan has trained so far (``<plan>/<recipe>/tune``,
    ``python -m engine.train variants --plan …``): one row per run with its recipe folder,
    variant, task, width, rate, and test and validation accuracy; sorted by recipe,
    variant and rate. A JSON that cannot be read is left out (a run being written)."""
    rows = []
    root = Path(directory) if directory is not None else PLANS_DIR / plan
    for meta_path in sorted(root.glob("*/tune/*.json")):
        if checkpoints.is_timeline(meta_path):
            continue
        try:
            meta = checkpoints.load_meta(meta_path.stem, meta_path.parent)
            rows.append(
                {
                    "recipe": meta_path.parent.parent.name,
                    "variant": str(meta["variant"]),
                    "task": str(meta["task"]),
                    "width": int(meta["width"]),
                    "lr": float(meta["recipe"]["lr"]),
                    "lrs": [float(x) for x in meta["recipe"]["lrs"]],
                    "conv": int(meta["recipe"]["conv"]),
                    "accuracy": float(meta["accuracy"]),
                    "validation_accuracy": float(meta["validation_accuracy"]),
                    "status": str(meta["status"]),
                    "loss_curve": [(int(s), float(x)) for s, x in meta.get("loss_curve", [])],
                    "kept": False,
                }
            )
        except (OSError, ValueError, KeyError, TypeError, checkpoints.CheckpointError):
            continue
    rows.sort(key=lambda r: (r["recipe"], r["variant"], r["lr"]))
    for group in _groups(rows).values():  # the kept rate, once every rate is trained
        if all(lr in group for lr in next(iter(group.values()))["lrs"]):
            group[best_lr(group)]["kept"] = True
    return rows


def _groups(rows: list[dict]) -> dict[tuple, dict[float, dict]]:
    """Tuning rows by (recipe, variant), each a rate → row map in the sweep's order."""
    out: dict[tuple, dict[float, dict]] = {}
    for r in rows:
        out.setdefault((r["recipe"], r["variant"]), {})[r["lr"]] = r
    return out


def token_label(t: int) -> str:
    if t == long_range.BLANK:
        return "·"
    if t == long_range.SLOT:
        return "?"
    if t < long_range.VALUE0:
        return f"k{t - long_range.KEY0}"
    return f"v{t - long_range.VALUE0}"


def probe_batch(spec: long_range.Task, test_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The probe: the held-out examples a cell's timeline is measured on while it trains,
    and whose example 0 its maps show (the timeline's and :func:`trace`'s alike).

    One batch of ``min(PROBE_SIZE, test_size)`` drawn with the test set's seed. The copy
    task draws row by row, so there these are the test set's first rows; the other tasks
    draw column by column, so theirs are held-out examples of their own, not among those
    the table scores. (Seed 1's copy cells met 16 of them once in training: TEST_SEED.)
    """
    return spec.batch(min(PROBE_SIZE, test_size), TEST_SEED)


def trace(model: VariantModel, meta: dict, name: str, example: int = 0) -> Trace:
    """Cell ``name`` (its ``model`` and JSON ``meta``) on held-out probe example ``example``
    (:func:`probe_batch`; 0 is the one its training timeline shows), maps cropped to SHOW_N.

    The Trace holds every layer's effective map (flagged as the variant flags it), the
    tokens as labels, the asked positions, the answers, the model's predictions and
    where each answer is read from (its evidence). The card checks ``example``.
    """
    task, variant, seed = meta["task"], meta["variant"], meta["seed"]
    spec = long_range.Task(task, long_range.get(task).kind, meta["n"], meta["pairs"])
    x, y = (t[example : example + 1] for t in probe_batch(spec, meta["test"]["size"]))
    v = get(variant)
    attend = v.attend({**meta["params"], "seed": seed})
    trace = probe_trace(model, v, attend, spec, x, y, name=name, show=SHOW_N)
    trace.inputs |= {"seed": seed, "params": meta["params"], "example": example}
    trace.outputs["accuracy_test"] = meta["accuracy"]
    return trace


@torch.no_grad()
def probe_trace(model, v, attend, spec, x, y, *, name: str, show: int = SHOW_N) -> Trace:
    """``model`` (with ``attend``, variant ``v``'s function) on the example ``x [1, n]`` /
    answers ``y [1, n]`` of task ``spec``: every layer's effective map, flagged as ``v``
    declares, its first ``show`` tokens (the training timeline keeps the whole map,
    pooled), the asked positions, answers, predictions and evidence."""
    logits, maps = model(x, attend, want_weights=True)
    pred = logits.argmax(-1)[0]
    asked = (y[0] != long_range.IGNORE).nonzero().flatten().tolist()
    labels = [token_label(int(t)) for t in x[0]]
    m = min(show, spec.n)
    weights = torch.stack([w[0, :, :m, :m] for w in maps]).float().numpy()  # [L, H, m, m]
    amap = AttentionMap(
        weights=weights,
        query_labels=labels[:m],
        key_labels=labels[:m],
        kind=v.map_kind,
        layer_labels=[f"layer {i}" for i in range(len(maps))],
        **v.map_flags(Message("note.first_tokens", m=m, n=spec.n) if m < spec.n else "")
        | {"normalized": v.map_normalized and m == spec.n},  # a cropped row no longer sums to 1
    )
    return Trace(
        model=f"variant-quality:{name}",
        task=spec.name,
        inputs={"task": spec.name, "variant": v.name},
        outputs={
            "asked": asked,
            "answers": [token_label(int(y[0, i])) for i in asked],
            "evidence": [long_range.evidence(spec.kind, x[0], i) for i in asked],
            "predictions": [token_label(int(pred[i])) for i in asked],
            "accuracy_example": sum(int(pred[i] == y[0, i]) for i in asked) / max(len(asked), 1),
        },
        maps={"attention": amap},
    )
