"""A cuTile list of arrays as one kernel argument.

cuTile passes a ``List[Array]`` parameter as a ``tile<ptr<i64>>`` followed by the list's
length (an ``i32``): the pointer is the address of an ``(n, 1 + 2 * rank)`` array of
``i64`` records, one per element array, each holding the element's address, then its
shape, then its strides (in elements). The kernel views that array as a
``tensor_view<?xRxi64, strides=[R,1]>``, loads a record, ``int_to_ptr``s its first field
and builds a tensor view of the element from the others (corpus/cutile-tests:
test_list__*, test_cudagraph__list_copy__*, test_tuple_arguments__*contains_list*).

``ArrayList`` holds the element arrays. Each runner (the interpreter, the PTX emulator,
a GPU launcher) lays out the element arrays in its own memory as it lays out any array
argument, then the records, built by ``records`` from the addresses it gave the elements;
the element arrays are updated in place after the run, like array arguments, and are
outputs to compare (``output_arrays``). The records themselves are the runner's
(addresses differ between runners) and are not compared.

An element array is a C-contiguous NumPy array; its record holds its own shape and
strides unless others are given (an array passed as its flat memory: transposed or with
padded rows, as nanotile.passes.semantics.array_layout makes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class ArrayList:
    """The element arrays of a cuTile list argument, with the shape and strides (in
    elements) each one's record holds."""

    def __init__(self, arrays: Sequence[np.ndarray],
                 shapes: Sequence[Sequence[int]] | None = None,
                 strides: Sequence[Sequence[int]] | None = None) -> None:
        self.arrays = list(arrays)
        for i, a in enumerate(self.arrays):
            if not isinstance(a, np.ndarray) or not a.flags.c_contiguous:
                raise ValueError(f"element {i} of a list argument must be a C-contiguous "
                                 "NumPy array")
        self.shapes = [tuple(int(d) for d in s) for s in
                       (shapes if shapes is not None else [a.shape for a in self.arrays])]
        self.strides = [tuple(int(d) for d in s) for s in
                        (strides if strides is not None else
                         [[x // a.itemsize for x in a.strides] for a in self.arrays])]
        if len(self.shapes) != len(self.arrays) or len(self.strides) != len(self.arrays):
            raise ValueError("a list argument needs one shape and one strides per element")
        ranks = {len(s) for s in self.shapes} | {len(s) for s in self.strides}
        if len(ranks) > 1:
            raise ValueError(f"the elements of a list argument have one rank (got {ranks})")
        self.rank = ranks.pop() if ranks else 0

    def __len__(self) -> int:
        return len(self.arrays)

    def __repr__(self) -> str:
        shown = ", ".join(f"{a.dtype}{list(s)}" for a, s in zip(self.arrays, self.shapes))
        return f"ArrayList([{shown}])"

    @property
    def record_length(self) -> int:
        """i64 fields per record: the address, the shape, the strides."""
        return 1 + 2 * self.rank

    def records(self, addresses: Sequence[int]) -> np.ndarray:
        """The ``(n, record_length)`` int64 records the kernel reads, for the element
        arrays laid out at ``addresses`` (one per element, in order)."""
        if len(addresses) != len(self.arrays):
            raise ValueError(f"{len(addresses)} addresses for a list of {len(self.arrays)}")
        rows = [[int(a), *shape, *strides]
                for a, shape, strides in zip(addresses, self.shapes, self.strides)]
        return np.array(rows, dtype=np.uint64).view(np.int64).reshape(
            len(rows), self.record_length)

    def copy(self) -> ArrayList:
        return ArrayList([a.copy() for a in self.arrays], self.shapes, self.strides)

    def __deepcopy__(self, memo: dict) -> ArrayList:
        return self.copy()


def copy_arguments(args: Sequence[Any]) -> list[Any]:
    """Kernel arguments with private copies of every array (list elements included)."""
    return [a.copy() if isinstance(a, (np.ndarray, ArrayList)) else a for a in args]


def output_arrays(args: Sequence[Any]) -> list[np.ndarray]:
    """The arrays a kernel may write, in argument order: each array argument, and the
    element arrays of each list argument."""
    return [array for _, array in labelled_outputs(args)]


def labelled_outputs(args: Sequence[Any]) -> list[tuple[str, np.ndarray]]:
    """``output_arrays`` with a label for each: "argument 2", "argument 0 element 1"."""
    out: list[tuple[str, np.ndarray]] = []
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            out.append((f"argument {i}", a))
        elif isinstance(a, ArrayList):
            out.extend((f"argument {i} element {j}", x) for j, x in enumerate(a.arrays))
    return out
