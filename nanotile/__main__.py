"""``python -m nanotile``: the ``nanotile`` command (nanotile.cli)."""

import sys

from .cli import main

sys.exit(main())
