"""Memory (MemN2N): which memories an End-To-End Memory Network reads at each hop.

Widgets → one cached answer (a Trace) → the hops or the memory map, one at a time.
"""

import streamlit as st
from kit import controls, friendly_errors, page_bottom, page_top, url_default, url_index, url_sync
from kit.reveal import page_toggle
from state.memn2n import answer, evaluation, reader, shipped
from studios.memory import hops, inputs, measured, memory_map
from views.memory import md_escape

page_top()
st.title("Memory (MemN2N)")
st.caption(
    "End-To-End Memory Networks (Sukhbaatar et al. 2015) trained here on generated "
    "bAbI tasks. Each hop $k$ reads the memory with "
    r"$p_i = \mathrm{softmax}(u^{k\top} m_i)$, adds $o^k = \sum_i p_i c_i$ to its question "
    r"vector, $u^{k+1} = u^k + o^k$, and asks again."
)

with friendly_errors("loading the memory network"):
    names = shipped()
    if not names:
        raise FileNotFoundError(
            "no MemN2N checkpoint is shipped; train one with "
            "`python -m engine.train memn2n --task all`"
        )

results = evaluation()  # the shipped `evaluate memn2n --save` numbers, or None
with controls():
    source = st.radio(
        "Source",
        ["Generated bAbI story", "Your own story"],
        horizontal=True,
        index=url_default("own", 0, int, key="mem_source", choices=(0, 1)),
        key="mem_source",
    )
    if source == "Your own story":
        name, sample = inputs.own_story(names)
    else:
        name, sample = inputs.generated_story(names, results)
url_sync(model=name)

with friendly_errors("answering"):
    trace = answer(name, sample)
    cfg = reader(name).model.cfg

out = trace.outputs
if out.get("warning"):
    st.warning(out["warning"])
verdict = ""
if out["expected"]:
    right = out["expected"] == out["answer"]
    verdict = " — correct" if right else f" — wrong, the answer is {md_escape(out['expected'])}"
st.markdown(
    f"**Q:** {md_escape(sample.question)}  \n**A:** `{out['answer']}` with probability "
    f"{out['probability']:.3f}{verdict} · model `{name}` "
    f"({cfg.hops} hops, {reader(name).meta['config']['tying']} tying)"
)
if out["unknown_words"]:
    st.info(
        "Words outside the vocabulary were dropped: "
        + ", ".join(md_escape(w) for w in out["unknown_words"][:20])
        + "."
    )
if out["dropped_sentences"]:
    st.info(
        f"The story has {len(sample.story)} sentences; the memory holds "
        f"{cfg.memory}, so the earliest {out['dropped_sentences']} were left out."
    )

# One section on screen at a time: the UMAP map is drawn only when asked for.
shown = (
    st.segmented_control(
        "Show",
        ["Hops", "Memory map"],
        default=["Hops", "Memory map"][url_index("section", ["hops", "map"], key="mem_section")],
        required=True,
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
