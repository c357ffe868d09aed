"""nanotile's passes: languages (the stages), one pass per file, the registry, the default
pipelines per target, and the pass manager with its dumps, checks and timing.

- languages.py / language.py  the declared stages and their checkers
- base.py                     what a pass is (Pass, PassContext)
- registry.py                 name -> pass class; ``-p`` pipeline strings
- pipelines.py                the default pipeline per target
- manager.py                  running a pipeline (verify, dumps, timing, semantics)
- cli_options.py              the command-line flags
- one file per pass           e.g. cse.py <-> ``cse``
"""
