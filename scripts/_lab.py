"""The benchmarks and studies are run from here, as ``python scripts/NAME.py``,
and live in ``lab/`` beside the package: each file here hands its command
line to the ``main`` of ``lab/NAME.py``.

The command stays ``python scripts/NAME.py ...`` (``sys.argv`` is left as
typed), so the command a results page records still runs it.
"""

import importlib
import sys
from pathlib import Path

#: where the benchmarks and studies live
LAB = Path(__file__).resolve().parents[1] / "lab"


def run(script):
    """Run ``lab/<name of script>``'s ``main`` on this command line. In a
    process that multiprocessing spawned (a Dask worker: it imports the
    script again as ``__mp_main__``), only make ``lab/`` importable, so
    the worker can load the study's functions without running it again."""
    if str(LAB) not in sys.path:
        sys.path.insert(0, str(LAB))
    if sys._getframe(1).f_globals.get("__name__") != "__main__":  # the script's own name
        return
    sys.exit(importlib.import_module(Path(script).stem).main())
