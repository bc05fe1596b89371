"""pytest configuration for the Python test suite.

Every test session compiles into its own fresh, temporary compile cache, so
the suite exercises the real compiler (not objects cached by an earlier
version of adjit) and never writes into the user's cache.
"""
import atexit
import os
import shutil
import tempfile

if os.environ.get("ADJIT_TEST_CACHE_DIR"):
    # precompiled kernels (tools/gpu_device_check.py: a GPU machine without the compiler)
    os.environ["ADJIT_CACHE_DIR"] = os.environ["ADJIT_TEST_CACHE_DIR"]
else:
    _CACHE_DIR = tempfile.mkdtemp(prefix="adjit-test-cache-")
    os.environ["ADJIT_CACHE_DIR"] = _CACHE_DIR
    atexit.register(shutil.rmtree, _CACHE_DIR, ignore_errors=True)
