"""Parameter checking for components: precise messages, and no "created but never used" noise.

Amaranth warns when an elaboratable is garbage-collected without being elaborated.  A component
whose ``__init__`` rejects its parameters is never meant to be used, so :func:`rejecting` silences
that warning for it before the error propagates.
"""

from contextlib import contextmanager

__all__ = ["rejecting"]


@contextmanager
def rejecting(component):
    """``with rejecting(self): <checks that raise>`` inside a component's ``__init__``."""
    try:
        yield
    except (ValueError, TypeError):
        component._MustUse__silence = True
        raise
