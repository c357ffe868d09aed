"""fuse-fma: x*y + z -> fma(x, y, z) and x*y - z -> fma(x, y, -z).  tile -> tile (kept).

cuda-tile's ``fuse-fma`` as an e-graph pass: only the ``fuse-fma`` ruleset
(``nanotile/egraph/rules/fuse_fma.egg``) runs. A product fuses when it has no other use
and the add/sub has the same rounding mode and flush-to-zero setting; the add may have
the product on either side; a broadcast of a scalar to itself is looked through.
"""

from __future__ import annotations

from dataclasses import dataclass

from .eqsat import Eqsat


@dataclass(frozen=True)
class FuseFma(Eqsat):
    """Fuse multiply-add/sub into fma (the fuse-fma egglog ruleset only)."""

    name = "fuse-fma"
    input = "tile"
    output = None
    rulesets: str = "fuse-fma"
