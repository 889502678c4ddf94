"""Transformer studio: our encoder–decoder trained here, and pretrained HuggingFace models.

Widgets → engine (a Trace) → views. Every map is [layer, head, query, key].
"""

import numpy as np
import streamlit as st
from kit import export_buttons, friendly_errors
from state import transformer as state
from views.heatmap import attention_figure
from views.qk_map import dot_distance_figure, qk_scatter
from views.transformer import bertviz_arguments, head_grid, neuron_figure

OURS, PRETRAINED = "Our Transformer (trained here)", "Pretrained (HuggingFace, local files)"
OTHER = "Another allowed directory…"
KIND_NAMES = {
    "encoder_self": "encoder self-attention",
    "decoder_self": "decoder self-attention",
    "cross": "cross-attention (decoder → encoder)",
}
READINGS = ("each head", "mean over heads", "rollout (Abnar & Zuidema 2020)")
PRETRAINED_EXAMPLES = (
    "The animal didn't cross the street because it was too tired.",
    "The unbelievably quick brown fox jumps over the lazy dog.",
    "Attention is all you need.",
)

st.title("Transformer")
st.caption(
    "Vaswani et al. 2017: multi-head self- and cross-attention, layer by layer and head "
    "by head, in a small encoder–decoder we trained here and in pretrained models "
    "loaded from local files (never downloaded)."
)
state.umap_warm_up()


def example_text(examples, key: str) -> str:
    choice = st.selectbox("Example", examples, key=f"example-{key}")
    return st.text_input("Input", value=choice, key=f"text-{key}-{examples.index(choice)}")


def show_measured(result: dict | None) -> None:
    """The evaluation numbers, their method and the command that measured them."""
    if result is None:
        return
    with st.expander(f"Measured quality on {result['n_test']} test sentences"):
        rows = result.get("pe_ablation") or {result["pe"]: result}
        st.table(
            {pe: {k: r[k] for k in ("bleu", "exact_match", "unigram_f1")} for pe, r in rows.items()}
        )
        if "aer" in result:
            st.markdown(
                f"Alignment error rate of each cross-attention head of `{result['checkpoint']}` "
                "against the gold links (lower is better; argmax link per target word, "
                "teacher-forced on the reference):"
            )
            st.table(result["aer"])
        st.caption(
            f"Reproduce: `{result['command']}`. BLEU is sacreBLEU on tokens (characters "
            "for dates); unigram F1 ignores word order."
        )


def our_model():
    from engine.models.transformer import MAX_CHARS

    ours, _ = state.model_choices()
    if not ours:
        st.info(
            "No trained Transformer is shipped yet: run "
            "`python -m engine.train transformer --task en-fr` to make one."
        )
        st.stop()
    name = st.selectbox(
        "Checkpoint", ours, key="checkpoint", help="transformer-<task>-<positional encoding>"
    )
    with friendly_errors("loading the checkpoint"):
        tr = state.translator(name)
    st.caption(
        f"Task **{tr.task}**, positional encoding **{tr.model.cfg.pe}**, "
        f"{tr.model.cfg.n_layers} layers × {tr.model.cfg.n_heads} heads, "
        f"d_model {tr.model.cfg.d_model}. Input: at most **{tr.max_src} tokens**"
        f"{' (characters)' if tr.task == 'dates' else ' (words)'}; "
        f"at most {MAX_CHARS:,} characters; output: at most {tr.max_new} tokens."
    )
    show_measured(state.measured(tr.task))
    text = example_text(state.examples(tr.task), name)
    with friendly_errors("the Transformer"):
        trace = state.own_trace(name, text)
    st.markdown(f"**Output:** `{trace.outputs['translation']}`")
    if trace.outputs["unknown"]:
        st.warning(
            "Not in this model's vocabulary (read as <unk>): " + ", ".join(trace.outputs["unknown"])
        )
    return trace, ("<s>", "</s>")


def pretrained_model():
    from engine.models.pretrained import ALLOWLIST_ENV, MAX_CHARS, MAX_NEW_TOKENS

    _, models = state.model_choices()
    choice = st.selectbox("Model", [*models, OTHER], key="hf-model")
    if choice == OTHER:
        path = st.text_input(
            "Local model directory",
            key="hf-path",
            help=f"Only directories listed in {ALLOWLIST_ENV} are allowed.",
        )
        name = path.rstrip("/").rsplit("/", 1)[-1]
    else:
        path, name = models[choice], choice
    with friendly_errors("loading the model"):
        m = state.pretrained(path, name)
    st.caption(
        f"{m.name}: {m.arch}, eager attention. Input: at most **{m.max_tokens} tokens** "
        f"and {MAX_CHARS:,} characters; longer text is refused."
    )
    text = example_text(list(PRETRAINED_EXAMPLES), name)
    new = 0
    if m.arch != "encoder":
        new = st.slider(f"Tokens to generate (0–{MAX_NEW_TOKENS}, greedy)", 0, MAX_NEW_TOKENS, 8)
    with friendly_errors("the pretrained model"):
        trace = state.pretrained_trace(path, name, text, new)
    if "generated" in trace.outputs:
        how = (
            "one causal pass over prompt + generated tokens"
            if m.arch == "decoder"
            else "one teacher-forced decoder pass over the generated tokens"
        )
        st.markdown(
            f"**Generated:** `{trace.outputs['generated']}` — the attention below includes "
            f"the generated tokens ({how})."
        )
    return trace, m.sinks


