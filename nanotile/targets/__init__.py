"""Code-generation targets of nanotile: the PTX back end (sm_90a, sm_100a) and the emulator.

Flow: the target's default pipeline (nanotile/passes/pipelines.py: canonicalisation,
then ``lower-views`` -> tile-ptr and ``resolve-tokens`` -> program order) and then
``lower.compile_module``, which gives every tile value a distributed layout (layout.py)
and lowers op families to per-thread PTX:

- lower_math.py / lower_convert.py  elementwise arithmetic, math, casts, pointer offsets
- lower_memory.py                   views (if any are left), ld/st/atom/red, memory order
- lower_shared.py                   shared-memory movement: broadcast, permute, cat,
                                    extract, insert, pack/unpack, reduce, scan, mma
- lower_control.py                  if / for / loop / break / continue / assert
- lower_print.py                    print_tko -> vprintf
- lower_misc.py, lower_globals.py   constants, iota, grid queries, globals
- rules.py                          op name -> lowering rule (refusals name the op)
- ptx.py                            the PTX builder (registers, labels, kernel text)
- target.py, sm90/, sm100/          per-architecture headers and flags
- compile.py                        compile_to_ptx, ptxas_path, assemble (ptxas)

Public API: ``nanotile.targets.compile.compile_to_ptx(module, "sm_90" | "sm_100")`` and
``assemble(ptx, gpu_name)``; the driver exposes them as ``--emit=ptx|cubin``.
"""
