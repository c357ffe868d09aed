"""Limits shared by every reader and writer of Tile IR (text and bytecode).

MAX_NESTING: how deep regions may nest in ops (an entry's body is depth 1, an `if` in
it depth 2, ...), and attribute values in attribute values. The text parser, the
bytecode reader and the bytecode writer all refuse deeper input with a located error,
so what one of them accepts the others accept too; the IR's recursive walks (printer,
verifier, passes) stay far from Python's recursion limit.
"""

MAX_NESTING = 64
