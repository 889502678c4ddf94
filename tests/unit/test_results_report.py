"""bench/RESULTS.md and the README's numbers are generated from the saved results, and stale
copies fail here: regenerate with ``python -m bench.report``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import _save, readme, report
from engine import checkpoints

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
HELPERS = {"_save", "report", "renderers", "readme"}


def test_results_md_is_what_the_result_files_generate():
    assert report.RESULTS_MD.read_text() == report.results_md(), "run python -m bench.report"


def test_the_readme_numbers_are_what_the_evaluation_files_generate():
    text = report.README.read_text()
    assert readme.START in text and readme.END in text
    assert text == report.readme_md(text), "run python -m bench.report"


def test_the_readme_states_the_variant_grid_the_app_reads():
    """The Variants page reads variants-eval.json; the README's recall numbers are its."""
    table = checkpoints.load_result("variants-eval")["table"]
    text = report.README.read_text()
    for variant in ("full", "bigbird", "reformer"):
        assert f"{variant} {table[variant]['mqar-256']['mean']:.3f}" in text, variant


def test_check_fails_on_a_stale_file_and_passes_on_a_current_one(tmp_path, monkeypatch):
    for name in ("RESULTS_MD", "README"):
        copy = tmp_path / getattr(report, name).name
        copy.write_text(getattr(report, name).read_text())
        monkeypatch.setattr(report, name, copy)
    assert report.main(["--check"]) == 0
    report.RESULTS_MD.write_text(report.RESULTS_MD.read_text() + "a hand-kept line\n")
    assert report.main(["--check"]) == 1
    assert report.main([]) == 0 and report.main(["--check"]) == 0


def test_a_result_no_renderer_knows_gets_a_table_of_its_numbers():
    saved = {
        "date": "2026-12-02 06:00 UTC",
        "command": "python bench/new.py --fast",
        "load": "0.50 0.40 0.30",
        "result": {"speed_ms": 12.5, "ok": True, "runs": [{"n": 1, "s": 0.5}, {"n": 2, "s": 0.7}]},
    }
    md = report.results_md({"new": saved}, evals=lambda name: None)
    assert "## new" in md and "`python bench/new.py --fast`" in md
    assert "load 0.50 0.40 0.30" in md and "2026-12-02 06:00 UTC" in md
    assert "| speed_ms | 12.5 |" in md and "| ok | yes |" in md
    assert "| 2 | 0.7 |" in md


def test_every_section_states_its_date_command_and_load():
    for name, data in report.load_results().items():
        assert data.get("command"), name
        assert data.get("date"), name
        assert "load" in data, name


def test_save_stamps_a_result_and_keeps_items_a_partial_run_did_not_measure(tmp_path, monkeypatch):
    monkeypatch.setattr(_save, "RESULTS", tmp_path)
    monkeypatch.setattr("sys.argv", ["bench/interaction.py", "--pages", "basics"])
    first = {"pages": {"basics": {"median_ms": 200.0}, "memory": {"median_ms": 150.0}}}
    assert _save.save(first, by="pages") is first
    _save.save({"pages": {"basics": {"median_ms": 180.0}}}, by="pages")
    saved = json.loads((tmp_path / "interaction.json").read_text())
    assert saved["command"] == "python bench/interaction.py --pages basics"
    assert len(saved["load"].split()) == 3 and saved["host"]["cpus"]
    pages = saved["result"]["pages"]
    assert pages["basics"]["median_ms"] == 180.0 and pages["memory"]["median_ms"] == 150.0
    assert all({"date", "command", "load"} <= set(p) for p in pages.values())


@pytest.mark.parametrize(
    "script", sorted(p.name for p in BENCH.glob("*.py") if p.stem not in HELPERS)
)
def test_every_benchmark_saves_its_last_line_json(script):
    assert "save(" in (BENCH / script).read_text(), f"bench/{script} prints but never saves"


def test_the_readme_classroom_numbers_are_load_json_s():
    """The serving section quotes bench/results/load.json's p95 at 30 sessions."""
    runs = report.load_results()["load"]["result"]["runs"]
    p95 = {r["server"]: r["change_p95_s"] for r in runs if r["sessions"] == 30}
    text = report.README.read_text()
    assert f"p95 {p95['one process']:.1f} s" in text
    assert f"{p95['2 replicas + nginx']:.2f} s on two replicas" in text
