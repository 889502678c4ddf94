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
import streamlit as st
from kit import chart, data_table
from kit.i18n import t
from kit.url import url_default

from views.chat import head_labels, head_map_figure
from views.heatmap import heatmap


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
    grouped = n_kv_heads is not None
    small = n_layers * n_heads <= 32  # a small grid: its numbers in the cells
    fig = heatmap(
        np.round(z, 4),
        head_labels(n_heads, n_kv_heads) if grouped else [f"H{h}" for h in range(n_heads)],
        layer_labels(n_layers),
        title=title,
        x_title=t("chat.fig_query_head") if grouped else t("causal.axis_head"),
        y_title=t("chat.fig_layer"),
        value_name=value_name or t("causal.value_delta_log_p"),
        diverging=signed,
        zmin=None if signed else 0.0,
        annotate=False,
    )
    if small:  # three decimals: effects of a few thousandths are common and must not read "0"
        fig.update_traces(text=[[f"{v:+.3f}" if signed else f"{v:.3f}" for v in row] for row in z])
        fig.update_traces(texttemplate="%{text}")
    return fig


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


def draw_faithful(found, layer: int, caption: str, key: str) -> None:
    """The meter for one output: the scaled columns, a one-line verdict against occlusion,
    the agreement table, and the raw numbers per token."""
    if found.stopped:
        st.info(t("causal.faithful_stopped"))
        return
    fig = faithful_figure(found.scaled(layer), found.tokens, layer, found.output)
    chart(fig, key=f"{key}-figure")
    verdict = {r: t(f"causal.verdict_{v}") for r, v in found.verdict(layer).items()}
    st.markdown(t("causal.faithful_verdict", layer=layer, **verdict))
    data_table(agreement_rows(found.agreement(layer), layer))
    st.caption(caption)
    with st.expander(t("causal.faithful_numbers")):
        rows = found.readings(layer) | found.attributions()
        data_table(token_rows(found.tokens, rows, layer))


def draw_ablation(found: dict, chat, head_types: dict, prompt_map, k: int) -> None:
    """The every-head sweep: the layer × head effects, what was removed from what, the
    heads that matter most beside their head-type scores, and the top head's pattern
    (``prompt_map``: the prompt's map, the sink hidden)."""
    if found["stopped"]:
        st.info(t("causal.stopped", done=len(found["layers_done"]), total=chat.n_layers))
    chart(ablation_figure(found, chat.n_kv_heads), key="causal-ablation")
    st.caption(
        t(
            "causal.ablation_caption",
            answer=found["answer"],
            log_p=f"{found['log_prob']:.2f}",
            loss=f"{found['loss']:.2f}",
            n=found["n_tokens"],
            seconds=f"{found['seconds']:.0f}",
        )
    )
    rows = top_heads(found, head_types, k)
    if not rows:
        return
    st.markdown(t("causal.top_heads"))
    data_table(rows)
    layer, head = (int(x[1:]) for x in rows[0][t("causal.col_head")].split())
    title = t("causal.fig_top_head", layer=layer, head=head)
    weights = prompt_map.weights[layer, head]
    chart(head_map_figure(weights, prompt_map.key_labels, title), key="causal-top-map")


def pair_form(d, sweeps, limit: int, residual: int) -> tuple:
    """The clean/corrupted pair, the two answers and the sweep, typed in one form (each
    field in the link): ``(clean, corrupted, answer, wrong, sweep)``."""
    with st.form("causal-pair", border=False):
        clean = st.text_input(
            t("causal.clean"), url_default("clean", d.clean, key="causal-clean"), key="causal-clean"
        )
        corrupted = st.text_input(
            t("causal.corrupted"),
            url_default("corrupted", d.corrupted, key="causal-corrupted"),
            key="causal-corrupted",
        )
        c1, c2, c3 = st.columns([2, 2, 3])
        answer = c1.text_input(
            t("causal.answer"),
            url_default("answer", d.answer, key="causal-answer"),
            key="causal-answer",
            help=t("causal.answer_help"),
        )
        wrong = c2.text_input(
            t("causal.wrong"), url_default("wrong", d.wrong, key="causal-wrong"), key="causal-wrong"
        )
        sweep = c3.radio(
            t("causal.sweep"),
            sweeps,
            key="causal-sweep",
            format_func=lambda s: t(f"causal.sweep_{s}"),
            horizontal=True,
            help=t("causal.sweep_help", heads=limit, positions=residual),
        )
        st.form_submit_button(t("causal.run_patch"), type="primary")
    return clean, corrupted, answer, wrong, sweep


def draw_patching(found: dict, chat) -> None:
    if found["stopped"]:
        st.info(t("causal.stopped_patch"))
    chart(patching_figure(found, chat.n_heads, chat.n_kv_heads), key="causal-patching")
    st.caption(t("causal.patching_caption", seconds=f"{found['seconds']:.0f}"))
