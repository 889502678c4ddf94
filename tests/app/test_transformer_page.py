"""AppTest for the Transformer page: our model, MiniLM, every toggle, and bad input."""

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine import checkpoints
from engine.models import registry
from engine.models.pretrained import ALLOWLIST_ENV
from tests.app.page_support import messages

APP = Path(__file__).resolve().parents[2] / "app"

PRETRAINED = "pretrained"


def text_box(at):
    return next(t for t in at.text_input if t.label == "Input")


@pytest.fixture
def ours(page):
    if not checkpoints.available("transformer-"):
        pytest.skip("no shipped Transformer checkpoint")
    at = page("transformer")
    assert not at.exception
    return at


SECTIONS = ("grid", "bertviz", "neuron", "qk")


def visit_sections(at) -> dict:
    """Select each section in turn (one is on screen at a time); what each one drew."""
    drawn = {}
    for name in SECTIONS:
        at.segmented_control(key="transformer-section").set_value(name).run()
        assert not at.exception, name
        drawn[name] = (len(at.get("plotly_chart")), bool(at.get("iframe") or at.get("html")))
    return drawn


def test_our_model_translates_and_draws_every_view(ours):
    at = ours
    assert any("Output" in m.value for m in at.markdown)
    drawn = visit_sections(at)
    # grid, enlarged head, neuron view, QK map + r
    assert sum(charts for charts, _ in drawn.values()) >= 4
    assert drawn["bertviz"][1], "bertviz view missing"
    picker = at.selectbox(key="checkpoint")
    # The cards' titles, as Compare names them; the link keeps the id
    assert "Transformer · sinusoidal PE · 2 layers × 4 heads · English → French" in picker.options
    for name in (c.name for c in registry.cards() if c.name.startswith("transformer-")):
        at.selectbox(key="checkpoint").set_value(name).run()
        assert not at.exception, name
        assert at.query_params["model"] in (name, [name])


def test_our_model_every_map_and_reading(ours):
    at = ours
    for kind in ("encoder_self", "decoder_self", "cross"):
        at.selectbox(key="attention").set_value(kind).run()
        assert not at.exception, kind
        for reading in ("heads", "mean", "rollout")[: len(at.radio(key="reading").options)]:
            at.radio(key="reading").set_value(reading).run()
            assert not at.exception, (kind, reading)
            # The head slider moves over heads only where the figure has them; rollout's
            # layers are named as its figure names them (R1 …).
            head, layer = at.select_slider(key="head-4"), at.select_slider(key="layer-2")
            assert head.disabled == (reading != "heads"), (kind, reading)
            assert (reading != "heads") == ("combines every head" in (head.help or ""))
            assert layer.format_func(0) == ("R1" if reading == "rollout" else "L0")


def test_the_cross_map_note_reads_in_chinese(ours):
    """The note under the enlarged cross-attention head is an engine message, so a 中文
    page shows it in 中文 (it stood in English: it was no message the captions knew)."""
    at = AppTest.from_file(str(APP / "studios/transformer.py"), default_timeout=180)
    at.query_params.update(lang="zh", attention="cross", reading="mean")
    at.run()
    assert not at.exception
    caption = next(c.value for c in at.caption if "解码器每个位置" in c.value)
    assert caption == "行：解码器每个位置生成的词元；各头平均", caption


def test_our_model_bad_input_is_explained(ours):
    at = ours
    text_box(at).set_value("").run()
    assert not at.exception and "Type a sentence" in messages(at)
    text_box(at).set_value("9" * 300).run()
    assert not at.exception and "300 characters; the limit here is" in messages(at)
    text_box(at).set_value("word " * 500).run()
    assert not at.exception and "the limit is 2,000" in messages(at)
    text_box(at).set_value("</script><b>zzqx</b> & \u2028").run()
    assert not at.exception


def test_a_sentence_over_the_date_models_limit_says_where_sentences_are_read(ours):
    """A teacher types a sentence into the first checkpoint, the date model: the refusal
    names the limit, and the hint says the model reads dates and which models read
    sentences. A sentence on the English → French checkpoint gets no such hint."""
    at = ours
    assert at.selectbox(key="checkpoint").value == FIRST
    text_box(at).set_value("My cat refuses to eat breakfast before sunrise.").run()
    assert not at.exception
    said = messages(at)
    assert "47 characters; the limit here is 38" in said
    assert "reads dates" in said and "English → French checkpoint" in said
    at.selectbox(key="checkpoint").set_value("transformer-enfr-sinusoidal").run()
    text_box(at).set_value("the " * 200).run()
    assert not at.exception and "the limit here is" in messages(at)
    assert "reads dates" not in messages(at)


def test_minilm_with_merging_sinks_and_rollout(page):
    at = page("transformer")
    at.radio(key="family").set_value(PRETRAINED).run()
    assert not at.exception
    text_box(at).set_value("The unbelievably quick fox.").run()
    for t in at.toggle:
        t.set_value(True)
    at.run()
    assert not at.exception
    assert any("word pieces merged" in c.value for c in at.caption)
    at.radio(key="reading").set_value("rollout").run()
    assert not at.exception


