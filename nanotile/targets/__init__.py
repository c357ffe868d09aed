"""Code-generation targets of nanotile (PTX back end, emulator)."""
