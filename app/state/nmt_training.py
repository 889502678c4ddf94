"""The Alignment page's training views: each checkpoint's shipped timeline (how α came to
be, ``python -m engine.train nmt`` records it) and "train it now", a fresh tiny model
trained through the server's queue while the page draws its film.

A timeline is read once per process and file version (``state.timelines``), so a step-
slider move only picks a snapshot out of memory and redraws.
"""

from __future__ import annotations

from kit import queue
from kit.i18n import t

from engine.timeline import Timeline
from engine.training import nmt as training
from state import live, models, timelines

# The timeline's curves, one panel each: the metrics ``engine.train nmt`` records.
PANELS = {"loss": ("train_loss", "loss"), "task": ("accuracy", "aer")}
LIVE_TASKS = ("dates", "en-fr")
# Train it now: the preset's steps take 15–30 s of one core; the limit stops a run on a
# crowded server, where one core is shared by several jobs.
LIVE_STEPS = {task: training.LIVE[task]["steps"] for task in LIVE_TASKS}
LIVE_SECONDS = 60.0
LIVE_SLOTS = live.SLOTS  # live trainings at once on the whole server, every page together
SEEDS = (0, 999)


def timeline(name: str) -> Timeline:
    """The checkpoint's training timeline; raises the engine's InputError when it is
    missing or damaged (the page says so and keeps showing the finished model)."""
    return timelines.of(models.card(name))


def curve_panels(tl: Timeline) -> list[tuple[str, dict]]:
    """``[(panel title, {line label: (steps, values)})]`` for ``views.timeline``."""
    panels = []
    for panel, names in PANELS.items():
        lines = {t(f"alignment.metric_{m}"): tl.curve(m) for m in names if m in tl.metrics}
        if any(steps for steps, _ in lines.values()):
            panels.append((t(f"alignment.panel_{panel}"), lines))
    return panels


def metrics_at(tl: Timeline, i: int) -> str:
    """The metrics measured at saved step ``i``, as one line for a caption."""
    shown = []
    for names in PANELS.values():
        for m in names:
            value = tl.metrics.get(m, [None] * (i + 1))[i]
            if value is not None:
                shown.append(f"{t(f'alignment.metric_{m}')} {value:.3g}")
    return " · ".join(shown)


def _slots():
    return live.slots()


def _train(
    task: str, seed: int, steps: int, film: live.Film, slots, text: str, *, cancel, progress
):
    """The queue's job: ``training.live`` at one thread (so the film is the command line's,
    bit for bit), stopped by Cancel or the time limit; returns the timeline, with
    ``meta["stopped"]`` None, "cancel" or "time" and the run's times."""
    with live.one_core(
        slots, LIVE_SECONDS, steps, text, film, cancel=cancel, progress=progress
    ) as run:
        trained = training.live(task, seed, steps=steps, run=run)
    tl = trained.timeline
    tl.meta.update(
        stopped=run.stopped,
        wall_s=trained.record["wall_s"],
        cpu_s=trained.record["cpu_s"],
        command=command(task, seed, steps),
    )
    return tl


def train_live(task: str, seed: int, film: live.Film, watch) -> Timeline:
    """Train a fresh tiny model through the server's queue (progress, Cancel, one job per
    session) while ``watch()`` draws ``film``; the same seed gives the same film, so a
    finished run is shared from the queue's result cache. Raises :class:`live.Busy` when every
    slot is taken."""
    steps = LIVE_STEPS[task]
    return queue.run(
        t("alignment.live_label", task=t(f"alignment.task_{task}"), seed=seed),
        _train,
        task,
        seed,
        steps,
        film,
        _slots(),
        t("alignment.live_progress"),
        key=repr((task, seed, steps)),
        watch=watch,
    )


def film_name(task: str) -> str:
    return training.checkpoint_name(task, "additive", live=True)


def command(task: str, seed: int, steps: int) -> str:
    """The command line that saves the same run (its last map equal to the live one's)."""
    preset = training.LIVE[task]["steps"]
    return training.command(
        task, "additive", seed, False, None if steps == preset else steps, live=True
    )