def test_minilm_refuses_over_long_text(page):
    at = page("transformer")
    at.radio(key="family").set_value(PRETRAINED).run()
    text_box(at).set_value("word " * 300).run()
    assert not at.exception and "302 subword tokens; the limit here is 256" in messages(at)


def test_model_paths_outside_the_allowlist_or_without_a_model(page, tmp_path, monkeypatch):
    (tmp_path / "allowed" / "empty").mkdir(parents=True)
    monkeypatch.setenv(ALLOWLIST_ENV, str(tmp_path / "allowed"))
    at = page("transformer")
    at.radio(key="family").set_value(PRETRAINED).run()
    at.selectbox(key="hf-model").set_value("other").run()
    assert not at.exception and "Type the path" in messages(at)
    at.text_input(key="hf-path").set_value("/etc").run()
    assert not at.exception and "outside the model allowlist" in messages(at)
    at.text_input(key="hf-path").set_value(str(tmp_path / "allowed" / "empty")).run()
    assert not at.exception and "holds no HuggingFace model" in messages(at)


@pytest.mark.parametrize("kind", ["encoder_self", "decoder_self", "cross"])
def test_neuron_view_bars_equal_the_attention_row(kind):
    """The neuron view recomputes α from q and k; it must match the map the page shows."""
    import numpy as np
    from views.transformer import neuron_figure

    from engine.models import transformer
    from engine.models.attentionviz import neuron_view

    name = "transformer-dates-sinusoidal"
    if name not in checkpoints.available("transformer-"):
        pytest.skip("no shipped dates checkpoint")
    t = transformer.trace(transformer.load(name), "the 1st of March, 1999")
    amap = t.maps[kind]
    q, k = t.vectors[f"queries.{kind}"], t.vectors[f"keys.{kind}"]
    i = amap.shape[2] - 1
    mask = np.arange(amap.shape[3]) <= i if kind == "decoder_self" else None
    nv = neuron_view(q[1, 2, i], k[1, 2], mask)
    fig = neuron_figure(nv, amap.query_labels[i], amap.key_labels)
    alpha = np.asarray(fig.data[-1].x)
    np.testing.assert_allclose(alpha, amap.weights[1, 2, i], atol=1e-5)
    # The lower panels' titles each within their column and in the band between the rows (at
    # 1024 px, sidebar open, "q ∘ k_j (sums to q·k_j)" ran into "q·k_j / √d_k and α_ij").
    from kit.fonts import label_px
    from views.heatmap import NARROW_PX

    layout = fig.layout
    band = (layout.yaxis.domain[0] - layout.yaxis2.domain[1]) * (layout.height - 70)
    lower = (layout.xaxis2, layout.xaxis3, layout.xaxis4)
    for note, axis in zip(layout.annotations[:3], lower, strict=True):
        lines = note.text.split("<br>")
        assert label_px(lines, 16) <= (axis.domain[1] - axis.domain[0]) * NARROW_PX, note.text
        assert band >= 20 * len(lines), note.text


def test_layer_and_head_drive_the_neuron_view(ours):
    at = ours
    at.segmented_control(key="transformer-section").set_value("neuron").run()
    n_layers = len(at.select_slider[0].options)
    n_heads = len(at.select_slider[1].options)
    at.select_slider[0].set_value(n_layers - 1).run()
    at.select_slider[1].set_value(n_heads - 1).run()
    assert not at.exception
    assert len(at.get("plotly_chart")) == 1
    last = f"L{n_layers - 1}"
    assert any(last in c.value and f"H{n_heads - 1}" in c.value for c in at.caption)


# -- the training timeline (issue 21): a step slider over the shipped snapshots ---------------

FIRST = "transformer-dates-sinusoidal"  # the page's first checkpoint (the registry's order)


def shipped_timeline(name: str = FIRST):
    from engine.errors import InputError
    from engine.models import registry

    try:
        return registry.get(name).timeline()
    except InputError:
        pytest.skip(f"no shipped timeline for {name}: python -m engine.train transformer")


def open_training(at):
    at.segmented_control(key="transformer-section").set_value("training").run()
    assert not at.exception
    return at


def figure_titles(at) -> list[str]:
    figs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return [f["layout"].get("title", {}).get("text", "") for f in figs]


