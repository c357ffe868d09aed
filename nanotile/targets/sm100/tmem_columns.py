"""Where lower-tcgen05 puts things in a CTA's tensor memory (TMEM: 128 lanes x 512 columns
of 32 bits), column by column.

- Accumulators: M / 128 x N columns each, N for M = 64 (row block b's D in the N columns
  after block b - 1's). One range per accumulator kept across a K loop; the others take
  turns in one range after those (each site's MMAs are waited for before the next
  site's start).
- Block-scaled MMA's scale words (tmem_mma_scaled): A's words, then B's, after the
  accumulators, taken in turns too; word g R + j (R rows or columns a thread holds)
  packs K blocks 4 g .. 4 g + 3 of rows / columns lane + 32 j, so the MMA of row block b
  and K step s reads A's from column (s / 4) R + 4 b and B's from column (s / 4) R_B.
  Where an accumulator fills TMEM (256 x 256) a site borrows the other row block's
  first columns instead (lower_tcgen05.issue).
- The allocation: a power of two of at least 32 columns (tcgen05.alloc).
"""

from __future__ import annotations

from ...ir.core import Operation
from ...ir.layouts import TMEM_M, tmem_params

MIN_COLUMNS = 32   # tcgen05.alloc: a power of two of at least 32 columns
SCALES_PER_WORD = 4  # a TMEM word holds the scales of 4 K blocks (SFA_ID/SFB_ID: a byte)
SCALE_BLOCK = 32     # kind::mxf8f6f4: one scale per 32 elements along K (one K step)


def place(sites: list[Operation], kept: dict, borrowing: set) -> tuple[dict, int, int]:
    """(each site's first accumulator column, the scale words' first column, the
    allocation); ``kept`` maps each site to the loop that keeps its accumulator (or
    None), ``borrowing`` holds the sites whose scale words borrow accumulator columns."""
    column, columns = {}, 0
    for op in sites:
        if kept[op] is not None:
            column[op] = columns
            columns += accumulator_columns(op)
    shared = max((accumulator_columns(op) for op in sites if kept[op] is None), default=0)
    for op in sites:
        if kept[op] is None:
            column[op] = columns
    scales = columns + shared
    words = max((scale_columns(op) for op in sites if op not in borrowing), default=0)
    return column, scales, allocation(scales + words)


def allocation(columns: int) -> int:
    """tcgen05.alloc's column count for ``columns``: a power of two, at least 32."""
    n = MIN_COLUMNS
    while n < columns:
        n *= 2
    return n


def row_blocks(op: Operation) -> int:
    """The 128-row blocks of ``op``'s tile (one MMA each per K step; a 64-row tile: one)."""
    return max(1, op.attributes["lhs"].shape[0] // TMEM_M)


def accumulator_columns(op: Operation) -> int:
    """The TMEM columns of ``op``'s accumulator: N per 128-row block."""
    params = tmem_params(op.attributes["of"].layout)
    assert params is not None, op.attributes["of"]
    m, n = params
    return max(1, m // TMEM_M) * n


def scale_columns(op: Operation) -> int:
    """The TMEM columns of a block-scaled site's scale words (0 for others)."""
    if op.name != "tmem_mma_scaled":
        return 0
    return sum(v.type.shape[0] for v in op.operands[1:3])


def scale_words_at(op: Operation, block: int, step: int, scales: int) -> tuple[int, int]:
    """The columns of the scale words A's row block ``block`` and B read at K step
    ``step`` (their byte: step % 4), the words stored from column ``scales``."""
    a_words, b_words = (v.type.shape[0] for v in op.operands[1:3])
    k_blocks = op.attributes["lhs"].shape[1] // SCALE_BLOCK
    groups = -(-k_blocks // SCALES_PER_WORD)
    group = step // SCALES_PER_WORD
    return (scales + group * (a_words // groups) + TMEM_M // 32 * block,
            scales + a_words + group * (b_words // groups))
