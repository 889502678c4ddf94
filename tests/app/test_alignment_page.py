"""The Alignment page through Streamlit's AppTest: every section renders, bad input is explained."""

import json
import threading

import pytest
from catalog import APP_DIR
from state import live
from state import nmt_training as live_state
from streamlit.testing.v1 import AppTest

from engine import timeline
from engine.training import nmt as training
from tests.app.page_support import messages


@pytest.fixture
def at(page):
    return page("alignment")


def markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def show(at, section: str):
    """Pick one of the page's sections: only the chosen one is drawn."""
    at.segmented_control(key="nmt-section").set_value(section).run()
    assert not at.exception
    return at


def test_default_example_renders_every_section(at):
    assert not at.exception
    headers = []
    for section in ("alignment", "steps", "side-by-side", "head-view", "measured"):
        headers += [h.value for h in show(at, section).header]
    for h in (
        "Soft alignment α_ij",
        "Step through the decoding",
        "Inside the score at this step",
        "Side by side",
        "bertviz head view of this cross-attention",
        "Measured on the test split",
    ):
        assert h in headers
    show(at, "alignment")
    assert at.text_area[0].value.startswith("The agreement on the european economic area")
    assert [m.label for m in at.metric][:2] == [
        "AER, sure + possible",
        "AER, sure only",
    ]
    assert "gold links" in at.metric[0].help  # what the short label leaves out


def test_side_by_side_is_one_grid_with_every_word_labelled(at):
    """Every scoring function (or beam width) in one HTML grid of the map vocabulary: panels
    never narrower than a readable map, so no word label sits on another (three Plotly
    figures side by side put 24 pairs of source words on top of each other)."""
    show(at, "side-by-side")
    for compare, n in (("scoring", 4), ("beams", 3)):
        at.segmented_control(key="nmt-compare").set_value(compare).run()
        assert not at.exception
        grids = [h.proto.body for h in at.get("html") if "kit-agrid" in h.proto.body]
        assert len(grids) == 1 and not at.get("plotly_chart")
        assert grids[0].count('class="kit-agrid-panel"') == n
        assert grids[0].count("august") >= n  # each panel names every source word
        listed = [m.value for m in at.markdown if m.value.startswith("- **")]
        assert len(listed) == 1 and listed[0].count("- **") == n  # every translation, above


def test_empty_input_prompts(at):
    at.text_area[0].set_value("   ").run()
    assert not at.exception
    assert any("Type a sentence" in i.value for i in at.info)


def test_over_long_input_names_the_limit(at):
    at.text_area[0].set_value("the minister " * 30).run()
    assert not at.exception
    assert any("limit here is 50" in i.value for i in at.info)


def test_unknown_words_are_listed_and_typed_text_survives_reruns(at):
    at.text_area[0].set_value("The zorblax signed the **treaty** <script>.").run()
    assert not at.exception
    warning = " ".join(w.value for w in at.warning)
    assert "zorblax" in warning and "script" in warning
    at.slider(key="nmt-beam").set_value(2).run()
    assert at.text_area[0].value == "The zorblax signed the **treaty** <script>."


def test_step_slider_and_beam_change(at):
    """One step picker: the page's slider moves the bars with the words and vectors below
    them; the figure keeps only its play button (its own slider was a second picker that
    moved the bars while the text spoke of the page's step)."""
    show(at, "steps")
    at.slider(key="nmt-step").set_value(2).run()
    assert not at.exception
    assert "At step **2**" in markdown(at)
    (anim,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if "frames" in c.proto.spec]
    assert "sliders" not in anim["layout"] and anim["layout"]["title"]["text"].startswith("step 2")
    assert anim["data"][0]["y"] == anim["frames"][1]["data"][0]["y"]


