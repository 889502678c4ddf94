"""Figures of the Chat page's causal checks: what changes when a head is removed, when a
clean activation is patched in, and what each layer would already say (the logit lens).

Effects are signed, so they get the diverging scale of the map vocabulary, named by their
quantity; the lens's probabilities are on 0–1.
"""

from __future__ import annotations

import numpy as np
from kit.i18n import t

from views.chat import head_labels
from views.heatmap import heatmap


def layer_labels(n: int) -> list[str]:
    return [f"L{i}" for i in range(n)]


def ablation_figure(found: dict, n_kv_heads: int):
    """Δ log p(answer) of ablating each head alone, layer × head."""
    z = np.asarray(found["delta_log_prob"], dtype=float)
    n_layers, n_heads = z.shape
    title = t("causal.fig_ablation", mode=t(f"causal.mode_{found['mode']}"), answer=found["answer"])
    return heatmap(
        np.round(z, 4),
        head_labels(n_heads, n_kv_heads),
        layer_labels(n_layers),
        title=title,
        x_title=t("chat.fig_query_head"),
        y_title=t("chat.fig_layer"),
        value_name=t("causal.value_delta_log_p"),
        diverging=True,
        annotate=False,
    )


def patching_figure(found: dict, n_heads: int, n_kv_heads: int):
    """The normalised logit difference of each patch: layer × head, or layer × position."""
    z = np.asarray(found["metric"], dtype=float)
    heads = found["what"] == "heads"
    xs = head_labels(n_heads, n_kv_heads) if heads else list(found["tokens"])
    title = t(
        "causal.fig_patching_heads" if heads else "causal.fig_patching_residual",
        clean=f"{found['clean_diff']:.2f}",
        corrupted=f"{found['corrupted_diff']:.2f}",
    )
    return heatmap(
        np.round(z, 4),
        xs,
        layer_labels(z.shape[0]),
        title=title,
        x_title=t("chat.fig_query_head") if heads else t("causal.axis_position"),
        y_title=t("chat.fig_layer"),
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


def top_heads(found: dict, types: dict, k: int = 5) -> list[dict]:
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
