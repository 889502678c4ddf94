"""Figures of the causal checks: what changes when a head is removed, when a clean
activation is patched in, what each layer would already say (the logit lens), and whether
attention over the input tokens ranks them as removing them does (the faithfulness meter).
The Chat page draws them all; the Transformer page draws the ablation and the meter.

Effects are signed, so they get the diverging scale of the map vocabulary, named by their
quantity; the lens's probabilities are on 0–1.
"""

from __future__ import annotations

import html

import numpy as np
from kit.i18n import t

from views.chat import head_labels, layer_positions
from views.heatmap import heatmap

# The least half-range of an effect map's scale, in nats: a change of log p by 0.1 (p by
# about 10 %). Scaled to its own largest value, a sweep whose every head changed log p by
# under 0.005 coloured −0.004 as deep as a head the model cannot do without.
EFFECT_FLOOR = 0.1


def layer_labels(n: int) -> list[str]:
    return [f"L{i}" for i in range(n)]


def ablation_figure(
    found: dict,
    n_kv_heads: int | None,
    *,
    title: str | None = None,
    value_name: str | None = None,
):
    """The effect of ablating each head alone, layer × head: ``found["delta_log_prob"]``
    (signed: the diverging scale centred on 0), or ``found["shift"]`` (MiniLM's 1 − cos,
    never negative: the sequential scale from 0). Heads are named with their key/value
    group where there are groups (``n_kv_heads``); the chat model's title by default."""
    signed = "delta_log_prob" in found
    z = np.asarray(found["delta_log_prob" if signed else "shift"], dtype=float)
    n_layers, n_heads = z.shape
    if title is None:
        mode = t(f"causal.mode_{found['mode']}")
        title = t("causal.fig_ablation", mode=mode, answer=found["answer"])
    heads = head_labels(n_heads, n_kv_heads) if n_kv_heads else [f"H{h}" for h in range(n_heads)]
    head_title = t("chat.fig_query_head") if n_kv_heads else t("causal.axis_head")
    span = max(float(np.nanmax(np.abs(z), initial=0.0)), EFFECT_FLOOR) if signed else None
    # The longer axis across a wide screen: the chat model's 30 layers across, as its
    # head-type grid; the Transformer's 2 layers and MiniLM's 6 down, as their Layers × heads.
    across = n_layers > n_heads
    shown = z.T if across else z
    axes = (layer_positions(n_layers), heads) if across else (heads, layer_labels(n_layers))
    titles = (t("chat.fig_layer"), head_title) if across else (head_title, t("chat.fig_layer"))
    fig = heatmap(
        np.round(shown, 4),
        *axes,
        title=title,
        x_title=titles[0],
        y_title=titles[1],
        value_name=value_name or t("causal.value_delta_log_p"),
        diverging=signed,
        zmin=-span if signed else 0.0,
        zmax=span,
        annotate=False,
    )
    if signed and span == EFFECT_FLOOR:  # pale by design, and said: no "uniform" finding
        fig.update_traces(meta=dict(least_range=EFFECT_FLOOR))
    if n_layers * n_heads <= 32:  # a small grid: three decimals, as a few thousandths are
        # common effects and must not read "0"
        text = [[f"{v:+.3f}" if signed else f"{v:.3f}" for v in row] for row in shown]
        fig.update_traces(text=text, texttemplate="%{text}")
    return fig


def negligible(delta_log_prob) -> str | None:
    """A sentence for a whole sweep in which no head matters alone (every |Δ log p| under
    ``EFFECT_FLOOR``), said where its "heads that matter most" would be; else None."""
    z = np.asarray(delta_log_prob, dtype=float)
    if np.isnan(z).any():  # a stopped sweep: the heads not reached might matter
        return None
    largest = float(np.abs(z).max(initial=0.0))
    if largest >= EFFECT_FLOOR:
        return None
    return t("causal.negligible", largest=f"{largest:.3f}", floor=EFFECT_FLOOR)


