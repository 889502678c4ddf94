"""The faithfulness meter drawn beside a page's attention figure (Alignment, Memory,
Retrieval): the figure (views.faithfulness), one verdict line, a table of ρ and top-1, and
what the shipped evaluation measured over a whole set.
"""

from __future__ import annotations

import streamlit as st
from kit import chart, data_table, notes
from kit.i18n import md_escape, t
from views.faithfulness import (
    mean_text,
    memory_measured,
    memory_rows,
    memory_verdict,
    meter_figure,
    nmt_grid,
    nmt_measured,
    nmt_rows,
    retrieval_measured,
    retrieval_rows,
)
from views.memory import WIDE_SENTENCE_CHARS, sentence_labels


def measured_line(text: str, command: str) -> None:
    st.caption(t("faithfulness.measured_by", text=text, command=command))


def draw_nmt(meter: dict, key: str) -> None:
    """α beside erasing each source word, for every word of the translation shown."""
    notes("faithfulness").caption(t("faithfulness.nmt_intro"))
    chart(nmt_grid(meter["found"], meter["src"], meter["tgt"]), key)
    mean = meter["mean"]
    verdict = dict(occlusion=mean_text(mean["occlusion"]), gxi=mean_text(mean["grad_x_input"]))
    st.markdown(t("faithfulness.nmt_verdict", **verdict))
    data_table(nmt_rows(meter))
    if meter["measured"]:
        measured_line(nmt_measured(meter["measured"]), meter["measured"]["command"])


def draw_memory(meter: dict, trace, key: str) -> None:
    """p_i at every hop beside Δ log p(answer) when fact i is removed from memory."""
    found, amap, out = meter["found"], trace.maps["memory"], trace.outputs
    candidates, changes = out["candidates"], meter["changes"]
    hops = [t("memory.hop_n", n=k + 1) for k in range(found.hops.shape[0])]
    columns = [str(k + 1) for k in range(len(hops))]  # under one axis title: "hop"
    after = [
        f" → {candidates[a]}" if c else ""
        for a, c in zip(found.answer_without, changes, strict=True)
    ]
    notes("faithfulness").caption(t("faithfulness.memory_intro", answer=candidates[found.answer]))
    fig = meter_figure(
        # The page's width, not a column's: a bAbI fact whole ("John travelled to t…" hid
        # the room, all that told two facts apart).
        sentence_labels(amap.key_labels, found.support, WIDE_SENTENCE_CHARS),
        dict(zip(columns, found.hops, strict=True)),
        {t("faithfulness.delta"): found.delta},
        title=t("faithfulness.fig_memory"),
        value_name="p",
        attention_title=t("views.memory.hop"),
        effect_title=t("faithfulness.delta_axis"),
        notes_text=after,
        changed=changes,
    )
    chart(fig, key)
    st.markdown(memory_verdict(meter, amap.key_labels, candidates))
    data_table(memory_rows(meter, hops, amap.key_labels, candidates))
    if meter["measured"]:
        measured_line(memory_measured(meter["measured"]), meter["measured"]["command"])


def draw_retrieval(meter: dict, trace, key: str) -> None:
    """The chat model's mass on each passage beside Δ log p(its answer) when it is dropped."""
    found, passages = meter["found"], trace.outputs["passages"]
    notes("faithfulness").caption(
        t("faithfulness.retrieval_intro", log_p=f"{found.answer_log_prob:.2f}")
    )
    support = [i for i, p in enumerate(passages) if p["support"]]
    fig = meter_figure(
        # As long as the bars leave room: a bAbI passage whole, a book's window cut short.
        sentence_labels([p["text"] for p in passages], support, WIDE_SENTENCE_CHARS),
        {t("faithfulness.mass"): found.attention},
        {t("faithfulness.delta"): found.delta, t("faithfulness.grad_x_input"): found.grad_x_input},
        title=t("faithfulness.fig_retrieval"),
        value_name=t("faithfulness.mass"),
        attention_title="",
        effect_title=t("faithfulness.delta_axis"),
    )
    chart(fig, key)
    top, need = int(found.attention.argmax()), int(found.delta.argmax())
    facts = dict(fact=md_escape(f"[{top + 1}] {passages[top]['text']}"))
    facts |= dict(need=md_escape(f"[{need + 1}] {passages[need]['text']}"))
    verdict = "faithfulness.passage_is_needed" if top == need else "faithfulness.passage_not_needed"
    st.markdown(t(verdict, delta=f"{found.delta[need]:.2f}", **facts))
    data_table(retrieval_rows(meter, passages))
    if meter["measured"]:
        for task, record in sorted(meter["measured"]["tasks"].items(), key=lambda kv: int(kv[0])):
            measured_line(retrieval_measured(task, record), meter["measured"]["command"])
