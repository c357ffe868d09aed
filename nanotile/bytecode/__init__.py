"""Tile IR bytecode (``.tileirbc``): reader, writer and the wire-format tables they share.

reader.read_bytecode(data, filename) -> Module and writer.write_bytecode(module, version)
-> bytes. The format is described in ../shared/reference/wire-format.md.
"""
