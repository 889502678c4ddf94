"""Memory (MemN2N): which memories an End-To-End Memory Network reads at each hop."""

import numpy as np
import streamlit as st
from kit import export_buttons, friendly_errors, url_default, url_sync
from state.memn2n import (
    MAP_MEMORIES,
    chosen,
    corpus,
    evaluation,
    projected,
    reader,
    shipped,
    stories,
)
from views.memory import answer_bars, hops_figure, md_escape, memory_map, shaded_story

from engine.data.babi import MAX_STORY_CHARS, MAX_WORDS_PER_SENTENCE, TASK_IDS, user_story
from engine.data.babi_tasks import TASKS

EXAMPLE_STORY = (
    "Mary moved to the bathroom.\nJohn went to the hallway.\n"
    "Daniel went back to the kitchen.\nMary travelled to the office."
)
EXAMPLE_QUESTION = "Where is Mary?"
N_STORIES = 200

st.title("Memory (MemN2N)")
st.caption(
    "End-To-End Memory Networks (Sukhbaatar et al. 2015) trained here on generated "
    "bAbI tasks. Each hop k reads the memory with p_i = softmax(u^kᵀ m_i), adds "
    "o^k = Σ p_i c_i to its question vector and asks again."
)

with friendly_errors("loading the memory network"):
    names = shipped()
    if not names:
        raise FileNotFoundError(
            "no MemN2N checkpoint is shipped; train one with "
            "`python -m engine.train memn2n --task all`"
        )

source = st.radio(
    "Source",
    ["Generated bAbI story", "Your own story"],
    horizontal=True,
    index=int(url_default("own", 0, int) == 1),
    key="mem_source",
)
own = source == "Your own story"
labels = {t: f"{t}: {TASKS[t][0]}" for t in TASK_IDS}
results = evaluation()  # the shipped `evaluate memn2n --save` numbers, or None
default_name = "memn2n-joint" if "memn2n-joint" in names else names[0]

if not own:
    c1, c2, c3 = st.columns([3, 1, 2])
    task_default = url_default("task", 1, int)
    task = c1.selectbox(
        "Task",
        TASK_IDS,
        format_func=labels.get,
        key="mem_task",
        index=TASK_IDS.index(task_default) if task_default in TASK_IDS else 0,
    )
    index = c2.number_input(
        f"Story (0–{N_STORIES - 1} of the test set)",
        0,
        N_STORIES - 1,
        min(max(url_default("story", 0, int), 0), N_STORIES - 1),
    )
    url_sync(own=0, task=task, story=index)
    with friendly_errors("choosing the model"):
        best = chosen(int(task))
    models = [best] + [
        n for n in (f"memn2n-task{task}", "memn2n-joint") if n in names and n != best
    ]
    name = c3.selectbox(
        "Model (first: the better on this task's dev set)",
        models,
        # One widget per task: a new task starts from its own better model, not from the
        # model picked for the previous task.
        key=f"mem_model_task{task}",
    )
    sample = stories(int(task))[int(index)]
    measured = (results or {}).get("tasks", {}).get(str(task))
    if measured and measured.get("model") == name:
        hits = measured["support_hit_per_hop"]
        hops = " / ".join(f"{h:.2f}" for h in hits)
        which = " / ".join(str(k + 1) for k in range(len(hits)))
        st.caption(
            f"`{name}` on this task's {measured['n_test']:,} test questions: accuracy "
            f"**{measured['accuracy']:.3f}** (the paper's MemN2N PE LS RN, 1k: "
            f"{measured['paper_accuracy']:.3f}). The most-attended memory is a supporting "
            f"fact on hop {which} in {hops} of them. Measured by `python -m "
            "engine.evaluate memn2n --task all --save`."
        )
