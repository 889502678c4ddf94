"""AppTest for the Watch-attention-learn page: the step slider over the shipped timelines,
the lesson step, and bad input (a step that was not saved, a missing or truncated
timeline) answered with a short message while the page shows what it can."""

from __future__ import annotations

import json
import shutil

import pytest
import streamlit as st
from catalog import APP_DIR
from state import live
from streamlit.testing.v1 import AppTest
from views import timeline

from engine.analysis import induction as analysis
from engine.errors import InputError
from engine.training import induction as training
from tests.app.page_support import messages

PAGE = str(APP_DIR / "studios" / "learning.py")


def shipped(n_layers: int) -> dict:
    try:
        return analysis.load_timeline(n_layers)
    except InputError:
        pytest.skip("no shipped induction timeline: python -m engine.train induction")


@pytest.fixture
def timeline_dir(monkeypatch, tmp_path):
    """The page reads the toy's checkpoints and timelines from a copy the test may break
    (the cards' folder pointed at it)."""
    from engine.models.cards import induction as cards

    for n_layers in (1, 2):
        shipped(n_layers)
    for path in analysis.TIMELINE_DIR.iterdir():
        shutil.copy(path, tmp_path / path.name)
    monkeypatch.setattr(cards, "FOLDER", tmp_path)
    st.cache_data.clear()
    st.cache_resource.clear()
    yield tmp_path
    st.cache_data.clear()
    st.cache_resource.clear()


def open_page(**params) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def charts(at):
    return at.get("plotly_chart")


def captions(at) -> str:
    return "\n".join(c.value for c in at.caption)


def test_the_slider_walks_the_saved_steps_and_redraws_the_maps():
    two = shipped(2)
    at = open_page()
    slider = at.select_slider(key="learn-step")
    assert [int(s) for s in slider.options] == [int(s) for s in two["steps"]]
    assert int(slider.value) == int(two["steps"][-1])  # the finished model first
    assert len(charts(at)) == 2  # the two-layer model and the one-layer control
    change = two["meta"]["phase_change"]
    curves = analysis.headline(two)
    for step in (change["start"], change["end"]):
        at.select_slider(key="learn-step").set_value(step).run()
        assert not at.exception
        i = list(two["steps"]).index(step)
        assert f"best layer-1 induction score {curves['induction'][i]:.2f}" in captions(at)
    assert at.query_params["step"] == str(change["end"])  # a copied link opens this step


def test_the_curves_mark_the_phase_change():
    change = shipped(2)["meta"]["phase_change"]
    at = open_page(section="curves")
    assert len(charts(at)) == 1
    assert f"steps {change['start']}–{change['end']}" in captions(at)


@pytest.mark.parametrize("present", ["0", "1"])
def test_the_curves_legend_takes_one_row_across_the_page(present):
    """The curves span the page, but their legend's rows were counted at a column's 360
    px: two rows for two models, and a blank band above the first panel's title."""
    shipped(2)
    at = open_page(section="curves", present=present)
    fig = json.loads(charts(at)[0].proto.spec)
    size = fig["layout"]["legend"]["font"]["size"]
    assert size == (timeline.PRESENTER_FONT if present == "1" else timeline.LEGEND_FONT)
    one_row = 8 + round(timeline.LEGEND_ROW_EM * size + timeline.NOTE_EM * size)
    assert fig["layout"]["margin"]["t"] == one_row


def test_a_step_that_was_not_saved_is_a_note_and_the_last_step():
    two = shipped(2)
    at = open_page(step="999999")
    assert any("“step” could not be used" in i.value for i in at.info)
    assert int(at.select_slider(key="learn-step").value) == int(two["steps"][-1])
    assert len(charts(at)) == 2


def test_a_missing_timeline_leaves_the_other(timeline_dir):
    (timeline_dir / f"{analysis.timeline_name(2)}.safetensors").unlink()
    at = open_page()
    assert "No training timeline is shipped for induction-2l" in messages(at)
    assert len(charts(at)) == 1  # the control still shows
    for path in timeline_dir.iterdir():
        path.unlink()
    at = open_page()
    assert sum("timeline" in i.value and "shipped" in i.value for i in at.info) == 2
    assert not charts(at)


