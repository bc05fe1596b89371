"""The devices launches run on, one backend each (the interface:
``backends.base``). Only the CPU's so far (``backends.cpu``); a CUDA
backend will be its sibling."""
