"""The Retrieval page's parts a lesson step shows too: the answer, the passages and the
section's figure (views.retrieval), and MemN2N beside the chat model on one story.
"""

from __future__ import annotations

import streamlit as st
from kit import chart, data_table
from kit.i18n import md_escape, t
from views.memory import hops_figure
from views.retrieval import (
    addressing_of,
    passage_labels,
    passages_html,
    reading_figure,
    which_label,
)

from sections.chat import inert


def draw_lesson(shown: dict, key: str) -> None:
    """A lesson step's retrieval view (``state.retrieval.lesson``): the answer, the passages
    in the prompt and the section's figures, as the page draws them."""
    if "missing" in shown:
        st.info(t("retrieval.missing", path=shown["missing"]))
        return
    trace = shown["trace"]
    question = md_escape(trace.inputs.get("question", ""))
    said = inert(trace.outputs["answer"]) or t("retrieval.nothing_written")
    st.markdown(t("retrieval.qa", question=question, answer=said))
    if shown["verdict"]:  # body text: presenting hides captions (studios.retrieval.expected)
        st.markdown(shown["verdict"])
    if shown["listed"]:
        st.html(passages_html(shown["listed"]))
    section = shown["section"]
    if section == "addressing":
        fig = addressing_of(shown["found"], shown["store"].passages, shown["order"])
        chart(fig, f"{key}-addressing")
    elif section == "side-by-side" and "side" in shown:
        draw_side(shown["side"], key)
    elif section == "measured":
        if shown["measured"] is None:
            st.info(t("retrieval.no_evaluation", command=shown["command"]))
        else:
            data_table(shown["measured"])
    elif "mass" in shown:
        labels = passage_labels(trace.outputs["passages"])
        title = t("retrieval.fig_reading", which=which_label(shown["layer"], shown["head"]))
        chart(reading_figure(shown["mass"], labels, shown["written"], title), f"{key}-reading")


def draw_side(side: dict, key: str) -> None:
    """MemN2N's hop weights over the story's sentences, then the chat model's attention mass
    over the same sentences as passages (``state.retrieval.side``), one above the other."""
    name, memory = side["memn2n"]
    out, chat_trace = memory.outputs, side["trace"]
    facts = dict(name=name, answer=md_escape(out["answer"]), p=out["probability"])
    st.markdown(t("retrieval.side_memn2n", hops=memory.maps["memory"].shape[0], **facts))
    chart(hops_figure(memory.maps["memory"], out["support"]), f"{key}-memn2n")
    said = inert(chat_trace.outputs["answer"]) or t("retrieval.nothing_written")
    st.markdown(t("retrieval.side_chat", answer=said))
    labels = passage_labels(chat_trace.outputs["passages"])
    title = t("retrieval.fig_side_chat")
    fig = reading_figure(side["mass"], labels, side["written"], title)
    chart(fig, f"{key}-chat")
    if side["verdict"]:
        st.markdown(side["verdict"])