def test_the_scores_panels_each_keep_their_title_within_their_width(at):
    """Inside the score: five panels side by side, each title wrapped to its own panel (on the
    narrowest page "tanh(W_a s_{i−1} + U_a h_j)" ran over both neighbours' titles)."""
    import re

    from kit.fonts import label_px
    from views.heatmap import NARROW_PX

    show(at, "steps")
    (spec,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if "tanh" in c.proto.spec]
    layout = spec["layout"]
    notes = layout["annotations"]
    assert [re.sub("<[^>]+>", "", a["text"]).startswith("tanh") for a in notes][1]
    for i, note in enumerate(notes, start=1):
        lo, hi = layout["xaxis" if i == 1 else f"xaxis{i}"]["domain"]
        lines = re.sub("<[^>]+>", "", note["text"].replace("<br>", "\n")).split("\n")
        assert label_px(lines, 16) <= (hi - lo) * NARROW_PX, note["text"]
    assert layout["margin"]["t"] >= 30 + 20 * max(a["text"].count("<br>") + 1 for a in notes)


def test_drawn_sentence_has_gold(at):
    at.button[0].click().run()
    assert not at.exception
    assert len(at.metric) >= 2


def test_dates_task(at):
    at.radio(key="nmt-task").set_value("dates").run()
    assert not at.exception
    assert at.text_area[0].value == "Tuesday, 3 May 1979"
    at.text_area[0].set_value("x" * 41).run()
    assert any("40" in i.value for i in at.info)


def coverage_html(at) -> str:
    return " ".join(h.proto.body for h in at.get("html") if "kit-coverage" in h.proto.body)


def test_unknown_word_is_marked_and_a_replacement_applies(at):
    at.text_area[0].set_value("The zorblax signed the treaty.").run()
    assert not at.exception
    marks = coverage_html(at)
    assert "kit-unknown" in marks and "zorblax" in marks
    assert marks.count("kit-known") == 5  # the, signed, the, treaty, .
    offered = at.button(key="nmt-fix-1-0")
    replacement = offered.label
    offered.click().run()
    assert not at.exception
    assert at.text_area[0].value == f"The {replacement} signed the treaty."
    assert "kit-unknown" not in coverage_html(at)
    assert any("A sentence of the grammar" in s.value for s in at.success)


def test_apply_all_replaces_every_unknown_word(at):
    at.text_area[0].set_value("The minister didn't sign the treatys.").run()
    at.button(key="nmt-fix-all").click().run()
    assert not at.exception
    assert at.text_area[0].value == "The minister did not sign the treaty."
    assert any("active verb" in s.value and "negation" in s.value for s in at.success)


def test_known_words_in_an_uncovered_construction_are_explained(at):
    at.text_area[0].set_value("The exam was difficult.").run()
    assert not at.exception
    assert "kit-unknown" not in coverage_html(at)
    assert any("stop at “difficult”" in i.value for i in at.info)


def test_vocabulary_and_patterns_open_and_filter(at):
    at.button(key="nmt-browse").click().run()
    assert not at.exception
    assert at.segmented_control(key="nmt-section").value == "vocabulary"
    assert "What the English → French models know" in [h.value for h in at.header]
    words, patterns = at.dataframe[0].value, at.dataframe[1].value
    assert len(words) > 900 and "traité (m)" in set(words["French"])
    assert len(patterns) == 13 and "Le professeur aime le livre." in set(patterns["its French"])
    at.text_input(key="nmt-vocab-query").set_value("treat").run()
    assert set(at.dataframe[0].value["English"]) == {"treaty", "treatment"}
    at.selectbox(key="nmt-vocab-part").set_value("verb").run()
    assert at.dataframe[0].value.empty  # no verb reads "treat"
    assert at.query_params["find"] in ("treat", ["treat"])  # the filter is in the link
    assert at.query_params["part"] in ("verb", ["verb"])


def test_dates_task_has_no_grammar_check(at):
    at.radio(key="nmt-task").set_value("dates").run()
    assert not at.exception
    assert not coverage_html(at)
    assert "vocabulary" not in at.segmented_control(key="nmt-section").options


# ---- how α came to be (issue 21): the training timeline and a model trained now ---------

TRAINING_KEY = "nmt-tl-{}-step"


