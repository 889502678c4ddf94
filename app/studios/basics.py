"""Attention basics: softmax(QKᵀ/√d_k)V for the user's sentence, one step at a time."""

import numpy as np
import streamlit as st
from kit import export_buttons, friendly_errors, url_default, url_sync
from views.heatmap import attention_figure, heatmap
from views.walkthrough import entropy_figure

from engine.text import InputError
from engine.walkthrough import D_MODEL_CHOICES, MAX_HEADS, MAX_TOKENS, WalkthroughConfig

EXAMPLE = "The animal didn't cross the street because it was too tired"

st.title("Attention basics")
st.caption(
    "Projections here are **seeded random**, not trained: the page shows the arithmetic of "
    "scaled dot-product attention, not what a trained model has learned."
)

text = st.text_area(
    f"Sentence (up to {MAX_TOKENS} tokens)",
    value=url_default("text", EXAMPLE),
    key="basics_text",
    height=80,
)
c1, c2, c3, c4 = st.columns(4)
d_default = url_default("d_model", 64, int)
d_model = c1.selectbox(
    "d_model",
    D_MODEL_CHOICES,
    index=D_MODEL_CHOICES.index(d_default) if d_default in D_MODEL_CHOICES else 2,
    help="Width of the token embeddings.",
)
head_choices = [h for h in (1, 2, 4, 8, 16) if h <= MAX_HEADS and d_model % h == 0]
h_default = url_default("heads", 4, int)
n_heads = c2.selectbox(
    "heads",
    head_choices,
    index=head_choices.index(h_default) if h_default in head_choices else 0,
    help=f"d_k = d_model / heads; 1–{MAX_HEADS} heads.",
)
head = c3.number_input("head shown", 0, n_heads - 1, min(url_default("head", 0, int), n_heads - 1))
seed = c4.number_input("seed", 0, 10_000, url_default("seed", 0, int))
url_sync(text=text[:500], d_model=d_model, heads=n_heads, head=head, seed=seed)


@st.cache_data(max_entries=64, show_spinner=False)
def run(text: str, d_model: int, n_heads: int, head: int, seed: int):
    from engine.walkthrough import walkthrough

    return walkthrough(text, WalkthroughConfig(d_model, n_heads, head, seed))


with friendly_errors("the walkthrough"):
    if not text.strip():
        raise InputError("Type a sentence above to begin (or keep the example).")
    trace = run(text, int(d_model), int(n_heads), int(head), int(seed))

tokens = trace.inputs["tokens"]
d_k = trace.inputs["d_k"]
v = trace.vectors
dims = [f"d{i}" for i in range(d_model)]
kdims = [f"d{i}" for i in range(d_k)]
st.markdown(
    f"**{len(tokens)} tokens** · d_model = {d_model} · {n_heads} heads · "
    f"d_k = {d_k} · showing head {head}"
)

STEPS = [
    "1 · Embeddings X",
    "2 · Queries, keys, values",
    "3 · Scores QKᵀ",
    "4 · Scaling by 1/√d_k",
    "5 · Softmax",
    "6 · Weighted values",
    "Without the scaling",
    "With a causal mask",
    "All heads",
]
# One step on screen at a time: a teacher walks through them, and the browser redraws
# two or three figures per edit instead of sixteen (the update budget is 500 ms).
step_default = url_default("step", 4, int)
step = (
    st.segmented_control(
        "Step",
        STEPS,
        default=STEPS[step_default if 0 <= step_default < len(STEPS) else 4],
        key="basics_step",
    )
    or STEPS[4]
)
url_sync(step=STEPS.index(step))
st.header(step)
m = trace.metrics

if step == STEPS[0]:
    st.caption("One fixed random vector per word, plus the sinusoidal positional encoding.")
    st.plotly_chart(
        heatmap(
            v["X"],
            dims,
            tokens,
            title="X = embedding + PE",
            x_title="dimension",
            y_title="token",
            value_name="x",
            diverging=True,
        ),
        key="fig-x",
    )
elif step == STEPS[1]:
    st.caption(f"Q = X W^Q, K = X W^K, V = X W^V for head {head}: each is tokens × d_k.")
    cols = st.columns(3)
    for col, name in zip(cols, ("Q", "K", "V"), strict=True):
        col.plotly_chart(
            heatmap(
                v[name],
                kdims,
                tokens,
                title=name,
                x_title="dimension",
                y_title="token",
                value_name=name.lower(),
                diverging=True,
                annotate=False,
            ),
            key=f"fig-{name}",
        )
elif step == STEPS[2]:
    st.caption("score_ij = q_i · k_j: how well query i matches key j.")
    st.plotly_chart(
        heatmap(
            v["scores"], tokens, tokens, title="scores = Q Kᵀ", value_name="score", diverging=True
        ),
        key="fig-scores",
    )
elif step == STEPS[3]:
    st.caption(
        f"Dot products of d_k = {d_k} random components grow like √d_k: here their spread "
        f"is {m['score_std']:.2f}, and {m['scaled_std']:.2f} after dividing by "
        f"√{d_k} = {np.sqrt(d_k):.2f}."
    )
    st.plotly_chart(
        heatmap(
            v["scaled"], tokens, tokens, title="QKᵀ / √d_k", value_name="score", diverging=True
        ),
        key="fig-scaled",
    )
elif step == STEPS[4]:
    st.caption("Each row becomes a distribution over the keys: the attention weights α.")
    st.plotly_chart(
        attention_figure(trace.maps["softmax"], title="α = softmax(QKᵀ/√d_k)"), key="fig-softmax"
    )
elif step == STEPS[5]:
    st.caption("Each output row is Σ_j α_ij v_j: a mixture of the value vectors.")
    st.plotly_chart(
        heatmap(
            v["output"],
            kdims,
            tokens,
            title="output = α V",
            x_title="dimension",
            y_title="token",
            value_name="out",
            diverging=True,
        ),
        key="fig-out",
    )
elif step == STEPS[6]:
    st.markdown(
        f"Without 1/√d_k the softmax **saturates**: the mean largest weight per row rises "
        f"from **{m['mean_max_weight']:.2f}** to **{m['mean_max_weight_unscaled']:.2f}**, "
        f"and the mean row entropy falls from **{m['mean_entropy']:.2f}** to "
        f"**{m['mean_entropy_unscaled']:.2f}** nats (uniform = {m['uniform_entropy']:.2f}). "
        "Saturated rows have near-zero gradients, which is why the paper scales."
    )
    c1, c2 = st.columns(2)
    c1.plotly_chart(
        attention_figure(trace.maps["unscaled"], title="softmax(QKᵀ), unscaled"), key="fig-unscaled"
    )
    c2.plotly_chart(
        entropy_figure(tokens, v["entropy"], v["entropy_unscaled"], m["uniform_entropy"]),
        key="fig-entropy",
    )
elif step == STEPS[7]:
    st.caption("A decoder may not look ahead: keys after the query get exactly zero weight.")
    st.plotly_chart(
        attention_figure(trace.maps["causal"], title="causal softmax(QKᵀ/√d_k)"), key="fig-causal"
    )
else:
    amap = trace.maps["all_heads"]
    cols = st.columns(min(n_heads, 4))
    for h in range(n_heads):
        cols[h % len(cols)].plotly_chart(
            attention_figure(amap, 0, h, title=f"head {h}", annotate=False, height=320),
            key=f"fig-head-{h}",
        )

with st.expander("Export this trace"):
    export_buttons(trace, "attention-basics")
