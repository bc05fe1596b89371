"""The adjit dialect's op builders (``adjit.dialects.adjit.LoadOp`` and so on)."""
from ._adjit_ops_gen import *  # noqa: F401,F403