else:
    st.caption(
        f"Plain sentences (one per line or ending in '.'), or bAbI lines such as "
        f"'1 Mary went home.' with a question line 'N Where is Mary?<TAB>home<TAB>1'. "
        f"Up to {MAX_STORY_CHARS:,} characters and {MAX_WORDS_PER_SENTENCE} words per "
        "sentence; the memory keeps the latest 50 sentences."
    )
    text = st.text_area("Story", EXAMPLE_STORY, height=160, key="mem_story")
    question = st.text_input(
        "Question (leave empty to use a pasted bAbI question)", EXAMPLE_QUESTION, key="mem_question"
    )
    name = st.selectbox("Model", names, index=names.index(default_name), key="mem_model")
    url_sync(own=1)
    with friendly_errors("reading your story"):
        sample = user_story(text, question)

with friendly_errors("answering"):
    from engine.models.memn2n import answer

    r = reader(name)
    trace = answer(r, sample)

out = trace.outputs
amap = trace.maps["memory"]
support = out["support"]
verdict = ""
if out["expected"]:
    right = out["expected"] == out["answer"]
    verdict = " — correct" if right else f" — wrong, the answer is {md_escape(out['expected'])}"
st.markdown(
    f"**Q:** {md_escape(sample.question)}  \n**A:** `{out['answer']}` with probability "
    f"{out['probability']:.3f}{verdict} · model `{name}` "
    f"({r.model.cfg.hops} hops, {r.meta['config']['tying']} tying)"
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
        f"{r.model.cfg.memory}, so the earliest {out['dropped_sentences']} were left out."
    )

c1, c2 = st.columns([1, 2])
c1.plotly_chart(answer_bars(out["candidates"], out["probabilities"]), key="mem-answer")
c2.plotly_chart(hops_figure(amap, support), key="mem-hops")

hop = st.select_slider(
    "Hop shown in the story", list(amap.layer_labels), value=amap.layer_labels[-1], key="mem_hop"
)
k = amap.layer_labels.index(hop)
st.caption(
    "Each sentence is shaded by its weight p_i at this hop (as in the paper's Figure 2)"
    + ("; ★ marks the supporting facts." if support else ".")
)
st.html(shaded_story(amap.key_labels, amap.weights[k, 0, 0], support))

st.subheader("Memory embeddings m_i across many stories")
map_name = "memn2n-joint" if "memn2n-joint" in names else name
colour = st.radio("Colour by", ["task", "entity"], horizontal=True, key="mem_colour")
st.caption(
    f"UMAP (umap-learn) of the first hop's memory vectors m_i of `{map_name}` for about "
    f"{MAP_MEMORIES:,} sentences of test stories, plus this story's (ringed, numbered "
    "by sentence). The joint model is used when shipped, so every task shares one "
    "space. Entity = the sentence's subject."
)
with friendly_errors("the memory map"):
    from engine.models.memn2n import memory_vectors

    vectors, task_of, subject_of, texts = corpus(map_name)
    current = memory_vectors(reader(map_name), [sample])[0]
    coords = projected(map_name, current)
    groups = (task_of if colour == "task" else subject_of) + ["this story"] * len(current)
    is_current = np.r_[np.zeros(len(vectors), bool), np.ones(len(current), bool)]
    st.plotly_chart(
        memory_map(
            coords, groups, texts + list(amap.key_labels), is_current, f"m_i coloured by {colour}"
        ),
        key="mem-umap",
    )

if results:
    with st.expander(f"Measured on every task: mean accuracy {results['mean_accuracy']:.3f}"):
        st.table(
            {
                f"{t}: {TASKS[int(t)][0]}": {
                    "accuracy": r["accuracy"],
                    "paper PE LS RN (1k)": r["paper_accuracy"],
                    "paper joint": r["paper_joint_accuracy"],
                    "supporting fact, any hop": r["support_hit_any_hop"],
                    "model": r["model"],
                }
                for t, r in results["tasks"].items()
            }
        )
        st.caption(
            f"Mean {results['mean_accuracy']:.4f} vs the paper's "
            f"{results['paper_mean_accuracy']:.4f} on the same tasks (Sukhbaatar et al. "
            "2015, Table 1). Our tasks are generated like the published ones, not the "
            f"published files. Reproduce: `{results['command']}`."
        )

export_buttons(trace, "memn2n-trace")
