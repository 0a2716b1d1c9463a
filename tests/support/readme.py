"""What the README tests share: the README, its Python blocks, finding a block by how it starts,
and the revisions the server file is served at."""

from __future__ import annotations

import re
from dataclasses import dataclass

from support.procs import ROOT

README = ROOT / "README.md"
REVISIONS = ("2026-07-28", "2025-11-25")


@dataclass(frozen=True)
class Block:
    lang: str
    text: str
    line: int  # where the block's text starts in README.md

    @property
    def first(self) -> str:
        return self.text.splitlines()[0] if self.text else ""


def blocks(lang: str | None = None) -> list[Block]:
    source = README.read_text(encoding="utf-8")
    found = [
        Block(m["lang"], m["text"], source.count("\n", 0, m.start("text")) + 1)
        for m in re.finditer(r"^```(?P<lang>\w*)\n(?P<text>.*?)^```$", source, re.S | re.M)
    ]
    return [b for b in found if lang is None or b.lang == lang]


def block_starting(lang: str, start: str) -> Block:
    (block,) = [b for b in blocks(lang) if b.first.startswith(start)]
    return block
