"""The press sweep: the full cache first, one line per finished example, a killed run
resumes where it stopped, the summary counts a task only where the full cache reaches 0.5."""

import csv
import json

import pytest
import torch

from engine import checkpoints
from engine.analysis import press_eval
from engine.evaluation import cache as sweep
from engine.models import chat as chat_model


def record(task, seed, scores, nll=1.0):
    runs = [
        {"press": p, "ratio": r, "kept": 1 - r, "answer": "", "score": s, "nll": nll}
        for (p, r), s in zip(sweep.plan(["knorm"], [0.5]), scores, strict=True)
    ]
    seconds = {"prefill": 1.0, "answers": 0.5, "perplexity": 0.5}
    return {"task": task, "length": 1024, "seed": seed, "runs": runs, "seconds": seconds}


def test_the_plan_is_the_full_cache_then_each_press_above_ratio_zero():
    assert sweep.plan(["full", "knorm", "tova"], [0.0, 0.5]) == [
        ("full", 0.0),
        ("knorm", 0.5),
        ("tova", 0.5),
    ]


def test_the_summary_puts_the_full_cache_first_and_counts_tasks_it_can_do(tmp_path):
    runs = sweep.plan(["knorm"], [0.5])
    recs = [record("vt", 0, [1.0, 0.0]), record("vt", 1, [0.0, 0.0]), record("qa", 0, [1.0, 1.0])]
    s = sweep.summarise(recs, runs)
    assert s["vt@1024"]["full_accuracy"] == 0.5 and s["vt@1024"]["counts"]
    assert s["vt@1024"]["presses"]["knorm"]["0.5"] == {
        "accuracy": 0.0,
        "ppl": 2.718,
        "kept": 0.5,
        "n": 2,
    }
    assert s["qa@1024"]["n"] == 1 and s["qa@1024"]["seconds_per_example"] == 2.0
    s2 = sweep.summarise([record("vt", 0, [0.0, 1.0])], runs)
    assert not s2["vt@1024"]["counts"]
    sweep.write_csv(tmp_path / "s.csv", s)
    rows = list(csv.DictReader((tmp_path / "s.csv").open()))
    assert [r["press"] for r in rows[:2]] == ["full", "knorm"] and len(rows) == 4
    assert sweep.estimate_hours(s, 25) == {
        "1024": round(2.0 * 25 * len(sweep.ruler.TASKS) / 3600, 2)
    }


def test_a_loss_perplexity_hides_is_found_and_only_that():
    """knorm loses the needle (1 → 0) at the same perplexity: hidden. tova loses it with
    perplexity doubled: perplexity shows it. random keeps it: no loss."""
    runs = sweep.plan(["knorm", "tova", "random"], [0.5])
    recs = [
        {
            **record("qa", seed, [1.0, 0.0]),
            "runs": [
                {"press": p, "ratio": r, "kept": 0.5, "answer": "", "score": sc, "nll": nll}
                for (p, r), sc, nll in zip(
                    runs, [1, 0, 0, 1], [1.0, 1.05, 1.0 + 0.7, 1.0], strict=True
                )
            ],
        }
        for seed in (0, 1)
    ]
    task = sweep.summarise(recs, runs)["qa@1024"]
    hidden = press_eval.hidden_losses(task)
    assert [(h["press"], h["ratio"]) for h in hidden] == [("knorm", 0.5)]
    assert hidden[0]["drop"] == 1.0 and hidden[0]["rise"] == pytest.approx(0.051, abs=1e-3)
    table = press_eval.rows({"qa@1024": task})
    assert len(table) == 4 and table[1]["press"] == "knorm" and table[1]["ratio"] == 0.5


def test_a_calibration_run_is_summarised_as_its_baseline(tmp_path):
    """`--summary` reads every line: a task run with the full cache alone shows its
    baseline (and no press), a task run with every press shows both."""
    path = tmp_path / "x.jsonl"
    calib = record("cwe", 0, [0.0, 0.0])
    calib["runs"] = calib["runs"][:1]  # --presses full --ratios 0
    lines = [calib, record("vt", 0, [1.0, 0.0]), record("vt", 0, [1.0, 0.0])]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    every = sweep._every(path)
    assert set(every) == {("cwe", 1024, 0), ("vt", 1024, 0)}
    s = sweep.summarise(list(every.values()), sweep.plan(["knorm"], [0.5]))
    assert s["cwe@1024"]["presses"] == {"full": {"0.0": s["cwe@1024"]["presses"]["full"]["0.0"]}}
    assert s["cwe@1024"]["full_accuracy"] == 0.0 and not s["cwe@1024"]["counts"]
    assert s["vt@1024"]["presses"]["knorm"]["0.5"]["n"] == 1


def test_done_examples_are_read_back_and_a_line_cut_by_a_kill_is_not(tmp_path):
    runs = sweep.plan(["knorm"], [0.5])
    path = tmp_path / "x.jsonl"
    lines = [json.dumps(record("vt", 0, [1, 1])), json.dumps(record("vt", 1, [1, 1]))[:50]]
    path.write_text("\n".join(lines) + "\n")
    assert set(sweep._done(path, runs)) == {("vt", 1024, 0)}
    # a plan with more runs than the line holds runs the example again
    assert sweep._done(path, sweep.plan(["knorm", "tova"], [0.5])) == {}


@pytest.fixture(scope="module")
def available():
    if not chat_model.available():
        pytest.skip(f"{chat_model.CHAT_DIR} is missing: run bash scripts/setup.sh")


def test_the_retrieval_heads_press_reads_the_measured_scores(chat):
    scores = press_eval.retrieval_scores(chat)
    saved = torch.tensor(checkpoints.load_result(press_eval.RETRIEVAL_HEADS)["score"])
    assert scores.shape == (chat.n_layers, chat.n_kv_heads)
    assert torch.equal(scores, saved.view(chat.n_layers, chat.n_kv_heads, -1).amax(-1))


def test_a_small_sweep_runs_and_a_second_start_resumes(available, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(press_eval, "duo_scores", lambda chat: torch.zeros(30, 3))
    argv = ["--tasks", "niah_number", "--lengths", "256", "--examples", "1"]
    argv += ["--presses", "streaming_llm", "duo_attention", "retrieval_heads", "--ratios", "0.5"]
    argv += ["--out", str(tmp_path), "--csv", str(tmp_path / "c.csv")]
    assert sweep.main(argv) == 0
    first = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    cell = first["tasks"]["niah_number@256"]
    assert cell["n"] == 1
    assert set(cell["presses"]) == {"full", "streaming_llm", "duo_attention", "retrieval_heads"}
    assert cell["presses"]["streaming_llm"]["0.5"]["kept"] == pytest.approx(0.5, abs=0.01)
    lines = (tmp_path / f"{sweep.RESULT}.jsonl").read_text().splitlines()
    assert len(lines) == 1 and (tmp_path / f"{sweep.RESULT}.json").exists()
    assert sweep.main(argv) == 0  # nothing left to do: the same summary, nothing appended
    captured = capsys.readouterr()
    assert "1 of 1 examples done" in captured.err
    again = json.loads(captured.out.strip().splitlines()[-1])
    assert again["tasks"] == first["tasks"]
    assert len((tmp_path / f"{sweep.RESULT}.jsonl").read_text().splitlines()) == 1