def transformed(amap, reading: str, merge: bool, hide: bool, sinks):
    from engine.rollout import head_average, hide_sinks, merge_word_pieces, rollout

    if merge:
        amap = merge_word_pieces(amap, keep=sinks)
    if reading == READINGS[1]:
        amap = head_average(amap)
    elif reading == READINGS[2]:
        amap = rollout(amap)
    return hide_sinks(amap, sinks) if hide else amap


def causal(kind: str, n_q: int, n_k: int):
    return np.tril(np.ones((n_q, n_k), bool)) if kind == "decoder_self" else None


source = st.radio("Model family", [OURS, PRETRAINED], horizontal=True, key="family")
trace, sinks = our_model() if source == OURS else pretrained_model()

kinds = list(trace.maps)
c1, c2 = st.columns([2, 3])
kind = c1.selectbox("Attention", kinds, format_func=KIND_NAMES.get, key="attention")
reading = c2.radio(
    "Read the heads",
    READINGS if kind != "cross" else READINGS[:2],
    horizontal=True,
    help="Rollout multiplies (½·mean-over-heads + ½·I) over layers; it needs self-attention.",
)
c3, c4 = st.columns(2)
merge = c3.toggle(
    "Merge word pieces into words",
    help="to a word: sum over its pieces; from a word: mean over its pieces (rows still sum to 1)",
)
hide = c4.toggle(
    f"Hide {' / '.join(sinks)} attention sinks",
    help="drops those rows and columns and renormalises each row",
)
raw = trace.maps[kind]
with friendly_errors("reading the heads"):
    amap = transformed(raw, reading, merge, hide, sinks)

L, H = raw.shape[:2]
tab_heads, tab_bertviz, tab_neuron, tab_qk = st.tabs(
    ["Layers × heads", "bertviz", "Neuron view", "Query–key map (AttentionViz)"]
)

with tab_heads:
    st.plotly_chart(head_grid(amap, KIND_NAMES[kind]), width="stretch")
    s1, s2 = st.columns(2)
    layer = s1.select_slider("Layer", range(L), format_func=lambda i: raw.layer_labels[i])
    head = s2.select_slider("Head", range(H), format_func=lambda i: raw.head_labels[i])
    shown_head = head if amap.shape[1] == H else 0
    st.plotly_chart(
        attention_figure(amap, min(layer, amap.shape[0] - 1), shown_head), width="stretch"
    )
    if amap.note:
        st.caption(amap.note)

with tab_bertviz:
    import views.bertviz_view as bv

    view = st.radio("View", ["head view", "model view"], horizontal=True)
    one_map = len(trace.maps) == 1
    maps = {
        k: transformed(m, READINGS[0], merge, hide, sinks) if one_map else m
        for k, m in trace.maps.items()
    }
    if not one_map and (merge or hide):
        st.caption(
            "bertviz shows the raw weights of all three maps (the toggles above would "
            "give the encoder and decoder different token lists)."
        )
    n_tok = max(max(m.shape[2:]) for m in maps.values())
    with friendly_errors("the bertviz view"):
        html = state.bertviz_html(view.split()[0], bertviz_arguments(maps), layer)
        bv.render(
            html, height=min(2400, 200 + 24 * n_tok) if view == "head view" else 160 + 140 * L
        )
    st.caption("bertviz 1.4.1 (Vig 2019) with its JavaScript vendored: nothing is fetched.")

q_all, k_all = trace.vectors.get(f"queries.{kind}"), trace.vectors.get(f"keys.{kind}")

with tab_neuron:
    if q_all is None:
        st.info("Queries and keys are available for our Transformer and BERT-style encoders.")
    else:
        i = st.selectbox(
            "Query token", range(raw.shape[2]), format_func=lambda j: f"{j}: {raw.query_labels[j]}"
        )
        mask = causal(kind, raw.shape[2], raw.shape[3])
        st.plotly_chart(
            neuron_figure(
                q_all[layer, head, i],
                k_all[layer, head],
                raw.query_labels[i],
                raw.key_labels,
                None if mask is None else mask[i],
            ),
            width="stretch",
        )
        st.caption(
            f"{raw.layer_labels[layer]} · {raw.head_labels[head]} (chosen in the first "
            "tab). α_ij = softmax_j(q_i·k_j/√d_k): the bars equal the heatmap's row."
        )

with tab_qk:
    if q_all is None:
        st.info("Queries and keys are available for our Transformer and BERT-style encoders.")
    else:
        colour = st.radio("Colour by", ["position", "token"], horizontal=True)
        mask = causal(kind, raw.shape[2], raw.shape[3])
        with friendly_errors("the query–key map"):
            emb = state.joint_embedding(q_all[layer, head], k_all[layer, head], mask, 0)
        title = f"{raw.layer_labels[layer]} · {raw.head_labels[head]} ({emb.method.upper()})"
        st.plotly_chart(
            qk_scatter(emb, raw.query_labels, raw.key_labels, colour_by=colour, title=title),
            width="stretch",
        )
        st.plotly_chart(dot_distance_figure(emb, mask), width="stretch")
        st.caption(
            "Yeh et al. 2023: queries and keys embedded together; keys shifted by "
            "mean(Q) − mean(K) (and both scaled to equal mean norm), which leaves every "
            "softmax unchanged. The correlation says how faithful the 2-D picture is."
        )

export_buttons(trace, f"transformer-{trace.model}")
