"""Fuzzing: mutated corpus files never crash the reader (or the writer on what it read).

Each input is a corpus file with a few random mutations (byte flips and overwrites,
insertions, deletions, truncation, a varint replaced by a huge one). The only exception
allowed is CompileError (with a byte offset), and what decodes must re-encode. No time is
asserted here (a loaded machine would fail it); bench/fuzz.py measures hangs and time on
>= 1,000,000 inputs.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nanotile.bytecode.reader import read_bytecode
from nanotile.bytecode.writer import write_bytecode
from nanotile.diagnostics import CompileError

from .corpus import corpus_files

# A fixed, varied sample: every 50th corpus file (all versions, debug info, regions).
SEEDS = [p.read_bytes() for p in corpus_files()[::50]]
# Mostly in-place edits (kinds 0, 1): a change of length breaks the section framing at
# once, while in-place edits reach the tables, types, attributes and op streams.
KINDS = (0, 0, 0, 0, 1, 1, 1, 2, 3, 4, 5)


def mutate(data: bytes, edits: list[tuple[int, int, int]]) -> bytes:
    buf = bytearray(data)
    for kind, where, value in edits:
        if not buf:
            break
        i = where % len(buf)
        if kind == 0:
            buf[i] ^= 1 << (value % 8)
        elif kind == 1:
            buf[i] = value % 256
        elif kind == 2:
            buf[i:i] = bytes([value % 256]) * (1 + value % 4)
        elif kind == 3:
            del buf[i:i + 1 + value % 16]
        elif kind == 4:
            del buf[i:]
        else:  # a maximal varint where a count or id was
            buf[i:i + 1] = b"\xff" * 9 + b"\x01"
    return bytes(buf)


def check_input(data: bytes) -> None:
    try:
        module = read_bytecode(data, "fuzz.tileirbc")
    except CompileError as e:
        diag = e.diagnostics[0]
        assert diag.offset is not None and diag.message
    else:
        try:
            write_bytecode(module, (data[8], data[9]))
        except CompileError:
            pass


@pytest.mark.skipif(not SEEDS, reason="corpus not found under ../shared/corpus")
@settings(max_examples=3000, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(seed=st.integers(0, 10**6),
       edits=st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 10**7),
                                st.integers(0, 255)), min_size=1, max_size=3))
def test_mutated_corpus_files(seed, edits):
    check_input(mutate(SEEDS[seed % len(SEEDS)], edits))


@pytest.mark.skipif(not SEEDS, reason="corpus not found under ../shared/corpus")
def test_every_single_byte_flip_of_a_small_file():
    """Exhaustive over one file: each byte XOR 0xFF."""
    data = min(SEEDS, key=len)
    for i in range(len(data)):
        check_input(data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:])
