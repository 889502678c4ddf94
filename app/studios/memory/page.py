"""Memory (MemN2N): which memories an End-To-End Memory Network reads at each hop.

Widgets → one cached answer (a Trace) → the hops or the memory map, one at a time.
"""

import streamlit as st
from kit import (
    controls,
    engine_text,
    friendly_errors,
    page_bottom,
    page_top,
    t,
    url_default,
    url_index,
    url_sync,
)
from kit.reveal import page_toggle
from state.memn2n import answer, evaluation, reader, shipped
from studios.memory import hops, inputs, measured, memory_map
from views.memory import md_escape

page_top()
st.title(t("memory.title"))
st.caption(t("memory.caption"))

with friendly_errors(t("memory.loading_what")):
    names = shipped()
    if not names:
        raise FileNotFoundError(t("memory.no_checkpoint"))

results = evaluation()  # the shipped `evaluate memn2n --save` numbers, or None
with controls():
    source = st.radio(
        t("memory.source"),
        ["Generated bAbI story", "Your own story"],
        horizontal=True,
        format_func=lambda s: t(
            "memory.source_own" if s == "Your own story" else "memory.source_babi"
        ),
        index=url_default("own", 0, int, key="mem_source", choices=(0, 1)),
        key="mem_source",
    )
    if source == "Your own story":
        name, sample = inputs.own_story(names)
    else:
        name, sample = inputs.generated_story(names, results)
url_sync(model=name)

with friendly_errors(t("memory.answering_what")):
    trace = answer(name, sample)
    cfg = reader(name).model.cfg

out = trace.outputs
if out.get("warning"):
    st.warning(engine_text(out["warning"]))
verdict = ""
if out["expected"]:
    right = out["expected"] == out["answer"]
    verdict = t("memory.correct") if right else t("memory.wrong", answer=md_escape(out["expected"]))
st.markdown(
    t(
        "memory.qa",
        question=md_escape(sample.question),
        answer=out["answer"],
        p=f"{out['probability']:.3f}",
        verdict=verdict,
        name=name,
        hops=cfg.hops,
        tying=reader(name).meta["config"]["tying"],
    )
)
if out["unknown_words"]:
    st.info(
        t("memory.dropped_words", words=", ".join(md_escape(w) for w in out["unknown_words"][:20]))
    )
if out["dropped_sentences"]:
    st.info(t("memory.dropped", n=len(sample.story), memory=cfg.memory, k=out["dropped_sentences"]))

# One section on screen at a time: the UMAP map is drawn only when asked for.
shown = (
    st.segmented_control(
        t("memory.show"),
        ["Hops", "Memory map"],
        default=["Hops", "Memory map"][url_index("section", ["hops", "map"], key="mem_section")],
        required=True,
        format_func=lambda s: t("memory.section_hops" if s == "Hops" else "memory.section_map"),
        key="mem_section",
    )
    or "Hops"
)
url_sync(section="hops" if shown == "Hops" else "map")
page_toggle("memory", trace.maps["memory"], when=shown == "Hops")
if shown == "Hops":
    hops.section(trace)
else:
    map_name = "memn2n-joint" if "memn2n-joint" in names else name
    memory_map.section(map_name, sample, trace.maps["memory"].key_labels)

if results:
    measured.table(results)
page_bottom(f"memory-{name}", trace)
