"""The shell examples of README.md and then of docs/guide.md, the guide it hands on to, as one
sequence: each command with its file and the section it is written in.

Used by tests/test_readme.py, which runs them in a sandbox, and by ``.ci/run``, which runs the
README's *Install* section's commands on a clean machine (``python tests/readme_examples.py
Install`` prints them as a script).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
GUIDE = REPO / "docs" / "guide.md"
DOCUMENTS = (README, GUIDE)  # read in this order: the guide's examples build on the README's


@dataclass(frozen=True)
class Example:
    file: str  # the document it is in, relative to the repository: README.md, docs/guide.md
    section: str  # the heading the block is under, without its #s
    line: int  # where the command starts in its file, 1-based
    command: str  # as written, continuation lines joined

    @property
    def program(self) -> str:
        return self.command.split()[0]


def shell_examples() -> list[Example]:
    """Every command of every ```sh block of the README, then of the guide, in order."""
    return [
        example
        for path in DOCUMENTS
        for example in file_examples(path.read_text(encoding="utf-8"), path.relative_to(REPO).as_posix())
    ]


def file_examples(text: str, file: str) -> list[Example]:
    """Every command of every ```sh block of one document; comment-only lines are not commands."""
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
        examples.append(Example(file, section, start, " ".join(part.strip() for part in pending)))
        pending = []
    return examples


if __name__ == "__main__":
    wanted = sys.argv[1]
    commands = [e.command for e in shell_examples() if e.file == "README.md" and e.section == wanted]
    if not commands:
        sys.exit(f"README.md has no shell examples under a heading {wanted!r}")
    print("\n".join(commands))
