"""Section: the decoding step by step, and inside the score at the chosen step.

Moving the step slider reruns only the part below it (a fragment): the animation, which
does not depend on the step, is neither rebuilt nor redrawn.
"""

import numpy as np
import streamlit as st
from kit import chart, engine_text, t, url_default, url_sync
from studios.alignment.common import md
from views.alignment import additive_parts_figure, steps_animation, vector_strip


def section(card, trace, src: list[str]):
    st.header(t("alignment.steps_header"))
    alpha = trace.maps["alignment"].weights[0, 0]
    chart(steps_animation(alpha, src, trace.outputs["steps"]), key="nmt-anim")
    at_step(card, trace, src)


@st.fragment
def at_step(card, trace, src: list[str]):
    alpha = trace.maps["alignment"].weights[0, 0]
    steps = trace.outputs["steps"]
    first = url_default("step", 1, int, key="nmt-step", lo=1, hi=len(steps))
    i = st.slider(t("alignment.step_i"), 1, len(steps), first, key="nmt-step") - 1
    url_sync(step=i + 1)
    top = np.argsort(alpha[i])[::-1][:3]
    most = ", ".join(f"“{md(src[j])}” ({alpha[i, j]:.2f})" for j in top)
    st.markdown(t("alignment.step_text", i=i + 1, word=md(steps[i]), most=most))
    v = trace.vectors
    c1, c2 = st.columns(2)
    chart(vector_strip(v["contexts"][i], t("alignment.context"), "c_i"), "nmt-ctx", c1)
    chart(
        vector_strip(v["states"][i], t("alignment.state"), "s_{i−1}"),
        "nmt-state",
        c2,
    )
    st.header(t("alignment.inside_header"))
    if "tanh" not in v:
        st.info(t("alignment.no_parts", title=engine_text(card.title)))
        chart(vector_strip(v["e"][i], t("alignment.e_at", i=i + 1), "e"), key="nmt-e")
        return
    chart(
        vector_strip(v["W_a s"][i], t("alignment.was_at", i=i + 1), "W_a s"),
        key="nmt-was",
    )
    chart(additive_parts_figure(v, alpha[i], src, i), key="nmt-parts")
    st.caption(t("alignment.parts_caption"))