def figure_titles(at) -> list[str]:
    figs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return [f["layout"].get("title", {}).get("text", "") for f in figs]


@pytest.fixture(scope="module")
def quick_timelines(tmp_path_factory):
    """--quick timelines under the shipped models' names (the page reads them instead)."""
    d = tmp_path_factory.mktemp("nmt-timelines")
    training.main(["--task", "en-fr", "--quick", "--out-dir", str(d)])
    training.main(["--task", "en-fr", "--no-attention", "--quick", "--out-dir", str(d)])
    return d


def redirect_timelines(monkeypatch, directory):
    """Read every timeline from ``directory`` (the checkpoints stay where they are)."""
    real = timeline.paths
    monkeypatch.setattr(timeline, "paths", lambda name, _: real(name, directory))


def test_the_step_slider_redraws_the_probes_map_and_marks_the_curves(
    at, monkeypatch, quick_timelines
):
    redirect_timelines(monkeypatch, quick_timelines)
    model = at.selectbox(key="nmt-model-en-fr").value
    tl = timeline.load(model, quick_timelines)
    show(at, "training")
    slider = at.select_slider(key=TRAINING_KEY.format(model))
    assert list(slider.options) == [str(s) for s in tl.steps] and slider.value == tl.steps[-1]
    for step in (tl.steps[0], tl.steps[len(tl.steps) // 2]):
        at.select_slider(key=TRAINING_KEY.format(model)).set_value(step).run()
        assert not at.exception, step
        assert figure_titles(at)[0].startswith(f"α_ij at training step {step} ")
        curves = json.loads(at.get("plotly_chart")[1].proto.spec)
        assert any(
            s["x0"] == max(step, 1) and s["line"]["dash"] == "dash"
            for s in curves["layout"]["shapes"]
        )
        said = f"At step {step} the model translates it"  # body text: a projector shows it
        assert any(said in m.value for m in at.markdown)
    at.selectbox(key=f"nmt-tl-{model}-probe").set_value(1).run()
    assert not at.exception and "did not sign" not in figure_titles(at)[0]
    assert at.query_params["probe"] in ("1", ["1"])  # the probe shown is in the link


def test_the_baseline_has_curves_and_no_map(at, monkeypatch, quick_timelines):
    redirect_timelines(monkeypatch, quick_timelines)
    at.selectbox(key="nmt-model-en-fr").set_value("nmt-enfr-none").run()
    show(at, "training")
    assert "has no map: only its curves" in messages(at)
    assert len(at.get("plotly_chart")) == 1  # the curves


def test_a_missing_timeline_is_a_message_and_the_model_still_translates(at, monkeypatch, tmp_path):
    redirect_timelines(monkeypatch, tmp_path)  # nothing there
    show(at, "training")
    assert "No training timeline is shipped for nmt-enfr-" in messages(at)
    assert "python -m engine.train nmt --task en-fr" in messages(at)
    assert not at.get("plotly_chart")
    show(at, "alignment")
    assert len(at.get("plotly_chart")) >= 1 and len(at.metric) >= 2


def test_a_damaged_timeline_is_a_message(at, monkeypatch, tmp_path):
    model = at.selectbox(key="nmt-model-en-fr").value
    weights, meta = timeline.paths(model, tmp_path)
    weights.write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{")  # cut short, as by a broken copy
    meta.write_text('{"format": "attention-studio-timeline", "version": 1, "steps": [0, 10')
    redirect_timelines(monkeypatch, tmp_path)
    show(at, "training")
    assert f"training timeline of {model} cannot be read" in messages(at)
    assert not at.get("plotly_chart")


def train_now(at, task: str = "dates", seed: int = 7):
    show(at, "live")
    at.radio(key="nmt-live-task").set_value(task)
    at.number_input(key="nmt-live-seed").set_value(seed)
    at.button(key="nmt-live-train").click().run(timeout=300)
    assert not at.exception, [e.value for e in at.exception]
    return at


def live_steps(monkeypatch, steps: int) -> None:
    """The engine's live presets cut short (the card reads them; so does its command)."""
    for task in ("dates", "en-fr"):
        monkeypatch.setitem(training.LIVE[task], "steps", steps)


def test_train_it_now_streams_then_shows_its_film_and_command(at, monkeypatch):
    live_steps(monkeypatch, 12)
    train_now(at, "en-fr", 7)
    (task, seed), tl = at.session_state["nmt-live-result"]
    assert (task, seed) == ("en-fr", 7) and tl.steps[-1] == 12 and tl.meta["stopped"] is None
    assert "aer" in tl.metrics and tl.probes[-1][0].maps["alignment"].shape[2:] == (9, 8)
    assert len(at.get("plotly_chart")) == 2  # the film's map and curves
    command = "python -m engine.train nmt --task en-fr --live --seed 7 --steps 12"
    assert any(command in c.value for c in at.caption)


def test_a_second_request_while_one_runs_is_a_message(at, monkeypatch):
    live_steps(monkeypatch, 10)
    show(at, "live")
    at.session_state["nmt-live"] = ("dates", 3)  # as if a run were under way
    at.session_state["nmt-live-film"] = live.Film("film")
    at.radio(key="nmt-live-task").set_value("dates")
    at.number_input(key="nmt-live-seed").set_value(4)
    at.button(key="nmt-live-train").click().run(timeout=300)
    assert not at.exception
    assert "already running here (Dates → ISO 8601, seed 3)" in messages(at)
    (task, seed), _ = at.session_state["nmt-live-result"]
    assert (task, seed) == ("dates", 3), "the running one went on"


def test_a_live_run_when_every_slot_is_taken_says_busy(at, monkeypatch):
    taken = threading.BoundedSemaphore(1)
    taken.acquire()
    monkeypatch.setattr(live, "slots", lambda: taken)
    live_steps(monkeypatch, 10)
    train_now(at, "dates", 11)
    assert "already training 2 models live" in messages(at)
    assert "nmt-live-result" not in at.session_state and "nmt-live" not in at.session_state


def test_a_seed_out_of_range_in_the_link_is_a_note():
    at = AppTest.from_file(str(APP_DIR / "studios" / "alignment.py"), default_timeout=120)
    at.query_params["section"] = "live"
    at.query_params["seed"] = "5000"
    at.run()
    assert not at.exception
    assert "“seed” could not be used here" in messages(at)
    assert at.number_input(key="nmt-live-seed").value == 0


def test_the_live_job_stops_on_cancel_and_on_the_time_limit(monkeypatch):
    cancel, slots = threading.Event(), threading.BoundedSemaphore(1)

    def progress(done, total, text):
        assert text.startswith("loss ") and total == 200
        if done == 12:
            cancel.set()

    train = live.fit(live_state.live_card("dates"), 0, 200)
    tl = live.job(
        train, 200, live.Film(), slots, "loss {loss:.2f}", cancel=cancel, progress=progress
    )
    assert tl.meta["stopped"] == "cancel" and tl.steps[-1] == 12
    assert slots.acquire(blocking=False), "the slot was given back"
    slots.release()
    monkeypatch.setattr(live, "SECONDS", 0.0)
    film, cancel = live.Film(), threading.Event()
    tl = live.job(train, 200, film, slots, "{loss}", cancel=cancel, progress=lambda *_: None)
    assert tl.meta["stopped"] == "time" and tl.steps == [0]
    assert cancel.is_set(), "a film cut by the clock is not cached as the seed's result"
    assert film.latest() == 1  # the page saw the one snapshot taken


def test_the_measured_table_names_its_decodings_in_the_readers_language():
    """The results file writes "greedy" and "beam 5"; a Chinese reader read them as they
    were (the visual review found "greedy" once presenter mode drew the table as HTML)."""
    at = AppTest.from_file(str(APP_DIR / "studios/alignment.py"), default_timeout=120)
    at.query_params.update(lang="zh", section="measured")
    at.run()
    assert not at.exception
    decodings = set(at.dataframe[0].value["解码方式"])
    assert decodings == {"束宽 5", "贪心"}
