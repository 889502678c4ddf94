"""The two model families of the Transformer page: each returns (Trace, attention sinks)."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
from kit import engine_text, example_and_text, friendly_errors, t, url_choice, url_number
from state import transformer as state

OTHER = "Another allowed directory…"  # an option's identity, shown through t()
PRETRAINED_EXAMPLES = (
    "The animal didn't cross the street because it was too tired.",
    "The unbelievably quick brown fox jumps over the lazy dog.",
    "Attention is all you need.",
)


def example_text(examples, key: str) -> str:
    return example_and_text(examples, key, t("transformer.example"), t("transformer.input"))


def show_measured(result: dict | None) -> None:
    """The evaluation numbers, their method and the command that measured them."""
    if result is None:
        return
    with st.expander(t("transformer.measured", n=result["n_test"])):
        rows = result.get("pe_ablation") or {result["pe"]: result}
        st.table(
            {pe: {k: r[k] for k in ("bleu", "exact_match", "unigram_f1")} for pe, r in rows.items()}
        )
        if "aer" in result:
            st.markdown(t("transformer.aer_intro", name=result["checkpoint"]))
            st.table(result["aer"])
        st.caption(t("transformer.measured_caption", command=result["command"]))


def ours():
    from engine.models.transformer import MAX_CHARS

    checkpoints, _ = state.model_choices()
    if not checkpoints:
        st.info(t("transformer.no_model"))
        st.stop()
    name = url_choice(
        st.selectbox,
        "model",
        t("transformer.checkpoint"),
        checkpoints,
        key="checkpoint",
        help=t("transformer.checkpoint_help"),
    )
    with friendly_errors(t("transformer.checkpoint_what")):
        tr = state.translator(name)
    cfg = tr.model.cfg
    facts = dict(task=tr.task, pe=cfg.pe, layers=cfg.n_layers, heads=cfg.n_heads, d=cfg.d_model)
    facts |= dict(max_src=tr.max_src, chars=f"{MAX_CHARS:,}", max_new=tr.max_new)
    st.caption(t("transformer.ours_caption" + ("_dates" if tr.task == "dates" else ""), **facts))
    show_measured(state.measured(tr.task))
    text = example_text(state.examples(tr.task), name)
    with friendly_errors(t("transformer.ours_what")):
        trace = state.own_trace(name, text)
    st.markdown(t("transformer.output", text=trace.outputs["translation"]))
    if trace.outputs.get("warning"):  # far from its data: say so before any heatmap
        st.warning(engine_text(trace.outputs["warning"]))
    elif trace.outputs["unknown"]:
        st.warning(t("transformer.unknown", words=", ".join(trace.outputs["unknown"])))
    return trace, ("<s>", "</s>")


def pretrained():
    from engine.models.pretrained import ALLOWLIST_ENV, MAX_CHARS, MAX_NEW_TOKENS

    _, models = state.model_choices()
    other = lambda m: t("transformer.other") if m == OTHER else m  # noqa: E731
    choice = url_choice(
        st.selectbox,
        "model",
        t("transformer.model"),
        [*models, OTHER],
        key="hf-model",
        format_func=other,
    )
    if choice == OTHER:
        path = st.text_input(
            t("transformer.local_dir"),
            key="hf-path",
            help=t("transformer.local_dir_help", env=ALLOWLIST_ENV),
        )
        name = path.rstrip("/").rsplit("/", 1)[-1]
    else:
        path, name = models[choice], choice
    with friendly_errors(t("transformer.loading_what")):
        m = state.pretrained(path, name)
    facts = dict(name=m.name, arch=m.arch, tokens=m.max_tokens, chars=f"{MAX_CHARS:,}")
    st.caption(t("transformer.pretrained_caption", **facts))
    text = example_text(PRETRAINED_EXAMPLES, name)
    new = 0
    if m.arch != "encoder":
        label = t("transformer.generate", n=MAX_NEW_TOKENS)
        new = url_number(st.slider, "new", label, 0, MAX_NEW_TOKENS, 8, key="hf-generate")
    with friendly_errors(t("transformer.pretrained_what")):
        trace = state.pretrained_trace(path, name, text, new)
    if "generated" in trace.outputs:
        how = t("transformer.how_" + ("causal" if m.arch == "decoder" else "forced"))
        st.markdown(t("transformer.generated", text=trace.outputs["generated"], how=how))
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
    fl, fh = raw.layer_labels.__getitem__, raw.head_labels.__getitem__
    layer = url_choice(
        s1.select_slider,
        "layer",
        t("transformer.layer"),
        range(n_layers),
        key=f"layer-{n_layers}",
        format_func=fl,
    )
    head = url_choice(
        s2.select_slider,
        "head",
        t("transformer.head"),
        range(n_heads),
        key=f"head-{n_heads}",
        format_func=fh,
    )
    return layer, head
