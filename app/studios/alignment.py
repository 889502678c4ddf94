"""Alignment studio: RNNsearch (Bahdanau, Cho & Bengio 2014) translating, with its soft alignment.

Widgets → engine (a Trace) → views. The alignment map is [1, 1, target steps, source words].
"""

import random
import re

import numpy as np
import streamlit as st
from kit import export_buttons, friendly_errors
from state import nmt as state
from views.alignment import (
    additive_parts_figure,
    alignment_figure,
    bleu_by_length_figure,
    steps_animation,
    vector_strip,
)

from engine.data import enfr
from engine.translation_quality import aer, argmax_links, link_kinds

TASKS = {"English → French": "en-fr", "Dates → ISO 8601": "dates"}
EXAMPLES = {
    "en-fr": {name: enfr.detokenize_en(p.src) for name, p in enfr.EXAMPLES.items()},
    "dates": {
        d: d
        for d in (
            "Tuesday, 3 May 1979",
            "03/05/79",
            "May 3rd 1979",
            "3 mai 1979",
            "the 21st of December, 2012",
        )
    },
}
LIMITS = {
    "en-fr": f"at most {enfr.MAX_LEN} words and punctuation marks",
    "dates": "at most 40 characters",
}
SCORING_NAMES = {
    "additive": "additive (Bahdanau)",
    "dot": "dot (Luong)",
    "general": "general (Luong)",
    "concat": "concat (Luong)",
    "none": "no attention (RNNencdec baseline)",
}
BEAMS = (1, 5, 10)


