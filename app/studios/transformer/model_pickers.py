"""The two model families of the Transformer page: each returns (Trace, attention sinks)."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
from kit import friendly_errors
from state import transformer as state

OTHER = "Another allowed directory…"
PRETRAINED_EXAMPLES = (
    "The animal didn't cross the street because it was too tired.",
    "The unbelievably quick brown fox jumps over the lazy dog.",
    "Attention is all you need.",
)


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


def ours():
    from engine.models.transformer import MAX_CHARS

    checkpoints, _ = state.model_choices()
    if not checkpoints:
        st.info(
            "No trained Transformer is shipped yet: run "
            "`python -m engine.train transformer --task en-fr` to make one."
        )
        st.stop()
    name = st.selectbox(
        "Checkpoint", checkpoints, key="checkpoint", help="transformer-<task>-<positional encoding>"
    )
    with friendly_errors("loading the checkpoint"):
        tr = state.translator(name)
    cfg = tr.model.cfg
    st.caption(
        f"Task **{tr.task}**, positional encoding **{cfg.pe}**, {cfg.n_layers} layers × "
        f"{cfg.n_heads} heads, d_model {cfg.d_model}. Input: at most **{tr.max_src} tokens**"
        f"{' (characters)' if tr.task == 'dates' else ' (words)'}; "
        f"at most {MAX_CHARS:,} characters; output: at most {tr.max_new} tokens."
    )
    show_measured(state.measured(tr.task))
    text = example_text(state.examples(tr.task), name)
    with friendly_errors("the Transformer"):
        trace = state.own_trace(name, text)
    st.markdown(f"**Output:** `{trace.outputs['translation']}`")
    if trace.outputs.get("warning"):  # far from its data: say so before any heatmap
        st.warning(trace.outputs["warning"])
    elif trace.outputs["unknown"]:
        st.warning(
            "Not in this model's vocabulary (read as <unk>): " + ", ".join(trace.outputs["unknown"])
        )
    return trace, ("<s>", "</s>")


def pretrained():
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


@dataclass(frozen=True)
class Shown:
    """What the page picked, handed to the section on screen."""

    trace: object
    kind: str
    title: str  # the map's name, e.g. "cross-attention (decoder → encoder)"
    amap: object  # the map as read (merged, averaged or rolled out, sinks hidden)
    merge: bool
    hide: bool
    sinks: tuple

    @property
    def raw(self):
        """The map as the model returned it."""
        return self.trace.maps[self.kind]


def layer_head(raw) -> tuple[int, int]:
    """The layer and head every section looks at (one pair of widgets, kept across sections)."""
    n_layers, n_heads = raw.shape[:2]
    s1, s2 = st.columns(2)
    layer = s1.select_slider(
        "Layer", range(n_layers), format_func=lambda i: raw.layer_labels[i], key=f"layer-{n_layers}"
    )
    head = s2.select_slider(
        "Head", range(n_heads), format_func=lambda i: raw.head_labels[i], key=f"head-{n_heads}"
    )
    return layer, head
