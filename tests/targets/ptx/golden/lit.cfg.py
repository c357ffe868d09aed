"""lit configuration: ``lit tests/targets/ptx/golden`` runs the back end's golden tests MLIR-style
(``nanotile-passes`` is ``python -m nanotile.passes``; ``filecheck`` is the pip one).
pytest runs the same files through tests/passes/test_golden.py."""

import os
import sys
import tempfile

import lit.formats

config.name = "nanotile-passes"  # noqa: F821 - lit provides `config`
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".mlir"]  # noqa: F821
config.test_source_root = os.path.dirname(__file__)  # noqa: F821
# lit's scratch files go to a temporary directory, not next to the tests
config.test_exec_root = os.path.join(tempfile.gettempdir(), "nanotile-lit-backend")  # noqa: F821
root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
bin_dir = os.path.dirname(sys.executable)
config.environment["PYTHONPATH"] = root  # noqa: F821
config.substitutions.append(("nanotile-passes", f"{sys.executable} -m nanotile.passes"))  # noqa: F821
config.substitutions.append(("filecheck", os.path.join(bin_dir, "filecheck")))  # noqa: F821
