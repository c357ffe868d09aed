"""Read a Tile IR file, text or bytecode, deciding by its content (the bytecode magic);
``looks_like_ptx`` tells PTX text (a PTX dump the ptx passes may read) from Tile IR text.

Importing this module is cheap (the IR, the parser and the bytecode reader are imported
when a file is read), so that a command can decide what it needs first."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .diagnostics import CompileError, Diagnostic

if TYPE_CHECKING:
    from .ir.core import Module

BYTECODE_MAGIC = b"\x7fTileIR\x00"
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_LINE_COMMENT = re.compile(r"//[^\n]*")


def looks_like_ptx(text: str) -> bool:
    """Whether ``text`` is PTX: its first token outside comments is ``.version``."""
    head = _LINE_COMMENT.sub("", _BLOCK_COMMENT.sub(" ", text[:4096]))
    return head.lstrip().startswith(".version")


def read_input(path: str) -> bytes:
    """The bytes of ``path`` ('-' = standard input); a missing file is a CompileError."""
    import sys

    try:
        if path == "-":
            return _read_to_end(sys.stdin.buffer)
        with open(path, "rb") as f:
            return _read_to_end(f)
    except OSError as e:
        raise CompileError(Diagnostic("error", f"cannot read file: {e.strerror}", path)) from None


def _read_to_end(stream) -> bytes:
    """All of ``stream``. A pipe, FIFO or terminal is read in a loop that wakes up every
    tenth of a second: Python raises KeyboardInterrupt when a system call is interrupted or
    when its interpreter loop looks, so a Ctrl-C landing after the open and before the
    first read() would otherwise wait, unseen, until data or end of file arrives (strace
    shows it: SIGINT between open and read, then a read that never returns)."""
    import os
    import stat

    try:
        fd = stream.fileno()
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except (AttributeError, OSError, ValueError):  # not a real file (a test's BytesIO)
        return stream.read()
    if regular:
        return stream.read()
    return _read_waking(fd)


def _read_waking(fd: int) -> bytes:
    import os
    import select

    chunks = []
    while True:  # each turn is a point where Python raises a pending KeyboardInterrupt
        readable, _, _ = select.select([fd], [], [], 0.1)
        if not readable:
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def load_bytes(data: bytes, filename: str) -> Module:
    if data.startswith(BYTECODE_MAGIC):
        from .bytecode.reader import read_bytecode

        return read_bytecode(data, filename)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CompileError(Diagnostic("error", "input is neither Tile IR bytecode (bad magic) "
                                      "nor UTF-8 text", filename, offset=e.start)) from None
    from .ir.parser import parse_text

    return parse_text(text, filename)


def load_file(path: str) -> Module:
    return load_bytes(read_input(path), path)
