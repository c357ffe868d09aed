"""The PTX back end shared by every target: the PTX program (``ir``), the builder the
lowering writes into (``builder``) and the passes over PTX programs (``passes``)."""
