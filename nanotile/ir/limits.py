"""Limits shared by every reader and writer of Tile IR (text and bytecode).

MAX_NESTING: how deep regions may nest in ops (an entry's body is depth 1, an `if` in
it depth 2, ...), and attribute values in attribute values. The text parser, the
bytecode reader and the bytecode writer all refuse deeper input with a located error,
so what one of them accepts the others accept too; the IR's recursive walks (printer,
verifier, passes) stay far from Python's recursion limit.
"""

MAX_NESTING = 64

# The largest grid a kernel can be launched over, (x, y, z) blocks: CUDA's limits on
# every GPU since compute capability 3.0 (CUDA C++ Programming Guide, "Technical
# Specifications per Compute Capability"). The interpreter and the emulator refuse more.
MAX_GRID = (2**31 - 1, 65535, 65535)


def grid_error(dims: tuple[int, ...]) -> str | None:
    """Why ``dims`` (1 to 3 sizes) is no grid a GPU can run, or None."""
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        return f"grid must be 1 to 3 positive sizes, got {dims}"
    for axis, (size, limit) in enumerate(zip(dims, MAX_GRID)):
        if size > limit:
            return f"grid size {size} along {'xyz'[axis]} exceeds the GPU limit {limit}"
    return None
