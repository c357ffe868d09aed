"""A pass plugin: count-ops, which counts the ops of each kernel (an analysis: it changes
nothing). Load it with MLIR's flag and name it in a pipeline:

    nanotile examples/axpy.mlir --load-pass-plugin examples/plugin_count_ops.py -p count-ops
    nanotile examples/axpy.mlir --load-pass-plugin examples/plugin_count_ops.py \\
        -p 'eqsat,count-ops{top=3}'
    nanotile-opt examples/axpy.mlir -load-pass-plugin=examples/plugin_count_ops.py -count-ops

A plugin is a Python file that defines passes (subclasses of nanotile.passes.base.Pass:
a frozen dataclass with a kebab-case ``name``, the languages it reads and writes, its
options as fields, and ``apply``) and registers them. It runs wherever the language it
reads does: this one reads any tile-level module (``tile``), so it may stand anywhere
before select-instructions.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass

from nanotile.ir.core import Module
from nanotile.passes.base import Pass, PassContext
from nanotile.passes.registry import register


@register
@dataclass(frozen=True)
class CountOps(Pass):
    """Print, for each kernel, how many ops it has and the most frequent ones (stderr)."""

    name = "count-ops"
    input = "tile"
    top: int = 5  # how many op names to show

    def apply(self, module: Module, ctx: PassContext) -> bool:
        for item in module.items:
            counts = Counter(op.name for op in item.walk() if op is not item)
            common = ", ".join(f"{name} {n}" for name, n in counts.most_common(self.top))
            kernel = item.attributes.get("sym_name", item.name)
            sys.stderr.write(f"count-ops @{kernel}: {sum(counts.values())} ops ({common})\n")
        return False  # nothing changed: the module is not checked again
