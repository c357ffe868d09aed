"""Tile IR bytecode (``.tileirbc``): reader, writer and the wire-format tables they share.

- reader.read_bytecode(data, filename) -> Module: versions 13.1-13.4; every malformed
  input is a CompileError naming a byte offset, with cuda-tile's reader's message and
  its enclosing steps as notes (the tables are read by read_tables).
- writer.write_bytecode(module, version=(13, 4)) -> bytes: any of 13.1-13.4, laid out as
  cuTile 1.7.0 writes (a module read from a cuTile file re-encodes byte for byte); IR
  the target version cannot hold is refused with a CompileError.
- wire: section ids, type/attribute/debug tags, version gates, primitive codecs.

Per-op layouts come from the op table (nanotile.ir.optable). The format is described in
../shared/reference/wire-format.md. Known limit: the header's tag field (cuTile's
"preview features" bit) is not kept; files are written with tag 0.
"""
