"""The Chat page's note while a generation waits for or runs in the class's batch, and the
bookkeeping that lets two sessions asking the same share one request."""

import threading

from streamlit.testing.v1 import AppTest


def note(position: int, language: str = "en") -> AppTest:
    def script():
        import streamlit as st
        from state import chat as state

        class Batch:  # what _show_place reads of a Batcher
            def position(self, ticket):
                return ticket.place

            def estimated_wait(self, ticket):
                return 12.4

            def load_info(self):
                return {"active": 5}

        class Ticket:
            place = st.session_state["place"]
            steps = (3, 20)

        state._show_place(st.empty(), Batch(), Ticket())

    at = AppTest.from_function(script, default_timeout=60)
    at.session_state["place"] = position
    at.query_params["lang"] = language
    return at.run()


def test_a_waiting_request_shows_its_place_and_the_estimated_wait():
    at = note(3)
    assert not at.exception, [e.value for e in at.exception]
    (info,) = at.info
    assert "place 3 in line" in info.value and "about 12 s" in info.value


def test_a_running_request_shows_its_tokens_and_the_others_in_the_batch():
    at = note(0)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.info
    (bar,) = at.get("progress")
    assert "4 other request(s): 3 / 20 tokens, about 12 s left" in bar.proto.text


def test_two_sessions_asking_the_same_share_one_request_and_a_left_one_is_cancelled():
    from state.chat import _Line

    class Ticket:
        def __init__(self):
            self.done, self.cancelled = threading.Event(), False

        def cancel(self):
            self.cancelled = True

    line, made = _Line(), []

    def submit():
        made.append(Ticket())
        return made[-1]

    a = line.join("s1", "same", submit)
    assert line.join("s2", "same", submit) is a and len(made) == 1
    assert not line.alone("s1", "same")  # Stop in s1 must not cancel s2's text
    line.join("s1", "other", submit)
    assert not a.cancelled  # s2 still waits for it
    line.join("s2", "third", submit)
    assert a.cancelled  # nobody waits for it any more
    line.leave("s1", "other")
    assert "other" not in line.tickets


def test_a_rerun_waits_again_for_its_own_ticket_and_a_new_ask_cancels_the_old():
    """Stop reruns the page: the rerun (the run before it did not leave the line) finds the
    ticket that is writing, so Stop cancels that one, with what it wrote; a new prompt from
    the same session cancels the one it left; a stopped ticket is asked again; a finished
    one whose session went to another page is let go at the next join."""
    from state.chat import _Line

    class Ticket:
        def __init__(self):
            self.done, self.cancelled = threading.Event(), threading.Event()

        def cancel(self):
            self.cancelled.set()

    line, made = _Line(), []

    def submit():
        made.append(Ticket())
        return made[-1]

    writing = line.join("s1", "story", submit)
    assert line.join("s1", "story", submit) is writing and len(made) == 1  # the rerun
    writing.cancel()
    writing.done.set()  # Stop: it ends with what it wrote
    line.leave("s1", "story")
    again = line.join("s1", "story", submit)
    assert again is not writing and len(made) == 2  # Generate again: a fresh run
    line.join("s1", "new prompt", submit)
    assert again.cancelled.is_set()  # the one left behind, nobody else waiting
    made[-1].done.set()  # finished while s1 looked at another page (its run never left)
    line.join("s2", "other", submit)
    assert "new prompt" not in line.tickets and "s1" not in line.sessions
