"""The interpreter's runtime error: undefined behaviour it detects, failed asserts."""

from __future__ import annotations


class InterpError(Exception):
    """A kernel did something the interpreter cannot or will not execute.

    Raised for failed ``assert`` ops, ``assume`` predicates that do not hold (debug mode),
    out-of-bounds or misaligned memory accesses, and unsupported constructs. The message
    names the tile block (and op) when known.
    """


class NeverEnds(InterpError):
    """A tile block entered a loop it can never leave (see machine._never_ends): the grid
    or the inputs make the kernel run forever."""
