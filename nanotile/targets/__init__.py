"""Code-generation targets of nanotile: the PTX back end (sm_90a, sm_100a) and the emulator.

Flow: the target's default pipeline (nanotile/passes/pipelines.py: canonicalisation,
then ``lower-views`` -> tile-ptr, ``resolve-tokens`` -> program order, the layout passes,
then the pass ``lower-to-ptx{gpu=...}`` (lower_to_ptx.py), which runs
``lower.compile_module`` and keeps the result as ``module.ptx``, a ptx.ir.PtxProgram that
the PTX passes edit). ``compile_module`` lowers op families to per-thread PTX:

- lower_math.py / lower_convert.py  elementwise arithmetic, math, casts, pointer offsets
- lower_memory.py                   views (if any are left), ld/st/atom/red, memory order
- lower_shared.py                   shared-memory movement: broadcast, permute, cat,
                                    extract, insert, pack/unpack, reduce, scan, mma
- lower_mma.py                      mmaf/mmai on mma.sync (f16, bf16, f8, i8) when the
                                    shape fits; lower_shared's FMA loop otherwise
- lower_control.py                  if / for / loop / break / continue / assert
- lower_print.py                    print_tko -> vprintf
- lower_misc.py, lower_globals.py   constants, iota, grid queries, globals
- rules.py                          op name -> lowering rule (refusals name the op)
- ptx.py                            the PTX builder (registers, labels, kernel text;
                                    shared memory over 48 KB is dynamic: see its docstring)
- target.py, sm90/, sm100/          per-architecture headers and flags
- lower_to_ptx.py                   the pass from the tile stages to the ptx stages
- compile.py                        compile_to_ptx (runs the pipeline), ptxas_path, assemble

Public API: ``nanotile.targets.compile.compile_to_ptx(module, "sm_90" | "sm_100")`` and
``assemble(ptx, gpu_name)``; the driver exposes them as ``--emit=ptx|cubin``.
"""
