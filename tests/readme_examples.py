"""The shell examples of README.md: each command with the section it is written in.

Used by tests/test_readme.py, which runs them in a sandbox, and by ``.ci/run``, which runs the
*Install* section's commands on a clean machine (``python tests/readme_examples.py Install``
prints them as a script).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


@dataclass(frozen=True)
class Example:
    section: str  # the heading the block is under, without its #s
    line: int  # where the command starts in README.md, 1-based
    command: str  # as written, continuation lines joined

    @property
    def program(self) -> str:
        return self.command.split()[0]


def shell_examples(text: str | None = None) -> list[Example]:
    """Every command of every ```sh block, in order; comment-only lines are not commands."""
    text = README.read_text(encoding="utf-8") if text is None else text
    examples: list[Example] = []
    section = ""
    in_block = False
    pending: list[str] = []
    start = 0
    for number, line in enumerate(text.splitlines(), 1):
        if not in_block:
            if heading := re.match(r"#{1,6} (.+)", line):
                section = heading.group(1).strip()
            in_block = line.strip() == "```sh"
            continue
        if line.strip() == "```":
            in_block = False
            continue
        if not pending:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            start = number
        if line.endswith("\\"):
            pending.append(line[:-1].rstrip())
            continue
        pending.append(line.strip())
        examples.append(Example(section, start, " ".join(part.strip() for part in pending)))
        pending = []
    return examples


if __name__ == "__main__":
    wanted = sys.argv[1]
    commands = [e.command for e in shell_examples() if e.section == wanted]
    if not commands:
        sys.exit(f"README.md has no shell examples under a heading {wanted!r}")
    print("\n".join(commands))
