"""nanotile's passes: languages (the stages), one pass per file, the registry, the default
pipelines per target, and the pass manager with its dumps, checks and timing.

- languages.py / language.py  the declared stages and their checkers
- base.py                     what a pass is (Pass, PassContext)
- rewrite.py                  helpers for editing IR (uses, replacement, constants)
- registry.py                 name -> pass class; ``-p`` pipeline strings
- pipelines.py                the default pipeline per target
- manager.py                  running a pipeline (verify, dumps, timing, semantics)
- semantics.py                --check-semantics: the interpreter as the oracle
- cli_options.py              the command-line flags (``python -m nanotile.passes``)
- one file per pass           e.g. cse.py <-> ``cse``

Writing a pass:
1. ``nanotile/passes/my_pass.py`` with a docstring ``my-pass: what it does.  tile -> tile``
   and one frozen dataclass subclass of ``Pass`` (``name = "my-pass"``; ``input``/``output``
   languages; its fields are its options, ``-p my-pass{some-option=3}``). ``apply`` edits
   the module in place and says whether it changed anything.
2. Register the class in registry.py; add it to pipelines.py where it belongs.
3. ``tests/passes/golden/my_pass.mlir``: a RUN line, inputs and a few CHECK lines. The
   tests then check the golden file with filecheck, that the checks fail without the pass,
   and that the pass keeps every corpus kernel's interpreter results.
"""
