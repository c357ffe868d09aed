"""Lab 1, part 1: answers found with the command line (README.md, steps 1 to 3).

Replace each None by your answer: a string where the question asks for a name or a
version, an int where it asks for a number. The grader computes the true answers from
the project itself (the example files, the bytecode writer, the default pipeline, the
interpreter), so find them by running nanotile, not by reading the grader.
"""

# Which bytecode version does examples/axpy.tileirbc declare in its header?
# A string "major.minor". (Look at its first bytes: `od -A d -t u1 FILE | head -1`, and
# the header's layout in nanotile/bytecode/wire.py.)
BYTECODE_VERSION = None

# How many bytes does `nanotile examples/axpy.mlir --emit=bytecode
# --bytecode-version=13.1 -o FILE` write? (an int)
BYTECODE_SIZE_13_1 = None

# examples/matmul_f16.tileirbc asks for the tile block id twice (get_tile_block_id).
# After which pass of the default pipeline is there only one left? The pass's name.
PASS_MERGING_BLOCK_ID_QUERIES = None

# After which pass of the default pipeline does examples/axpy.tileirbc first have no
# view op left (make_tensor_view, make_partition_view, load_view_tko, store_view_tko)?
FIRST_PASS_WITHOUT_VIEWS = None

# In which language (tile, tile-canon, tile-opt, ...) is the module after that pass?
LANGUAGE_WITHOUT_VIEWS = None

# How many ops does @softmax_rows (examples/softmax_rows.tileirbc) have after the pass
# cse? Count every op inside the entry: the ops in the reduce bodies and the terminators
# (yield, return) included, the entry itself not. (an int)
SOFTMAX_OPS_AFTER_CSE = None

# How many ops does the interpreter execute for examples/rms_norm.tileirbc on grid 1?
# (the lines `nanotile run examples/rms_norm.tileirbc --grid 1 --inputs IN.npz --trace`
# logs; make IN.npz as README.md shows) (an int)
RMS_NORM_EXECUTED_OPS = None