def test_training_step_slider_redraws_the_probe_maps(ours):
    tl = shipped_timeline()
    at = open_training(ours)
    assert at.selectbox(key="checkpoint").value == FIRST
    slider = at.select_slider(key=f"tr-step-{FIRST}")
    assert list(slider.options) == [str(s) for s in tl.steps] and slider.value == tl.steps[-1]
    assert len(at.get("plotly_chart")) == 2  # the probe's layers × heads, the curves
    for step in (tl.steps[0], tl.steps[len(tl.steps) // 2], tl.steps[-1]):
        at.select_slider(key=f"tr-step-{FIRST}").set_value(step).run()
        assert not at.exception, step
        # The title names this step exactly (not 10 for 1); it wraps, the flags on a line.
        said = re.compile(rf"encoder self-attention · step {step}(?!\d)")
        titles = figure_titles(at)
        assert any(said.search(t.replace("<br>", " ")) for t in titles), titles
        output = tl.probes[tl.at(step)][0].outputs["translation"] or "(nothing)"
        said = f"At step {step} the model writes: `{output}`"  # body text: a projector shows it
        assert any(said in m.value for m in at.markdown)
    for kind in ("encoder_self", "decoder_self", "cross"):  # the page's map picker drives it
        at.selectbox(key="attention").set_value(kind).run()
        assert not at.exception, kind
    at.selectbox(key=f"tr-probe-{FIRST}").set_value(len(tl.probes[0]) - 1).run()
    assert not at.exception


def redirect_timelines(monkeypatch, directory):
    """Read every timeline from ``directory`` (the checkpoints stay where they are)."""
    from engine import timeline

    real = timeline.paths
    monkeypatch.setattr(timeline, "paths", lambda name, _: real(name, directory))


def test_missing_timeline_is_a_message_and_the_model_still_works(ours, monkeypatch, tmp_path):
    redirect_timelines(monkeypatch, tmp_path)  # nothing there
    at = open_training(ours)
    assert "No training timeline is shipped for transformer-dates-sinusoidal" in messages(at)
    assert "python -m engine.train transformer --task dates" in messages(at)
    assert any("Output" in m.value for m in at.markdown)  # the finished model answers
    at.segmented_control(key="transformer-section").set_value("grid").run()
    assert not at.exception and len(at.get("plotly_chart")) == 2


@pytest.mark.parametrize("damage", ["truncated", "no probes"])
def test_damaged_timeline_is_a_message(ours, monkeypatch, tmp_path, damage):
    from engine import timeline

    weights, meta = timeline.paths(FIRST, tmp_path)
    if damage == "truncated":  # cut short, as by a broken copy
        weights.write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{")
        meta.write_text('{"format": "attention-studio-timeline", "version": 1, "steps": [0, 10')
    else:  # a well-formed file whose steps hold no probe maps
        timeline.save(timeline.Timeline(FIRST, [0, 10], {"loss": [2.0, 1.0]}), FIRST, tmp_path)
    redirect_timelines(monkeypatch, tmp_path)
    at = open_training(ours)
    assert "training timeline of transformer-dates-sinusoidal cannot be read" in messages(at)
    assert not at.get("plotly_chart")


def test_a_decoder_writes_through_the_queue(page, monkeypatch):
    """A pretrained decoder writing tokens waits its turn in the heavy-work queue (its
    place, Cancel and the per-request time limit), like every other long computation."""
    from pathlib import Path

    from kit import queue

    model = Path(checkpoints.__file__).resolve().parents[1] / "assets/pretrained"
    if not (model / "SmolLM2-135M-Instruct").is_dir():
        pytest.skip("the chat model is not converted: bash scripts/setup.sh")
    labels, original = [], queue.run
    monkeypatch.setattr(
        queue, "run", lambda label, *a, **k: labels.append(label) or original(label, *a, **k)
    )
    at = page("transformer")
    at.radio(key="family").set_value(PRETRAINED).run()
    from engine.models import registry

    smol = next(c.name for c in registry.cards() if c.meta.get("display", "").startswith("SmolLM2"))
    at.selectbox(key="hf-model").set_value(smol).run()
    at.slider(key="hf-generate").set_value(2).run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Writing tokens" in labels, labels


@pytest.mark.parametrize(("present", "px"), [("0", 11), ("1", 14)])
def test_the_qk_maps_point_labels_grow_on_a_projector(page, present, px):
    """Each query and key of the AttentionViz scatter is named above its point: 11 px on a
    screen read as specks on a projector, where presenter mode now draws them at 14."""
    if not checkpoints.available("transformer-"):
        pytest.skip("no shipped Transformer checkpoint")
    at = AppTest.from_file(str(APP / "studios/transformer.py"), default_timeout=120)
    at.query_params.update(section="qk", present=present)
    at.run()
    assert not at.exception
    scatter = json.loads(at.get("plotly_chart")[0].proto.spec)
    named = [d for d in scatter["data"] if "text" in d.get("mode", "")]
    assert len(named) == 2  # queries and keys
    assert all(d["textfont"]["size"] == px for d in named)


def test_marks_typed_among_unknown_words_are_shown_not_rendered(ours):
    """The warning lists unknown tokens in quotes (“*”, “zorp”, “_blick_”, “[”): st.warning
    renders Markdown, so "_blick_" showed as an italic "blick", the underscores gone.
    Escaped as the message's values, the warning shows every mark as typed."""
    at = ours
    at.selectbox(key="checkpoint").set_value("transformer-enfr-sinusoidal").run()
    text_box(at).set_value("*zorp* _blick_ [qux] the cat").run()
    assert not at.exception
    warning = next(w.value for w in at.warning if "vocabulary" in w.value)
    listed = warning[warning.index("(") + 1 : warning.index(")")]
    assert r"“\*”" in listed and r"“\_blick\_”" in listed and r"“\[”" in listed
    assert re.search(r"(?<!\\)[*_\[\]]", listed) is None  # no mark left for Markdown to read