def md(text: str) -> str:
    """Text shown through Markdown exactly as typed (no formatting, no HTML)."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$])", r"\\\1", text)


def model_label(name: str) -> str:
    if name == "nmt-dates":
        return "dates model (additive)"
    return SCORING_NAMES.get(name.removeprefix("nmt-enfr-"), name)


def choose_model(task: str) -> str:
    names = [
        n
        for n in state.available()
        if (n == "nmt-dates" if task == "dates" else n.startswith("nmt-enfr-"))
    ]
    if not names:
        st.info(
            f"No trained model for this task is shipped: run `python -m engine.train nmt "
            f"--task {task}` to make one."
        )
        st.stop()
    default = "nmt-enfr-additive" if "nmt-enfr-additive" in names else names[0]
    return st.selectbox(
        "Model", names, index=names.index(default), format_func=model_label, key=f"nmt-model-{task}"
    )


def input_text(task: str) -> str:
    """The text box; what was typed survives reruns and visits to other pages."""
    key, saved = f"nmt-text-{task}", f"nmt-saved-{task}"
    examples = EXAMPLES[task]

    def use_example():
        st.session_state[key] = examples[st.session_state[f"nmt-example-{task}"]]

    def draw():
        pair = enfr.sample(random.randrange(10**9))
        st.session_state.setdefault("nmt-drawn", []).append(pair)
        st.session_state[key] = enfr.detokenize_en(pair.src)

    if key not in st.session_state:
        st.session_state[key] = st.session_state.get(saved, next(iter(examples.values())))
    c1, c2 = st.columns([3, 1])
    c1.selectbox("Example", list(examples), key=f"nmt-example-{task}", on_change=use_example)
    if task == "en-fr":
        c2.button(
            "Draw a sentence from the grammar",
            on_click=draw,
            help="A new sentence from the generator, with its gold alignment",
        )
    text = st.text_area(
        f"Input ({LIMITS[task]}; unknown words are listed and read as <unk>)", key=key, height=90
    )
    st.session_state[saved] = text
    return text


def gold_section(name: str, trace, src: list[str]):
    """The gold links and AER when the sentence comes from the grammar; else None."""
    pair = enfr.gold(src, st.session_state.get("nmt-drawn", []))
    if pair is None:
        st.caption(
            "No gold alignment for this sentence: pick an example or draw a sentence "
            "from the grammar to see the gold links and the AER."
        )
        return None, None
    if tuple(trace.outputs["tokens"]) == pair.tgt:
        alpha = trace.maps["alignment"].weights[0, 0, : len(pair.tgt)]
        how = "the model's own translation equals the grammar's"
    else:
        alpha = state.forced_alignment(name, pair.src, pair.tgt)
        how = (
            "the model's translation differs from the grammar's, so α here is read with "
            "the gold translation fed in (forced alignment)"
        )
    predicted = argmax_links(alpha)
    kinds = link_kinds(alpha, pair.sure, pair.possible)
    c1, c2, c3 = st.columns(3)
    c1.metric(
        "AER (argmax vs sure + possible)", f"{aer([(predicted, pair.sure, pair.possible)]):.3f}"
    )
    c2.metric("AER (argmax vs sure only)", f"{aer([(predicted, pair.sure, pair.sure)]):.3f}")
    c3.metric("target words looking ahead to an agreement noun", kinds.count("possible"))
    st.caption(
        f"Gold links from the grammar: {how}. Och & Ney's AER = 1 − (|A∩S| + |A∩P|) / "
        "(|A| + |S|) with A = argmax of each row of α."
    )
    ahead = [
        (pair.tgt[i], pair.src[j])
        for (j, i), k in zip(sorted(predicted, key=lambda link: link[1]), kinds, strict=True)
        if k == "possible"
    ]
    if ahead:
        st.markdown(
            "**Anticipation, not an error of translation:** "
            + "; ".join(f"“{md(t)}” looks most at “{md(s)}”" for t, s in ahead)
            + ". A French determiner or adjective must agree in gender and number with "
            "its noun, so while emitting it the decoder attends to that noun. The "
            "grammar marks these as *possible* links, so the first AER forgives them "
            "and the sure-only AER counts them."
        )
    return pair, alpha


def step_through(trace, src: list[str]):
    alpha = trace.maps["alignment"].weights[0, 0]
    steps = trace.outputs["steps"]
    st.plotly_chart(steps_animation(alpha, src, steps), key="nmt-anim")
    i = st.slider("Decoding step i", 1, len(steps), 1, key="nmt-step") - 1
    top = np.argsort(alpha[i])[::-1][:3]
    st.markdown(
        f"At step **{i + 1}** the decoder emits **“{md(steps[i])}”**, attending most to "
        + ", ".join(f"“{md(src[j])}” ({alpha[i, j]:.2f})" for j in top)
        + "."
    )
    c1, c2 = st.columns(2)
    c1.plotly_chart(
        vector_strip(trace.vectors["contexts"][i], "context c_i = Σ_j α_ij h_j", "c_i"),
        key="nmt-ctx",
    )
    c2.plotly_chart(
        vector_strip(trace.vectors["states"][i], "decoder state s_{i−1} (the query)", "s_{i−1}"),
        key="nmt-state",
    )
    return i


def internals(trace, src: list[str], i: int, scoring: str):
    v = trace.vectors
    if "tanh" not in v:
        st.info(
            f"This model scores with **{SCORING_NAMES[scoring]}**, which has no W_a s / "
            "U_a h parts; here is e_ij at this step. Pick the additive model for the parts."
        )
        st.plotly_chart(vector_strip(v["e"][i], f"e_ij at step {i + 1}", "e"), key="nmt-e")
        return
    st.plotly_chart(
        vector_strip(
            v["W_a s"][i], f"W_a s_{{i−1}} at step {i + 1} (same for every source word)", "W_a s"
        ),
        key="nmt-was",
    )
    st.plotly_chart(additive_parts_figure(v, src, i), key="nmt-parts")
    st.caption(
        "Each row is a source word j: U_a h_j is fixed for the sentence; adding W_a s_{i−1} "
        "and squashing with tanh, then weighting by v_a and summing the row gives e_ij; "
        "the softmax over the rows gives α_ij."
    )


def side_by_side(task: str, name: str, text: str, beam: int, src: list[str]):
    tab_scoring, tab_beam = st.tabs(["Scoring functions", "Beam widths"])
    with tab_scoring:
        others = (
            [n for n in state.available() if n.startswith("nmt-enfr-") and not n.endswith("-none")]
            if task == "en-fr"
            else [name]
        )
        cols = st.columns(max(1, min(len(others), 3)))
        for k, other in enumerate(others):
            t = state.translate(other, text, beam)
            with cols[k % len(cols)]:
                steps = state.translator(other).meta.get("train", {}).get("steps", "?")
                st.markdown(
                    f"**{model_label(other)}** ({steps} training steps): "
                    f"{md(t.outputs['translation'])}"
                )
                a = t.maps["alignment"]
                st.plotly_chart(
                    alignment_figure(
                        a.weights[0, 0],
                        src,
                        a.query_labels,
                        title=model_label(other),
                        flags=a.flags,
                    ),
                    key=f"nmt-cmp-{other}",
                )
    with tab_beam:
        cols = st.columns(len(BEAMS))
        for col, b in zip(cols, BEAMS, strict=True):
            t = state.translate(name, text, b)
            a = t.maps["alignment"]
            with col:
                st.markdown(
                    f"**beam {b}** (log p = {t.outputs['log_prob']:.2f}): "
                    f"{md(t.outputs['translation'])}"
                )
                st.plotly_chart(
                    alignment_figure(
                        a.weights[0, 0], src, a.query_labels, title=f"beam {b}", flags=a.flags
                    ),
                    key=f"nmt-beam-{b}",
                )


def head_view(trace, src: list[str]):
    from views.bertviz_view import head_view_html, render

    a = trace.maps["alignment"]
    html = head_view_html(
        cross_attention=a.weights, encoder_tokens=src, decoder_tokens=list(a.query_labels)
    )
    render(html, height=max(400, 40 + 24 * max(len(src), len(a.query_labels))))


def measured(task: str):
    result = state.evaluation(task)
    if result is None:
        st.info(
            f"No evaluation is shipped yet: run "
            f"`python -m engine.evaluate nmt --task {task} --save`."
        )
        return
    beam = result["decoding"].removeprefix("beam ")
    cmd = (
        f"python -m engine.evaluate nmt --task {task}"
        + (f" --beam {beam}" if beam.isdigit() else "")
        + " --save"
    )
    curves = {model_label(result["model"]): result}
    curves |= {model_label(n): r for n, r in result.get("models", {}).items()}
    rows = [
        {
            "model": label,
            "decoding": r["decoding"],
            "exact match": r["exact_match"],
            "BLEU": r["bleu"],
            "AER": r.get("aer"),
            "AER argmax vs sure": r.get("aer_argmax_vs_sure"),
            "training steps": r.get("train_steps"),
        }
        for label, r in curves.items()
    ]
    if "greedy" in result:  # the same model decoded greedily, for comparison
        g = result["greedy"]
        rows.insert(
            1,
            {
                "model": model_label(result["model"]),
                "decoding": "greedy",
                "exact match": g["exact_match"],
                "BLEU": g["bleu"],
            },
        )
    st.dataframe(rows, hide_index=True)
    st.plotly_chart(bleu_by_length_figure(curves), key="nmt-bleu")
    st.caption(
        f"Test split ({result['n_test']} sentences, never trained on); measured by `{cmd}`. "
        "AER uses α with the gold translation fed in. Bahdanau et al.'s Figure 2: without "
        "attention the fixed vector has to hold the whole sentence, so BLEU falls with "
        "length; with attention it stays nearly flat. Models with fewer training steps "
        "than the additive one are marked in the table, so compare them with care."
    )


st.title("Alignment (Bahdanau)")
st.caption(
    "RNNsearch (Bahdanau, Cho & Bengio 2014): a bidirectional GRU reads the source; at "
    "every target word the decoder scores each source annotation h_j, e_ij = "
    "v_aᵀ tanh(W_a s_{i−1} + U_a h_j), and reads the context c_i = Σ_j α_ij h_j. "
    "Trained here on generated data (English→French with gold alignments, and dates)."
)

task = TASKS[st.radio("Task", list(TASKS), horizontal=True, key="nmt-task")]
name = choose_model(task)
text = input_text(task)
beam = st.slider("Beam width (1 = greedy; 1–10)", 1, 10, 5, key="nmt-beam")

with friendly_errors("the translation"):
    tr = state.translator(name)
    trace = state.translate(name, text, beam)
src = trace.inputs["tokens"]
st.markdown(f"### {md(trace.outputs['translation'])}")
if trace.outputs["unknown"]:
    st.warning(
        "Not in the model's vocabulary, read as <unk>: "
        + ", ".join(f"“{md(w)}”" for w in trace.outputs["unknown"])
    )
rec = tr.meta.get("train", {})
st.caption(
    f"{model_label(name)} · beam {beam} · {trace.timings['translate_ms']:.0f} ms · trained "
    f"{rec.get('steps', '?')} steps × {rec.get('batch', '?')} sentences "
    f"({rec.get('cpu_s', '?')} s CPU) · `{tr.meta.get('command', '')}`"
)

if "alignment" not in trace.maps:
    st.info(
        "The RNNencdec baseline has no alignment: every target word is produced from the "
        "same fixed vector c = [h→_T ; h←_1]. Pick an attention model to see α."
    )
else:
    amap = trace.maps["alignment"]
    st.header("Soft alignment α_ij")
    pair, gold_alpha = gold_section(name, trace, src) if task == "en-fr" else (None, None)
    if pair is not None and gold_alpha is not None:
        st.plotly_chart(
            alignment_figure(
                gold_alpha,
                pair.src,
                pair.tgt,
                flags=amap.flags,
                sure=pair.sure,
                possible=pair.possible,
                title="α_ij with the grammar's gold links",
            ),
            key="nmt-gold",
        )
    else:
        st.plotly_chart(
            alignment_figure(
                amap.weights[0, 0], src, amap.query_labels, flags=amap.flags, title="α_ij"
            ),
            key="nmt-alpha",
        )
    st.header("Step through the decoding")
    step = step_through(trace, src)
    st.header("Inside the score at this step")
    internals(trace, src, step, tr.model.cfg.scoring)
    st.header("Side by side")
    with friendly_errors("the comparison"):
        side_by_side(task, name, text, beam, src)
    st.header("bertviz head view of this cross-attention")
    st.caption("Decoder words on the left, source words on the right; rendered offline.")
    with friendly_errors("the head view"):
        head_view(trace, src)

st.header("Measured on the test split")
measured(task)
export_buttons(trace, f"alignment-{name}")