def patching_figure(found: dict, n_heads: int, n_kv_heads: int):
    """The normalised logit difference of each patch: layer × head, or layer × position,
    layers across (as ROME's causal traces and the head-type grid), heads or tokens down."""
    z = np.asarray(found["metric"], dtype=float)
    heads = found["what"] == "heads"
    ys = head_labels(n_heads, n_kv_heads) if heads else list(found["tokens"])
    title = t(
        "causal.fig_patching_heads" if heads else "causal.fig_patching_residual",
        clean=f"{found['clean_diff']:.2f}",
        corrupted=f"{found['corrupted_diff']:.2f}",
    )
    return heatmap(
        np.round(z.T, 4),
        layer_positions(z.shape[0]),
        ys,
        title=title,
        x_title=t("chat.fig_layer"),
        y_title=t("chat.fig_query_head") if heads else t("causal.axis_position"),
        value_name=t("causal.value_restored"),
        diverging=True,
        annotate=False,
    )


def lens_figure(found: dict):
    """p_l(token written) after each layer (row 0: the embeddings), per written token."""
    prob = np.asarray(found["prob"], dtype=float)
    rows = [t("causal.row_embeddings")] + layer_labels(prob.shape[0] - 1)
    title = t("causal.fig_lens")  # figure() wraps a title to the page's width
    return heatmap(
        np.round(prob, 4),
        list(found["targets"]),
        rows,
        title=title,
        x_title=t("causal.axis_written"),
        y_title=t("chat.fig_layer"),
        value_name=t("causal.value_prob"),
        zmin=0.0,
        zmax=1.0,
        annotate=False,
    )


def top_heads(found: dict, types: dict, k: int) -> list[dict]:
    """The ``k`` heads whose ablation lowers log p(answer) most, beside their head-type
    scores (previous-token, induction: the head grid's types) — what the head looks like
    next to what removing it does."""
    z = np.asarray(found["delta_log_prob"], dtype=float)
    flat = np.where(np.isnan(z), np.inf, z).ravel()
    n_heads = z.shape[1]
    rows = []
    for i in np.argsort(flat, kind="stable")[:k]:
        if not np.isfinite(flat[i]):
            break
        layer, head = divmod(int(i), n_heads)
        rows.append(
            {
                t("causal.col_head"): f"L{layer} H{head}",
                t("causal.col_delta_log_p"): round(float(z[layer, head]), 3),
                t("causal.col_delta_loss"): round(float(found["delta_loss"][layer, head]), 3),
                t("causal.col_previous"): round(float(types["previous"][layer, head]), 2),
                t("causal.col_induction"): round(float(types["induction"][layer, head]), 2),
            }
        )
    return rows


def faithful_figure(scaled: dict, tokens, layer: int, output: str):
    """Input tokens as rows; each reading and attribution a column, divided by its largest
    |value| (``TokenFaithfulness.scaled``): one −1 … 1 scale, so the columns read side by
    side. The tokens go down the rows: the figure's height labels many more of them than
    its narrow width would."""
    names = list(scaled)
    return heatmap(
        np.round(np.stack([scaled[n] for n in names], axis=1), 4),
        [t(f"causal.row_{n}", layer=layer) for n in names],
        list(tokens),
        title=t("causal.fig_faithful", output=html.escape(output, quote=False)),
        x_title="",
        y_title=t("causal.axis_input"),
        value_name=t("causal.value_scaled"),
        diverging=True,
        annotate=False,
    )


def agreement_rows(agreement: dict, layer: int) -> list[dict]:
    """One row per (reading, attribution): Spearman's ρ ("–" where a side is constant)
    and whether the most-attended token is the most important one."""
    return [
        {
            t("causal.col_reading"): t(f"causal.row_{reading}", layer=layer),
            t("causal.col_attribution"): t(f"causal.row_{name}", layer=layer),
            t("causal.col_rho"): None if a.spearman is None else round(a.spearman, 3),
            t("causal.col_top1"): t("causal.yes") if a.top1 else t("causal.no"),
        }
        for (reading, name), a in agreement.items()
    ]


def token_rows(tokens, rows: dict, layer: int) -> list[dict]:
    """The numbers behind the figure, unscaled: one row per input token."""
    out = []
    for j, token in enumerate(tokens):
        row = {t("causal.col_token"): token}
        for name, values in rows.items():
            if values is not None:
                row[t(f"causal.row_{name}", layer=layer)] = round(float(values[j]), 4)
        out.append(row)
    return out