def test_a_truncated_timeline_is_a_short_message(timeline_dir):
    path = timeline_dir / f"{analysis.timeline_name(2)}.safetensors"
    path.write_bytes(path.read_bytes()[:1000])
    at = open_page()
    assert any("cannot be read" in i.value for i in at.info)
    assert len(charts(at)) == 1


def test_the_lesson_asks_only_where_its_answer_waits():
    at = open_page(section="curves")  # the curves show the phase change the lesson asks about
    assert charts(at) and "learn-reveal" not in [b.key for b in at.button]


def test_the_lesson_hides_the_film_until_the_reveal():
    at = open_page(predict="1")
    assert not charts(at), "the curves would give the answer away"
    at.button(key="learn-reveal").click().run()  # no guess: the answer alone
    assert not at.exception and len(charts(at)) == 2
    assert any("No guess" in i.value for i in at.info)
    at.button(key="learn-again").click().run()
    at.get("button_group")[0].set_value("sudden").run()
    at.button(key="learn-reveal").click().run()
    assert any("Right." in s.value and "phase change" in s.value for s in at.success)
    at.button(key="learn-again").click().run()
    at.get("button_group")[0].set_value("smooth").run()
    at.button(key="learn-reveal").click().run()
    assert any(w.value.startswith("Not “Smoothly") for w in at.warning)


def test_your_own_sequence_runs_both_toys_through_their_cards():
    """Typed ids through the finished toys: a head-map figure per model, and body text (a
    projector shows it; captions are hidden there) saying how many repeats each continued —
    all of them for the two-layer model on a block typed twice, far fewer for the control;
    an id out of range is a message."""
    shipped(2)
    at = open_page(section="own")
    assert len(charts(at)) == 2
    text = "5 40 17 33 8 21 5 40 17 33 8 21"
    at.text_input(key="learn-own").set_value(text).run()
    assert not at.exception
    said = [m.value for m in at.markdown if "it predicted" in m.value]
    assert len(said) == 2 and "it predicted **5 of 5**" in said[0]
    assert "it predicted **5 of 5**" not in said[1]
    assert at.query_params["text"] == text  # a copied link opens this sequence
    at.text_input(key="learn-own").set_value("5 99").run()
    assert not at.exception
    assert any("token ids, from 1 to 63" in i.value for i in at.info)


def test_your_own_sequence_reads_letters_and_words_as_symbols():
    """A class types letters, not ids: each distinct symbol stands for an id, the caption
    says which, and the predictions are written as the symbols (escaped: a symbol is user
    text in Markdown)."""
    shipped(2)
    at = open_page(section="own")
    at.text_input(key="learn-own").set_value("a * c d a * c d").run()
    assert not at.exception and len(charts(at)) == 2
    said = [m.value for m in at.markdown if "it predicted" in m.value]
    assert "it predicted **3 of 3**" in said[0]
    assert "\\*✓ c✓ d✓" in said[0]  # the second copy continued, the asterisk kept literal
    assert any("a = 1 · \\* = 2 · c = 3 · d = 4" in c.value for c in at.caption)
    heat = [d for d in json.loads(charts(at)[0].proto.spec)["data"] if d["type"] == "heatmap"]
    tokens = ["BOS", "a", "*", "c", "d", "a\u2009#2", "*\u2009#2", "c\u2009#2", "d\u2009#2"]
    assert heat[0]["y"] == tokens  # a repeat numbered, a thin space before its number


# ---- train it now ----------------------------------------------------------------------


