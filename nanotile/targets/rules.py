"""Op name -> lowering rule, for every op the PTX back end handles (coverage is driven
by this table: an op without a rule is refused with a clear error)."""

from __future__ import annotations

from . import lower_control as C
from . import lower_convert as V
from . import lower_memory as M
from . import lower_misc as X
from . import lower_shared as S
from .lower_math import ELEMENTWISE, lower_elementwise
from .lower_mma_scaled import mmaf_scaled
from .lower_print import lower_print as print_tko

RULES = {
    **{name: lower_elementwise for name in ELEMENTWISE},
    "constant": X.constant, "iota": X.iota, "assume": X.alias,
    "get_tile_block_id": X.grid_query, "get_num_tile_blocks": X.grid_query,
    "make_token": X.token, "join_tokens": X.token, "get_global": X.get_global,
    "gdc_wait_tko": X.grid_dependency, "gdc_launch_dependents_tko": X.grid_dependency,
    "make_tensor_view": M.make_tensor_view, "make_partition_view": M.make_partition_view,
    "make_strided_view": M.make_partition_view, "atomic_red_view_tko": M.atomic_red_view,
    "get_index_space_shape": M.get_index_space_shape, "get_tensor_shape": M.get_tensor_shape,
    "load_view_tko": M.load_view, "store_view_tko": M.store_view,
    "load_ptr_tko": M.load_ptr, "store_ptr_tko": M.store_ptr,
    "atomic_rmw_tko": M.atomic, "atomic_cas_tko": M.atomic,
    "reshape": S.reshape, "broadcast": S.broadcast, "permute": S.permute,
    "extract": S.extract, "insert": S.insert,
    "pack": V.pack_unpack, "unpack": V.pack_unpack, "cat": S.cat, "reduce": S.reduce_or_scan, "scan": S.reduce_or_scan,
    "mmaf": S.mma, "mmai": S.mma, "mmaf_scaled": mmaf_scaled,
    "convert_layout": S.convert_layout,
    "if": C.lower_if, "for": C.lower_for, "loop": C.lower_loop, "yield": C.lower_yield,
    "continue": C.lower_continue, "break": C.lower_break, "return": C.lower_return,
    "assert": C.lower_assert, "print_tko": print_tko,
}
