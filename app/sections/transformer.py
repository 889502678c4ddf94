"""The Transformer page's "Does it matter?": removing each head alone, drawn from
views.causal's figure and views.transformer's rows, beside the top head's pattern."""

from __future__ import annotations

import html

import streamlit as st
from kit import chart, data_table
from kit.i18n import md_escape, t
from views.causal import ablation_figure, negligible
from views.heatmap import map_figure
from views.transformer import ablation_rows


def draw_ablation(found: dict, kind: str, kind_title: str, amap, key: str) -> None:
    """The layer × head effect of removing each head alone, then the heads that matter
    most beside the pattern of the first of them (``amap``: the page's map of ``kind``)."""
    mode = t(f"causal.mode_{found['mode']}")
    if "delta_log_prob" in found:
        said = html.escape(found["translation"], quote=False)
        title = t("transformer.fig_ablation_ours", kind=kind_title, mode=mode, translation=said)
        effect, value = {"delta_log_prob": found["delta_log_prob"][kind]}, None
        changed = found["changed"][kind]
        caption = t(
            "transformer.ablation_caption_ours",
            translation=md_escape(found["translation"]),
            log_p=f"{found['log_prob']:.2f}",
            changed=int(changed.sum()),
            total=changed.size,
            kind=kind_title,
        )
    else:
        title = t("transformer.fig_ablation_encoder", mode=mode)
        effect, value = {"shift": found["shift"]}, t("transformer.col_shift")
        caption = t("transformer.ablation_caption_encoder")
    fig = ablation_figure(effect, None, title=title, value_name=value)
    chart(fig, key=f"{key}-heads")
    st.caption(caption)
    rows, heads = ablation_rows(found, kind)
    if not rows:
        return
    left, right = st.columns([3, 2])
    with left:
        note = negligible(effect["delta_log_prob"]) if "delta_log_prob" in effect else None
        st.markdown(note or t("transformer.top_heads"))
        data_table(rows)
    layer, head = heads[0]
    title = t("transformer.fig_top_head", layer=layer, head=head)
    fig = map_figure(amap, layer, head, title=title)
    chart(fig, f"{key}-top", right, share=0.4, width="stretch")
