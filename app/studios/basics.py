"""Attention basics: softmax(QKᵀ/√d_k)V for the user's sentence, one step at a time."""

import streamlit as st
from kit import (
    chart,
    controls,
    fragment,
    friendly_errors,
    page_bottom,
    page_top,
    t,
    url_choice,
    url_default,
    url_sync,
)
from kit.errors import PageError, halt
from kit.textbox import gated_text, words_unit
from views import walkthrough as view

from engine.text import word_limits
from engine.walkthrough import (
    D_MODEL_CHOICES,
    MAX_HEADS,
    MAX_TOKENS,
    WalkthroughConfig,
    walkthrough,
)

EXAMPLE = "The animal didn't cross the street because it was too tired"

page_top("basics")
st.title(t("basics.title"))
st.caption(t("basics.caption"))
st.latex(
    r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V"
)

ctl = controls()
text = gated_text(
    ctl.text_area,
    t("basics.sentence", n=MAX_TOKENS),
    url_default("text", EXAMPLE, key="basics_text"),
    key="basics_text",
    limits=word_limits(MAX_TOKENS),
    unit=words_unit(),
    height=80,
)
c1, c2, c3, c4 = ctl.columns(4)
d_model = url_choice(
    c1.selectbox,
    "d_model",
    "d_model",
    D_MODEL_CHOICES,
    default=D_MODEL_CHOICES.index(64),
    help=t("basics.d_model_help"),
    key="basics_d_model",
)
head_choices = [h for h in (1, 2, 4, 8, 16) if h <= MAX_HEADS and d_model % h == 0]
n_heads = url_choice(
    c2.selectbox,
    "heads",
    t("basics.heads"),
    head_choices,
    default=head_choices.index(4) if 4 in head_choices else 0,
    help=t("basics.heads_help", n=MAX_HEADS),
    key="basics_heads",
)
# Keyed, so the widget keeps its identity (and the value being typed) across reruns; the
# URL only seeds it. Fewer heads than before: the head shown moves to the last one.
if st.session_state.get("basics_head", 0) > n_heads - 1:
    st.session_state["basics_head"] = n_heads - 1
head = c3.number_input(
    t("basics.head_shown"),
    0,
    n_heads - 1,
    url_default("head", 0, int, key="basics_head", lo=0, hi=n_heads - 1),
    key="basics_head",
)
seed = c4.number_input(
    t("basics.seed"),
    0,
    10_000,
    url_default("seed", 0, int, key="basics_seed", lo=0, hi=10_000),
    key="basics_seed",
)
url_sync(text=text, head=head, seed=seed)


@st.cache_data(max_entries=64, show_spinner=False)
def run(text: str, d_model: int, n_heads: int, head: int, seed: int):

    return walkthrough(text, WalkthroughConfig(d_model, n_heads, head, seed))


if text is None:
    halt()  # over a limit: the box has said so; the controls above stay
with friendly_errors(t("basics.what")):
    if not text.strip():
        raise PageError(t("basics.empty"))
    trace = run(text, int(d_model), int(n_heads), int(head), int(seed))

st.markdown(
    t(
        "basics.summary",
        n=len(trace.inputs["tokens"]),
        d_model=d_model,
        heads=n_heads,
        d_k=trace.inputs["d_k"],
        head=head,
    )
)


# One step on screen at a time, and a step change reruns only this part: a teacher walks
# through the steps, and the browser redraws one or two figures per edit, not sixteen.
@fragment
def steps(trace) -> None:
    step = url_choice(
        st.segmented_control,
        "step",
        t("basics.step"),
        view.STEPS,
        ids=range(len(view.STEPS)),  # a link names a step by its number
        default=4,
        key="basics_step",
        format_func=view.step_name,
    )
    index = view.STEPS.index(step)
    st.header(view.step_name(step))
    text, figures = view.step(index, trace)
    if text:
        (st.markdown if index == 6 else st.caption)(text)
    cols = st.columns(min(len(figures), 4)) if len(figures) > 1 else [st.container()]
    for i, (key, fig) in enumerate(figures):
        chart(fig, key, cols[i % len(cols)], share=1 / len(cols))


steps(trace)
page_bottom("attention-basics", trace)
