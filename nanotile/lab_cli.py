"""``nanotile lab``: the course labs of ``labs/`` and their autograders.

    nanotile lab list                      the labs, a line each
    nanotile lab check N [--reference]     grade lab N: your code in labs/NN-*/starter/,
                                           or (--reference) the project's own solution
    [--labs DIR]                           where the labs are (default: labs/ of the
                                           source checkout, else ./labs)

Grading prints a score per part and the total; the exit status is 0 when grading ran
(whatever the score), 1 when it could not (no such lab), 2 for a bad command line.
How a lab is made: nanotile.labkit.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .tool import version_text


class _Usage(Exception):
    pass


class _Exit(Exception):
    """--help or --version was answered: exit with this status."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:
        raise _Usage(message)

    def exit(self, status: int = 0, message: str | None = None) -> None:
        if message:
            sys.stderr.write(message)
        raise _Exit(status)


def _parser() -> _Parser:
    parser = _Parser(prog="nanotile lab", description="Course labs and their autograders.")
    parser.add_argument("--labs", metavar="DIR", help="the folder of the labs")
    parser.add_argument("--version", action="version",
                        version=version_text("nanotile lab").strip())
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    commands.add_parser("list", help="list the labs")
    check = commands.add_parser("check", help="grade a lab")
    check.add_argument("number", type=int, help="the lab's number (see `nanotile lab list`)")
    check.add_argument("--reference", action="store_true",
                       help="grade the project's own solution instead of starter/")
    check.add_argument("--labs", metavar="DIR", help="the folder of the labs")
    return parser


def main(argv: list[str]) -> int:
    try:
        options = _parser().parse_args(argv)
    except _Exit as answered:
        return int(str(answered) or 0)
    except _Usage as usage:
        sys.stderr.write(f"nanotile lab: error: {usage}\n")
        return 2
    from . import labkit

    folder = Path(options.labs) if options.labs else labkit.default_labs_folder()
    labs = labkit.find_labs(folder)
    if not labs:
        sys.stderr.write(f"nanotile lab: error: no labs in '{folder}'\n")
        return 1
    if options.command == "list":
        for lab in labs:
            sys.stdout.write(f"{lab.number:>2}  {lab.grader.TITLE}  ({lab.folder.name}/)\n")
        return 0
    chosen = [lab for lab in labs if lab.number == options.number]
    if not chosen:
        numbers = ", ".join(str(lab.number) for lab in labs)
        sys.stderr.write(f"nanotile lab: error: no lab {options.number} (labs: {numbers})\n")
        return 1
    results, seconds = labkit.timed_grade(chosen[0], options.reference)
    sys.stdout.write(labkit.report(chosen[0], options.reference, results, seconds))
    return 0
