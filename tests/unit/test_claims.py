"""The seed's claims table (app/views/claims.py, bench/claims.py): the logic, not the timings."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from kit import i18n
from views import claims

from engine import checkpoints

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_claims", ROOT / "bench" / "claims.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(rid, value, unit="×", claimed=(None, None), **extra):
    topic, quantity = rid.split(".")[:2]
    base = {"n": 512, "d": 64, "heads": 4, "dtype": "float32", "device": "CPU test"}
    return {
        "id": rid,
        "topic": topic,
        "quantity": quantity,
        "value": value,
        "unit": unit,
        "claimed": list(claimed),
        **base,
        **extra,
    }


def _result(gpu=None):
    rows = [
        _row("flash.speedup.n512", 3.0, claimed=(2, 4), ms={"fused": 1.0, "naive": 3.0}),
        _row("flash.speedup.n4096", 5.0, claimed=(2, 4), n=4096),
        _row("pe.bleu.none", 24.5, unit="BLEU", exact_match=0.11),
        _row(
            "oom.predicted_gib.lab_head",
            99.0,
            unit="GiB",
            n=8192,
            heads=1,
            machine_available_gib=20.0,
        ),
    ]
    return {"rows": rows, "gpu": gpu or {"status": claims.NO_GPU, "rows": []}}


def _col(name):
    return i18n.t(f"claims.col.{name}")


def test_the_8k_prediction_is_the_full_attention_formula():
    # heads · (n² float32 map + q, k, v and the output, n·d float32 each)
    assert claims.predicted_bytes(8192, 64, 1) == 8192**2 * 4 + 4 * 8192 * 64 * 4
    assert claims.predicted_bytes(8192, 64, 12) == 12 * claims.predicted_bytes(8192, 64, 1)
    assert claims.predicted_bytes(8192, 64, 1) / 2**30 == pytest.approx(0.2578, abs=1e-4)


def test_verdict_reads_open_and_closed_ranges():
    assert claims.verdict(3.0, [2, 4]) == "within"
    assert claims.verdict(1.5, [2, 4]) == "below"
    assert claims.verdict(5.0, [2, 4]) == "above"
    assert claims.verdict(0.5, [None, 1.0]) == "within"
    assert claims.verdict(1.2, [None, 1.0]) == "above"
    assert claims.verdict(1.1, [1.3, None]) == "below"
    assert claims.verdict(7.0, [None, None]) == "none"
    assert claims.verdict(None, [2, 4]) == "none"
    assert claims.claimed_text([2, 4], "×") == "2–4 ×"
    assert claims.claimed_text([None, 1], "%") == "< 1 %"
    assert claims.claimed_text([None, None], "×") == "—"


def test_rows_of_one_topic_carry_their_conditions_and_verdict():
    rows = claims.table_rows(_result(), "flash")
    assert len(rows) == 2  # the PE and OOM rows belong to other topics
    first, second = rows
    for r, n in ((first, 512), (second, 4096)):
        cond = r[_col("conditions")]
        assert f"n = {n}" in cond and "d = 64" in cond and "float32" in cond
        assert "CPU test" in cond
    assert first[_col("measured")] == "3 ×"
    assert first[_col("verdict")] == i18n.t("claims.verdict.within")
    assert second[_col("verdict")] == i18n.t("claims.verdict.above")
    assert first[_col("detail")] == "fused 1.0 ms, naive 3.0 ms"
    assert second[_col("detail")] == ""  # no timings saved: no detail, no error


def test_the_gpu_column_is_labelled_until_a_gpu_fills_it():
    rows = claims.table_rows(_result(), "flash")
    assert {r[_col("gpu")] for r in rows} == {i18n.t("claims.no_gpu")}
    gpu_row = _row("flash.speedup.n512", 2.5, claimed=(2, 4), device="H200", dtype="bfloat16")
    lent = _result({"status": "H200", "rows": [gpu_row]})
    first, second = claims.table_rows(lent, "flash")
    assert first[_col("gpu")].startswith("2.5 ×") and "H200" in first[_col("gpu")]
    assert second[_col("gpu")] == i18n.t("claims.not_on_gpu")


def test_the_8k_row_shows_the_model_now_and_judges_against_the_machine():
    (row,) = claims.table_rows(_result(), "oom")
    expected = claims.predicted_bytes(8192, 64, 1) / 2**30
    assert row[_col("measured")] == f"{expected:.3g} GiB"  # not the stale 99 in the file
    assert row[_col("verdict")] == i18n.t("claims.verdict.fits", have=20.0)
    small = _result()
    small["rows"][3]["machine_available_gib"] = 0.1
    (row,) = claims.table_rows(small, "oom")
    assert row[_col("verdict")] == i18n.t("claims.verdict.oom", have=0.1)


def test_a_missing_or_broken_results_file_gives_a_clear_message(tmp_path):
    assert claims.load(tmp_path) is None
    (tmp_path / f"{claims.RESULT}.json").write_text("{not json")
    assert claims.load(tmp_path) is None
    (tmp_path / f"{claims.RESULT}.json").write_text(json.dumps({"no": "rows"}))
    assert claims.load(tmp_path) is None
    assert "bench/claims.py" in claims.missing_message()
    checkpoints.save_result(claims.RESULT, _result(), tmp_path)
    assert claims.load(tmp_path)["rows"][0]["id"] == "flash.speedup.n512"


def test_every_saved_row_has_a_label_and_its_conditions_in_both_languages():
    saved = claims.load()
    if saved is None:
        pytest.skip("bench/claims.py has not been run here")
    ids = [r["id"] for r in saved["rows"]] + [r["id"] for r in saved["gpu"]["rows"]]
    for lang in i18n.LANGUAGES:
        found = i18n.catalog(lang)
        missing = [i for i in ids if f"claims.label.{claims.label_key(i)}" not in found]
        assert not missing, (lang, missing)
    for r in saved["rows"]:
        assert r["topic"] in claims.TOPICS and {"value", "unit", "device"} <= set(r), r
        if r["topic"] != "pe":
            assert {"n", "d", "dtype"} <= set(r), r
    assert saved["load_average"]["before"] and saved["command"].startswith("nice -n 5")


def test_the_bench_fit_and_claimed_ranges():
    bench = _bench()
    ns = [256, 512, 1024, 2048]
    c, a = bench.fit_quadratic(ns, [1e6 + 4.0 * n * n for n in ns])
    assert c == pytest.approx(1e6, rel=1e-6) and a == pytest.approx(4.0, rel=1e-9)
    r = bench.row("flash.memory_ratio.n512", 12.345678, "×", n=512)
    assert r["claimed"] == [5.0, 20.0] and r["value"] == 12.35 and r["topic"] == "flash"
    assert bench.row("kv_cache.speedup.L32", 6.0, "×")["claimed"] == [None, None]
    assert bench.RESULT == claims.RESULT


def test_the_results_table_marks_the_gpu_column_until_it_is_filled():
    bench = _bench()
    table = bench.markdown(_result())
    assert table.count("\n") == 1 + len(_result()["rows"])  # header, rule, one line a row
    assert "`flash.speedup.n512`" in table and "| 2–4 × |" in table
    assert all(line.endswith(f"| {bench.NO_GPU} |") for line in table.splitlines()[2:])
    gpu_row = _row("flash.speedup.n512", 2.5, claimed=(2, 4), device="H200")
    lent = bench.markdown(_result({"status": "H200", "rows": [gpu_row]}))
    assert "2.5 × (n = 512" in lent and "not measured on the GPU" in lent
