"""Diagnostics: errors, warnings and notes with a source position, printed like MLIR.

Every user-facing error in nanotile is a ``Diagnostic``; a stage that cannot go on raises
``CompileError`` carrying one or more of them. The command-line tools catch
``CompileError``, print the diagnostics (``file:line:col: error: message``, the source
line and a caret) and exit 1, so bad input never ends in a Python traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Diagnostic:
    severity: str  # "error" | "warning" | "note" | "remark"
    message: str
    filename: str = "<unknown>"
    line: int | None = None  # 1-based; None when there is no text position
    column: int | None = None  # 1-based
    offset: int | None = None  # byte offset, for bytecode input
    notes: list[Diagnostic] = field(default_factory=list)
    # the text of ``filename`` when it is not the input being compiled (a rule file)
    own_text: str | None = None

    def location_prefix(self) -> str:
        if self.line == 0:  # MLIR's position of the module it wraps a file's top level in
            return f"{self.filename}:0:0"
        if self.line is not None:
            return f"{self.filename}:{self.line}:{self.column or 1}"
        if self.offset is not None:
            return f"{self.filename}: at byte offset {self.offset}"
        return self.filename

    def format(self, source_text: str | None = None) -> str:
        """``file:line:col: severity: message`` plus the source line and a caret."""
        out = [f"{self.location_prefix()}: {self.severity}: {self.message}"]
        if self.own_text is not None:
            source_text = self.own_text
        if source_text is not None and self.line is not None:
            lines = source_text.splitlines()
            if 0 < self.line <= len(lines):
                text = lines[self.line - 1].expandtabs(1)
                out.append(text)
                out.append(" " * max((self.column or 1) - 1, 0) + "^")
        for note in self.notes:
            out.append(note.format(source_text))
        return "\n".join(out)


class CompileError(Exception):
    """Raised when input cannot be accepted; carries the diagnostics to show."""

    def __init__(self, diagnostics: list[Diagnostic] | Diagnostic) -> None:
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics = diagnostics
        super().__init__(diagnostics[0].message if diagnostics else "error")

    def format(self, source_text: str | None = None) -> str:
        return "\n".join(d.format(source_text) for d in self.diagnostics)


def error(message: str, filename: str = "<unknown>", line: int | None = None,
          column: int | None = None, offset: int | None = None) -> CompileError:
    """Shorthand: ``raise error("expected ']'", path, 3, 14)``."""
    return CompileError(Diagnostic("error", message, filename, line, column, offset))
