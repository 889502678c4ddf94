"""Section: the decoding step by step, and inside the score at the chosen step.

A fragment: moving the step slider redraws this section only.
"""

import numpy as np
import streamlit as st
from studios.alignment.common import md
from views.alignment import additive_parts_figure, steps_animation, vector_strip


@st.fragment
def section(card, trace, src: list[str]):
    alpha = trace.maps["alignment"].weights[0, 0]
    steps = trace.outputs["steps"]
    st.header("Step through the decoding")
    st.plotly_chart(steps_animation(alpha, src, steps), key="nmt-anim")
    i = st.slider("Decoding step i", 1, len(steps), 1, key="nmt-step") - 1
    top = np.argsort(alpha[i])[::-1][:3]
    st.markdown(
        f"At step **{i + 1}** the decoder emits **“{md(steps[i])}”**, attending most to "
        + ", ".join(f"“{md(src[j])}” ({alpha[i, j]:.2f})" for j in top)
        + "."
    )
    v = trace.vectors
    c1, c2 = st.columns(2)
    c1.plotly_chart(
        vector_strip(v["contexts"][i], "context c_i = Σ_j α_ij h_j", "c_i"), key="nmt-ctx"
    )
    c2.plotly_chart(
        vector_strip(v["states"][i], "decoder state s_{i−1} (the query)", "s_{i−1}"),
        key="nmt-state",
    )
    st.header("Inside the score at this step")
    if "tanh" not in v:
        st.info(
            f"This model scores with **{card.title}**, which has no W_a s / U_a h parts; "
            "here is e_ij at this step. Pick the additive model for the parts."
        )
        st.plotly_chart(vector_strip(v["e"][i], f"e_ij at step {i + 1}", "e"), key="nmt-e")
        return
    st.plotly_chart(
        vector_strip(
            v["W_a s"][i], f"W_a s_{{i−1}} at step {i + 1} (same for every source word)", "W_a s"
        ),
        key="nmt-was",
    )
    st.plotly_chart(additive_parts_figure(v, alpha[i], src, i), key="nmt-parts")
    st.caption(
        "Each row is a source word j: U_a h_j is fixed for the sentence; adding W_a s_{i−1} "
        "and squashing with tanh, then weighting by v_a and summing the row gives e_ij; "
        "the softmax over the rows gives α_ij."
    )
