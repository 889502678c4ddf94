"""Every command line the studio shows a reader to copy — a card's training and evaluation
command, a result file's "Reproduce:" line, a timeline's "Recorded by" — is one its CLI
accepts: its module exists and its options parse. (The Learning page once showed a
command that ran, but over the shipped model: tests/unit/test_induction.py holds that.)
Parsing only: each CLI's ``parse_args`` stops the run once the options are read."""

from __future__ import annotations

import argparse
import json
import runpy
import shlex
import sys

import pytest

from engine import checkpoints
from engine.models import registry

COMMAND_KEYS = {"command", "train_command", "evaluate_command"}


def _commands_in(data, found: set[str]) -> None:
    if isinstance(data, dict):
        for key, value in data.items():
            if key in COMMAND_KEYS and isinstance(value, str) and value.startswith("python"):
                found.add(value)
            _commands_in(value, found)
    elif isinstance(data, list):
        for value in data:
            _commands_in(value, found)


def shown_commands() -> list[str]:
    found: set[str] = set()
    for card in registry.cards():
        found |= {c for c in (card.train_command, card.evaluate_command) if c}
    for path in checkpoints.ROOT.joinpath("assets").rglob("*.json"):
        try:
            _commands_in(json.loads(path.read_text(encoding="utf-8")), found)
        except (OSError, ValueError):
            continue  # a file the pages cannot read either; their own tests say so
    return sorted(found)


class Parsed(Exception):
    """The CLI read its options: the run stops here."""


@pytest.fixture
def parse_only(monkeypatch):
    own = argparse.ArgumentParser.parse_args

    def parse(self, *args, **kwargs):
        raise Parsed(own(self, *args, **kwargs))

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse)


COMMANDS = shown_commands()


def test_the_studio_shows_commands():
    assert any(c.startswith("python -m engine.train ") for c in COMMANDS)
    assert any(c.startswith("python -m engine.evaluate ") for c in COMMANDS)


@pytest.mark.parametrize("command", sorted({" ".join(shlex.split(c)[:4]) for c in COMMANDS}))
def test_every_shown_command_parses(parse_only, monkeypatch, command):
    for full in (c for c in COMMANDS if " ".join(shlex.split(c)[:4]) == command):
        argv = shlex.split(full)
        assert argv[:2] == ["python", "-m"], full
        monkeypatch.setattr(sys, "argv", [argv[2], *argv[3:]])
        with pytest.raises(Parsed):
            runpy.run_module(argv[2], run_name="__main__")
