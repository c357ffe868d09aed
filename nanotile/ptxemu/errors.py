"""Errors the PTX emulator raises: malformed PTX, unsupported instructions, faults at run time."""

from __future__ import annotations


class PtxError(Exception):
    """A PTX-level error with a ``file:line:col`` position (parse errors, unsupported
    instructions, memory faults, traps, deadlocks)."""

    def __init__(self, message: str, filename: str = "<ptx>", line: int | None = None,
                 col: int | None = None) -> None:
        self.message = message
        self.filename = filename
        self.line = line
        self.col = col
        where = filename if line is None else f"{filename}:{line}:{col or 1}"
        super().__init__(f"{where}: error: {message}")


class MemoryFault(Exception):
    """Raised by the memory model; the executor turns it into a ``PtxError`` naming the
    faulting instruction."""
