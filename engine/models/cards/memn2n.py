"""End-To-End Memory Network checkpoints (one per bAbI task, one joint) as model cards.

Text input is a story, one sentence per line, with the question as the last line
(``Where is Mary?``); pasted bAbI lines (``1 Mary moved to the bathroom.``) work too. A
generated :class:`engine.data.babi.Sample` is accepted as is (it carries its answer and
supporting facts, which the trace then reports).
"""

from __future__ import annotations

import importlib
from pathlib import Path

from engine import checkpoints
from engine.data.babi import MAX_STORY_CHARS, dataset, user_story, words
from engine.data.babi_tasks import TASKS
from engine.errors import InputError
from engine.messages import Message
from engine.models.card import Example, Limits, ModelCard

RESULT = checkpoints.result_name("memn2n")  # one file for every MemN2N checkpoint

JOINT_EXAMPLE = (
    "Mary moved to the bathroom.\nJohn went to the hallway.\n"
    "Daniel went back to the kitchen.\nMary travelled to the office.\nWhere is Mary?"
)


def as_text(sample) -> str:
    """A Sample written the way a user types one: the facts, then the question."""
    return "\n".join((*sample.story, sample.question))


def parse(text: str):
    """Story lines and the question (the last line ending in '?') → a Sample."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if lines and lines[-1].endswith("?") and not lines[-1][:1].isdigit():
        return user_story("\n".join(lines[:-1]), lines[-1])
    return user_story(text, "")


class MemN2NCard(ModelCard):
    family = "memn2n"
    runtime_module = "engine.models.memn2n"
    paper = "Sukhbaatar, Szlam, Weston & Fergus 2015"
    default_variant = "joint"  # one model that reads every task
    result_name = RESULT

    @property
    def tasks(self) -> list[int]:
        return list(self.meta["tasks"])

    @property
    def task(self) -> str:
        return "babi"

    @property
    def variant(self) -> str:
        return "joint" if len(self.tasks) > 1 else f"task {self.tasks[0]}"

    def knows(self, babi_task: int) -> bool:
        """True when this checkpoint was trained on ``babi_task`` (1–20)."""
        return babi_task in self.tasks

    @classmethod
    def best_for(cls, babi_task: int, directory: Path | None = None) -> str:
        """The checkpoint that serves ``babi_task``: the one ``memn2n-eval.json`` chose (its
        own model or the joint one, whichever was more accurate on the task's dev
        questions). Without that file: the joint model when it knows the task, else the
        task's own. A checkpoint named there but not shipped is passed over."""
        shipped = set(checkpoints.available("memn2n-", directory))
        saved = checkpoints.load_result(RESULT, directory) or {}
        chosen = saved.get("tasks", {}).get(str(babi_task), {}).get("model")
        if chosen in shipped:
            return chosen
        name = importlib.import_module(cls.runtime_module).checkpoint_name
        joint, own = name("joint"), name(babi_task)
        if joint in shipped and babi_task in checkpoints.load_meta(joint, directory)["tasks"]:
            return joint
        if own in shipped:
            return own
        raise checkpoints.CheckpointError("checkpoint.no_memn2n_task", task=babi_task)

    @property
    def title(self) -> str:
        c = self.meta["config"]
        which = (
            Message("card.memn2n.joint", n=len(self.tasks))
            if len(self.tasks) > 1
            else Message("card.memn2n.task", task=self.tasks[0], name=TASKS[self.tasks[0]][0])
        )
        return Message("card.memn2n.title", which=which, hops=c["hops"], d=c["d"])

    @property
    def limits(self) -> Limits:
        return Limits(
            max_chars=MAX_STORY_CHARS,
            max_sentences=self.meta["config"]["memory"],
            empty=Message("card.memn2n.empty"),
        )

    @property
    def examples(self) -> tuple[Example, ...]:
        if len(self.tasks) > 1:
            return (Example(Message("example.where_is_mary"), JOINT_EXAMPLE),)
        t = self.tasks[0]
        return tuple(
            Example(Message("example.babi_story", task=t, i=i), as_text(s))
            for i, s in enumerate(dataset(t, "test")[:3])
        )

    @property
    def evaluate_command(self) -> str:
        return "python -m engine.evaluate memn2n --task all --save"

    def results(self) -> dict | None:
        """The tasks this model answers best in the family's file (it serves those)."""
        saved = self.saved_results()
        if saved is None:
            return None
        served = {t: r for t, r in saved.get("tasks", {}).items() if r.get("model") == self.name}
        dev = {
            t: r["dev_accuracy"][self.name]
            for t, r in saved.get("tasks", {}).items()
            if self.name in r.get("dev_accuracy", {})
        }
        return {"served_tasks": served, "dev_accuracy": dev, "paper": saved.get("paper")}

    def sort_key(self) -> tuple:
        return (1, 0) if len(self.tasks) > 1 else (0, self.tasks[0])

    def check(self, input) -> None:
        if isinstance(input, str):
            super().check(input)
        elif not hasattr(input, "story"):
            raise InputError("card.memn2n.not_a_story")

    def assess(self, trace) -> str | None:
        """Unknown words in the question, or in much of the story, make the answer a guess."""
        unknown = set(trace.outputs.get("unknown_words", []))
        asked = [w for w in words(trace.inputs["question"]) if w in unknown]
        story = [w for s in trace.inputs["story"] for w in words(s)]
        if asked or sum(w in unknown for w in story) > len(story) / 3:
            listed = ", ".join(f"“{w}”" for w in sorted(unknown)[:8])
            return Message("warn.memn2n_unknown", words=listed)
        return None

    def load(self):
        return self.runtime.load(self.name, self.directory)

    def _trace(self, model, input):
        return self.runtime.answer(model, parse(input) if isinstance(input, str) else input)
