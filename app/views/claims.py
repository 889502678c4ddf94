"""The seed's claims, checked: the numbers of one topic as a table, on the page it belongs to.

``bench/claims.py`` measures every number the seed states and saves them as the "claims"
evaluation (engine.checkpoints.result_name); ``bench/gpu_attention.py`` adds the GPU
column on a CUDA machine. This module reads that file and builds one row per measured
number: the quantity, the seed's claim, the value measured here, its conditions (device,
n, d, heads, dtype), whether it falls inside the claim, and the GPU's value beside it.

Topics: ``flash`` and ``int8`` and ``oom`` (the Variants lab), ``kv_cache`` (the chat
model), ``pe`` (positional encoding). The 8K row's memory is the variants' memory model
evaluated when the table is built, so the table shows what the model says now.
"""

from __future__ import annotations

import re
from pathlib import Path

from kit.i18n import t

from engine import checkpoints, profile

RESULT = checkpoints.result_name("claims")
COMMAND = "nice -n 5 python bench/claims.py"
TOPICS = ("flash", "int8", "oom", "kv_cache", "pe")
NO_GPU = "no GPU lent"  # what bench/claims.py writes as the GPU status until one is lent
_LENGTH = re.compile(r"\.(?:n|L)\d+$")


def load(directory: Path | None = None) -> dict | None:
    """The saved claims evaluation, or None when it was never measured (or is unreadable)."""
    found = checkpoints.load_result(RESULT, directory)
    return found if isinstance(found, dict) and isinstance(found.get("rows"), list) else None


def missing_message() -> str:
    """What the page says when nothing has been measured yet: the command that measures it."""
    return t("claims.missing", command=COMMAND)


def predicted_bytes(n: int, d: int, heads: int) -> float:
    """Full attention's memory at n by the variants' model: heads·(n²·4 + 4·n·d·4) bytes
    (the n × n float32 map, plus q, k, v and the output)."""
    return profile.predict_bytes("full", n, d, heads)


def label_key(row_id: str) -> str:
    """The row's quantity without its length: ``flash.speedup.n512`` → ``flash.speedup``."""
    return _LENGTH.sub("", row_id)


def verdict(value: float | None, claimed) -> str:
    """``within``, ``below`` or ``above`` the claimed range (open sides allowed), or
    ``none`` when the seed states no number for this row or nothing was measured."""
    lo, hi = claimed if claimed else (None, None)
    if value is None or (lo is None and hi is None):
        return "none"
    if lo is not None and value < lo:
        return "below"
    if hi is not None and value > hi:
        return "above"
    return "within"


def claimed_text(claimed, unit: str) -> str:
    lo, hi = claimed if claimed else (None, None)
    if lo is not None and hi is not None:
        return f"{lo:g}–{hi:g} {unit}"
    if lo is not None:
        return f"≥ {lo:g} {unit}"
    if hi is not None:
        return f"< {hi:g} {unit}"
    return "—"


def value_text(value: float | None, unit: str) -> str:
    return "—" if value is None else f"{value:.3g} {unit}"


def conditions(row: dict) -> str:
    """Device, n, d, heads and dtype of one measured number, in the reader's language."""
    keys = ("n", "d", "heads", "layers", "dtype", "device")
    values = {k: row.get(k, "—") for k in keys}
    # A whole model's number names its depth; a single attention call has none.
    return t("claims.conditions_layers" if "layers" in row else "claims.conditions", **values)


def detail(row: dict) -> str:
    """A row's supporting numbers (both speeds, the fit, the machine's memory), if any."""
    key = f"claims.detail.{label_key(row['id'])}"
    template = t(key)
    if template == key:
        return ""
    values = dict(row)
    if "method" in row:  # how a peak was measured, an id the reader's language names
        values["method"] = t(f"claims.method.{row['method']}")
    try:
        return template.format(**values)
    except (KeyError, ValueError):  # an older file without every field: no detail
        return ""


def oom_verdict(row: dict) -> str:
    need, have = row.get("value"), row.get("machine_available_gib")
    if need is None or have is None:
        return t("claims.verdict.none")
    return t("claims.verdict.oom" if need > have else "claims.verdict.fits", have=have)


def live_prediction(row: dict) -> dict:
    """An 8K row of the lab's full attention, its value recomputed from the memory model."""
    if row["id"] != "oom.predicted_gib.lab_head":
        return row
    gib = predicted_bytes(int(row["n"]), int(row["d"]), int(row["heads"])) / 2**30
    return {**row, "value": round(gib, 4)}


def gpu_cell(result: dict, row_id: str) -> str:
    gpu = result.get("gpu") or {}
    found = {r["id"]: r for r in gpu.get("rows", [])}
    if row_id in found:
        r = found[row_id]
        return f"{value_text(r['value'], r['unit'])} ({conditions(r)})"
    if gpu.get("status", NO_GPU) == NO_GPU:
        return t("claims.no_gpu")
    return t("claims.not_on_gpu")


def table_rows(result: dict, topic: str) -> list[dict]:
    """One dict per measured number of ``topic``, columns in the reader's language."""
    cols = {c: t(f"claims.col.{c}") for c in ("quantity", "claimed", "measured")}
    cols |= {c: t(f"claims.col.{c}") for c in ("conditions", "detail", "verdict", "gpu")}
    rows = []
    for raw in result.get("rows", []):
        if raw.get("topic") != topic:
            continue
        r = live_prediction(raw)
        judged = (
            oom_verdict(r)
            if topic == "oom"
            else t(f"claims.verdict.{verdict(r['value'], r.get('claimed'))}")
        )
        rows.append(
            {
                cols["quantity"]: t(f"claims.label.{label_key(r['id'])}"),
                cols["claimed"]: claimed_text(r.get("claimed"), r["unit"]),
                cols["measured"]: value_text(r["value"], r["unit"]),
                cols["conditions"]: conditions(r),
                cols["detail"]: detail(r),
                cols["verdict"]: judged,
                cols["gpu"]: gpu_cell(result, r["id"]),
            }
        )
    return rows


def caption(result: dict) -> str:
    load_avg = result.get("load_average", {})
    return t(
        "claims.caption",
        command=result.get("command", COMMAND),
        seconds=result.get("seconds", "—"),
        before=", ".join(map(str, load_avg.get("before", []))),
        after=", ".join(map(str, load_avg.get("after", []))),
    )
