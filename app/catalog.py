"""The studio's pages: one list shared by the router and the home page's links."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kit.i18n import t

APP_DIR = Path(__file__).parent


@dataclass(frozen=True)
class PageInfo:
    """A page; its title and blurb come from locales/<lang>/catalog.toml under its url."""

    path: str
    url: str

    @property
    def title(self) -> str:
        return t(f"catalog.{self.url}.title")

    @property
    def blurb(self) -> str:
        return t(f"catalog.{self.url}.blurb")


PAGES = [
    PageInfo("studios/home.py", "home"),
    PageInfo("studios/basics.py", "basics"),
    PageInfo("studios/positional.py", "positional"),
    PageInfo("studios/alignment.py", "alignment"),
    PageInfo("studios/memory.py", "memory"),
    PageInfo("studios/transformer.py", "transformer"),
    PageInfo("studios/chat.py", "chat"),
    PageInfo("studios/retrieval.py", "retrieval"),
    PageInfo("studios/learning.py", "learning"),
    PageInfo("studios/compare.py", "compare"),
    PageInfo("studios/variants.py", "variants"),
    PageInfo("studios/lessons.py", "lessons"),
]
