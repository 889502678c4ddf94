"""The Alignment page's training views: each checkpoint's shipped timeline (how α came to
be, ``python -m engine.train nmt`` records it) and "train it now", a fresh tiny model
trained through the server's queue while the page draws its film.

A timeline is read once per process and file version (``state.timelines``), so a step-
slider move only picks a snapshot out of memory and redraws.
"""

from __future__ import annotations

from kit.i18n import t

from engine.timeline import Timeline
from state import live, models, timelines

# The timeline's curves, one panel each: the metrics ``engine.train nmt`` records.
PANELS = {"loss": ("train_loss", "loss"), "task": ("accuracy", "aer")}
LIVE_TASKS = ("dates", "en-fr")
LIVE_SECONDS = live.SECONDS
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


def live_card(task: str):
    """The task's default model's card: its ``train_now`` is the page's live run (a tiny
    RNNsearch of the same kind)."""
    return models.card(models.default(task, "nmt"))


def train_live(task: str, seed: int, film: live.Film, watch) -> Timeline | None:
    """Train a fresh tiny model live through the task's card (:func:`live.train_card`)
    while ``watch()`` draws ``film``."""
    label = t("alignment.live_label", task=t(f"alignment.task_{task}"), seed=seed)
    unit = t("alignment.live_progress")
    return live.train_card(live_card(task), seed, label, unit, film, watch=watch)
