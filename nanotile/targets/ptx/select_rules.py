"""select-instructions: op name -> rule, for every simt op that is not an elementwise op
(those go through select_arith's per-register rules)."""

from __future__ import annotations

from . import select_control as C
from . import select_memory as M
from . import select_threads as S
from .select_print import vprintf
from .select_tma import tma_copy, tma_issue, tma_ring_reset, tma_store_copy, tma_wait

RULES = {
    "if": C.lower_if, "for": C.lower_for, "loop": C.lower_loop, "yield": C.lower_yield,
    "continue": C.lower_continue, "break": C.lower_break, "return": C.lower_return,
    "assert": C.lower_assert,
    "constant": S.constant, "coordinates": S.coordinates, "is_owner": S.is_owner,
    "shuffle_xor": S.shuffle_xor, "shuffle_idx": S.shuffle_idx,
    "splat": S.splat, "pick": S.pick,
    "get_tile_block_id": S.grid_query, "get_num_tile_blocks": S.grid_query,
    "get_global": S.get_global, "gdc_wait_tko": S.grid_dependency,
    "gdc_launch_dependents_tko": S.grid_dependency, "barrier": S.barrier,
    "shared_store": M.shared_store, "shared_load": M.shared_load,
    "shared_gather": M.shared_gather, "load_ptr_tko": M.load, "store_ptr_tko": M.store,
    "atomic_rmw_tko": M.atomic, "atomic_cas_tko": M.atomic, "vprintf": vprintf,
    "ldmatrix": M.ldmatrix, "mma_sync": M.mma_sync, "tma_copy": tma_copy,
    "tma_store_copy": tma_store_copy, "tma_issue": tma_issue, "tma_wait": tma_wait,
    "tma_ring_reset": tma_ring_reset,
}