def train_now(at: AppTest, seed: int = 7, layers: int = 2) -> AppTest:
    at.segmented_control(key="learn-section").set_value("live").run()
    at.number_input(key="learn-seed").set_value(seed)
    at.radio(key="learn-layers").set_value(layers)
    at.button(key="learn-train").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_live_run_ends_on_the_command_lines_last_map(monkeypatch, tmp_path):
    """Same seed, same film: the live run's last probe map is the one the train command
    saves for that seed and step count (float16 on disk, so compared at float16)."""
    import subprocess
    import sys

    import numpy as np

    monkeypatch.setattr(training, "LIVE_STEPS", 30)
    at = train_now(AppTest.from_file(PAGE, default_timeout=300).run())
    request, live = at.session_state["learn-result"]
    assert request == (2, 7) and live["meta"]["stopped"] is None
    assert int(live["steps"][-1]) == 30
    assert len(charts(at)) == 2  # the finished run's maps and curves
    command = "python -m engine.train induction --layers 2 --seed 7 --live --steps 30"
    assert command in captions(at)
    subprocess.run(  # the caption's command, as a visitor copies it, into a folder of ours
        [sys.executable, *command.split()[1:], "--out-dir", str(tmp_path)],
        check=True,
        capture_output=True,
        cwd=analysis.checkpoints.ROOT,
    )
    saved = analysis.load_timeline(2, tmp_path)
    assert np.array_equal(live["steps"], saved["steps"])
    assert np.array_equal(live["maps"][-1].astype(np.float16), saved["maps"][-1].astype(np.float16))
    assert np.array_equal(live["loss"], saved["loss"])


def test_a_run_stopped_by_the_clock_does_not_claim_the_command_lines_last_map(monkeypatch):
    """The command trains the whole run: a film cut short shares its earlier snapshots,
    not its last map (the caption said it did, whatever stopped the run)."""
    monkeypatch.setattr(live, "SECONDS", 0.5)
    at = train_now(AppTest.from_file(PAGE, default_timeout=120).run(), seed=12)
    _, film = at.session_state["learn-result"]
    last = int(film["steps"][-1])
    assert film["meta"]["stopped"] == "time" and 0 < last < training.LIVE_STEPS
    said = captions(at)
    assert f"--seed 12 --live --steps {training.LIVE_STEPS}" in said
    assert f"its snapshots before step {last} are this film's" in said
    assert "last map equals" not in said


def test_the_same_run_caption_reads_whether_the_run_stopped():
    meta = dict(command="python -m engine.train induction", wall_s=1.5, cpu_s=1.2, stopped=None)
    assert "its last map equals the one above" in live.same_run("learning", meta, 800)
    for stopped in ("cancel", "time"):
        said = live.same_run("alignment", {**meta, "stopped": stopped}, 37)
        assert "snapshots before step 37" in said and "last map" not in said


def test_a_live_run_when_every_slot_is_taken_says_busy(monkeypatch):
    import threading

    taken = threading.BoundedSemaphore(1)
    taken.acquire()
    monkeypatch.setattr(live, "slots", lambda: taken)
    monkeypatch.setattr(training, "LIVE_STEPS", 10)
    at = train_now(AppTest.from_file(PAGE, default_timeout=120).run(), seed=11)
    assert any("already training" in w.value for w in at.warning)
    assert "learn-result" not in at.session_state and "learn-live" not in at.session_state


def test_the_live_job_stops_on_cancel_and_on_the_time_limit(monkeypatch):
    import threading

    from state import learning as state

    cancel, slots = threading.Event(), threading.BoundedSemaphore(1)

    def progress(done, total, text):
        assert text.startswith("loss ") and total == 200
        if done == 12:
            cancel.set()

    film = state.new_film()
    train = live.fit(state.toy_cards()[0], 0, 200)
    tl = live.job(train, 200, film, slots, "loss {loss:.2f}", cancel=cancel, progress=progress)
    assert tl.meta["stopped"] == "cancel" and tl.steps[-1] == 12
    assert slots.acquire(blocking=False), "the slot was given back"
    slots.release()
    monkeypatch.setattr(live, "SECONDS", 0.0)
    film = state.new_film()
    cancel = threading.Event()
    train = live.fit(state.toy_cards()[1], 0, 200)
    tl = live.job(train, 200, film, slots, "{loss}", cancel=cancel, progress=lambda *_: None)
    assert tl.meta["stopped"] == "time" and tl.steps == [0]
    assert cancel.is_set(), "a film cut by the clock is not cached as the seed's result"
    assert film.latest() == 1  # the page saw the one snapshot taken
