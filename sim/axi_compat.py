"""cocotbext-axi 0.1.28 on cocotb 2.1: silence exactly its four deprecated calls (``make test`` runs with
``PYTHONWARNINGS=error``).  Import this module before building any cocotbext-axi model.

cocotbext-axi uses ``Task.kill``, ``setimmediatevalue``, ``Edge(signal)`` and ``Event.set(data)``, which
cocotb 2 deprecates but still runs; the filters match only warnings raised from ``cocotbext.axi``.
"""

import re
import warnings

for _message in ("`task.kill()` is deprecated in favor of `task.cancel()`",
                 "Use `handle.set(Immediate(...))` or `handle.value = Immediate(...)` instead.",
                 "Use `signal.value_change` instead.",
                 "The data field will be removed in a future release."):
    warnings.filterwarnings("ignore", message=re.escape(_message), category=DeprecationWarning,
                            module=r"cocotbext\.axi\.")
