"""The compile cache survives hostile entries: an entry that fails to parse
or load is deleted and rebuilt with a warning, never trusted and never a crash."""
import hashlib
import importlib
import linecache
import logging
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import adjit as wp
from adjit import cache, loader
from adjit.variant import VariantSpec


def _kernel_module(tmp_path, name):
    """A fresh module holding one kernel (a new Kernel object: nothing loaded yet)."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent("""
        import adjit as wp

        @wp.kernel
        def triple(x: wp.array(dtype=float), y: wp.array(dtype=float)):
            i = wp.tid()
            y[i] = 3.0 * x[i]
        """))
    sys.path.insert(0, str(tmp_path))
    try:
        __import__(name)
        return sys.modules.pop(name)
    finally:
        sys.path.remove(str(tmp_path))


def _run(kernel):
    x = wp.array(np.arange(5, dtype=np.float32))
    y = wp.zeros(5)
    wp.launch(kernel, dim=5, inputs=[x, y])
    return y.numpy()


def _forward_parts(kernel):
    return loader._key_parts(kernel, VariantSpec(checks=loader.checks(kernel)))


def _with(**changes):
    """The good entry's metadata with ``changes`` (None: the field removed)."""
    def make(good):
        metadata = dict(good, **changes)
        return {k: v for k, v in metadata.items() if v is not None}
    return make


@pytest.mark.parametrize("damage,metadata,why", [
    (lambda code: code[:len(code) // 2], _with(), "malformed object"),
    (lambda code: b"\x7fELF" + b"\0" * 60, _with(), "for machine 0"),
    (lambda code: b"not an object at all", _with(), "not an ELF object"),
    (lambda code: code, _with(entry=None), "no entry symbol"),
    (lambda code: code, _with(access=[5]), "access metadata is malformed"),
    (lambda code: code, _with(access=["read", 6]), "access metadata is malformed"),
    (lambda code: code, _with(entry="no_such_symbol"), "no symbol 'no_such_symbol'"),
    (lambda code: code, _with(sites=None), "check sites are malformed"),
    (lambda code: code, _with(sites=[{"file": "k.py", "line": "7"}]), "check sites are malformed"),
    (lambda code: code, _with(origins=[["k.py", "1", 3]]), "source origins are malformed"),
])
def test_a_damaged_entry_with_a_valid_checksum_is_rebuilt(tmp_path, monkeypatch, caplog, damage, metadata, why):
    monkeypatch.setenv("ADJIT_CACHE_DIR", str(tmp_path / "cache"))
    first = _kernel_module(tmp_path, f"faults_{abs(hash(why))}")
    np.testing.assert_array_equal(_run(first.triple), 3 * np.arange(5))  # fills the cache
    parts = _forward_parts(first.triple)
    good_code, good_metadata = cache.load(first.triple.pyfunc, parts)
    # The damaged entry is written the way adjit writes entries: its checksum is valid.
    cache.store(first.triple.pyfunc, parts, damage(good_code), metadata(good_metadata))
    second = _kernel_module(tmp_path, f"faults_{abs(hash(why))}_again")
    with caplog.at_level(logging.WARNING, logger="adjit.cache"):
        np.testing.assert_array_equal(_run(second.triple), 3 * np.arange(5))
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("is damaged" in w and why in w and "rebuilding" in w for w in warnings), warnings
    # rebuilt: the entry now loads without a warning
    caplog.clear()
    third = _kernel_module(tmp_path, f"faults_{abs(hash(why))}_third")
    with caplog.at_level(logging.WARNING, logger="adjit.cache"):
        np.testing.assert_array_equal(_run(third.triple), 3 * np.arange(5))
    assert not [r for r in caplog.records if r.levelno == logging.WARNING]
    assert loader.cpu_variant(third.triple).from_cache


def test_a_truncated_or_non_dict_entry_is_rebuilt(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("ADJIT_CACHE_DIR", str(tmp_path / "cache"))
    first = _kernel_module(tmp_path, "faults_truncated")
    _run(first.triple)
    path = cache.entry_path(_forward_parts(first.triple))
    path.write_bytes(path.read_bytes()[:100])
    second = _kernel_module(tmp_path, "faults_truncated_again")
    with caplog.at_level(logging.WARNING, logger="adjit.cache"):
        np.testing.assert_array_equal(_run(second.triple), 3 * np.arange(5))
    assert any("corrupted or truncated" in r.getMessage() for r in caplog.records)


def test_a_read_only_cache_directory_still_runs_kernels(tmp_path, monkeypatch, caplog):
    if os.geteuid() == 0:
        pytest.skip("root ignores directory permissions")
    directory = tmp_path / "readonly"
    directory.mkdir()
    directory.chmod(0o500)
    monkeypatch.setenv("ADJIT_CACHE_DIR", str(directory))
    module = _kernel_module(tmp_path, "faults_readonly")
    with caplog.at_level(logging.WARNING, logger="adjit.cache"):
        np.testing.assert_array_equal(_run(module.triple), 3 * np.arange(5))
    assert any("cannot write the compile cache" in r.getMessage() for r in caplog.records)


def test_a_cache_path_that_is_a_file_still_runs_kernels(tmp_path, monkeypatch, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("ADJIT_CACHE_DIR", str(blocker))
    module = _kernel_module(tmp_path, "faults_file")
    with caplog.at_level(logging.WARNING, logger="adjit.cache"):
        np.testing.assert_array_equal(_run(module.triple), 3 * np.arange(5))
    assert any("cannot write the compile cache" in r.getMessage() for r in caplog.records)


DAMAGED_WITHOUT_COMPILER = '''
import sys
sys.modules["mlir"] = None
import numpy as np
import adjit as wp
import kernels_rt
x = wp.array(np.arange(5, dtype=np.float32)); y = wp.zeros(5)
try:
    wp.launch(kernels_rt.triple, dim=5, inputs=[x, y])
except wp.CompileError as e:
    print("ERROR:", e)
'''


def test_a_damaged_entry_without_the_compiler_is_a_clear_error(tmp_path):
    (tmp_path / "kernels_rt.py").write_text(textwrap.dedent("""
        import adjit as wp

        @wp.kernel
        def triple(x: wp.array(dtype=float), y: wp.array(dtype=float)):
            i = wp.tid()
            y[i] = 3.0 * x[i]
        """))
    env = {**os.environ, "ADJIT_CACHE_DIR": str(tmp_path / "cache")}
    fill = "import numpy as np, adjit as wp, kernels_rt; wp.launch(kernels_rt.triple, dim=5, " \
           "inputs=[wp.array(np.ones(5, np.float32)), wp.zeros(5)])"
    subprocess.run([sys.executable, "-c", fill], cwd=tmp_path, env=env, check=True)
    for entry in (tmp_path / "cache").glob("*.adjitobj"):
        # valid checksum, garbage object
        body = entry.read_bytes()
        magic, digest_and_body = body[:len(cache._MAGIC)], body[len(cache._MAGIC):]
        _, _, payload = digest_and_body.partition(b"\n")
        size = int.from_bytes(payload[:8], "little")
        new_body = payload[:8 + size] + b"\x7fELF" + b"\0" * 200
        entry.write_bytes(magic + hashlib.sha256(new_body).hexdigest().encode() + b"\n" + new_body)
    out = subprocess.run([sys.executable, "-c", DAMAGED_WITHOUT_COMPILER], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "ERROR: kernel 'triple'" in out.stdout and "not precompiled" in out.stdout, out.stdout
    assert "is damaged" in out.stderr


def test_an_entry_renamed_to_another_kernels_key_is_refused(tmp_path, monkeypatch, caplog):
    """Entries record their own key and kernel: one copied over another
    kernel's entry (a renamed file in an export folder) never runs as it."""
    monkeypatch.setenv("ADJIT_CACHE_DIR", str(tmp_path / "cache"))
    triple = _kernel_module(tmp_path, "renamed_triple").triple
    _run(triple)
    (tmp_path / "renamed_negate.py").write_text(textwrap.dedent("""
        import adjit as wp

        @wp.kernel
        def negate(x: wp.array(dtype=float), y: wp.array(dtype=float)):
            i = wp.tid()
            y[i] = -x[i]
        """))
    sys.path.insert(0, str(tmp_path))
    try:
        negate = __import__("renamed_negate").negate
    finally:
        sys.path.remove(str(tmp_path))
    np.testing.assert_array_equal(_run(negate), -np.arange(5))
    target = cache.entry_path(_forward_parts(triple))
    target.write_bytes(cache.entry_path(_forward_parts(negate)).read_bytes())
    again = _kernel_module(tmp_path, "renamed_triple_again").triple
    with caplog.at_level(logging.WARNING, logger="adjit.cache"):
        np.testing.assert_array_equal(_run(again), 3 * np.arange(5))  # triple's code, not negate's
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("refusing the cache entry" in w and "renamed_negate.negate" in w and "renamed_triple_again.triple" in w
               and str(tmp_path / "cache") in w for w in warnings), warnings


GATHERS = '''
import adjit as wp
{padding}
@wp.func
def pick(x: wp.array(dtype=float), k: int):
    return x[k]


@wp.kernel
def gather_k(idx: wp.array(dtype=int), x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = x[idx[i]]


@wp.kernel
def gather_f(idx: wp.array(dtype=int), x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = pick(x, idx[i])
'''


def _gathers(directory, name, padding):
    path = directory / f"{name}.py"
    path.write_text(GATHERS.format(padding="\n" * padding))
    sys.path.insert(0, str(directory))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(directory))
        sys.modules.pop(name, None)


def _out_of_range(kernel):
    idx = wp.array(np.array([0, 1, 7], np.int32))
    with pytest.raises(wp.OutOfBoundsError) as info:
        wp.launch(kernel, dim=3, inputs=[idx, wp.zeros(3), wp.zeros(3)])
    return info.value


@pytest.mark.parametrize("kernel, line", [("gather_k", 12), ("gather_f", 6)], ids=["in the kernel", "in a @func"])
@pytest.mark.parametrize("where", ["another file", "the same file, edited above"])
def test_an_entry_filled_by_an_identical_kernel_names_this_kernels_line(tmp_path, monkeypatch, kernel, line, where):
    """The key holds the sources' text, not where it lies: an identical kernel
    elsewhere (a copied script, the file edited above the kernel) loads the
    entry, and its errors must still name this file and line (they named the
    file and line of the kernel that filled the entry)."""
    monkeypatch.setenv("ADJIT_CACHE_DIR", str(tmp_path / "cache"))
    first = _gathers(tmp_path, "gathers", 0)
    e = _out_of_range(getattr(first, kernel))
    assert (e.filename, e.lineno) == (str(tmp_path / "gathers.py"), line)
    directory = tmp_path / "copy" if where == "another file" else tmp_path
    directory.mkdir(exist_ok=True)
    linecache.clearcache()
    moved = getattr(_gathers(directory, "gathers", 5), kernel)  # (one module name: the @func's key holds it)
    e = _out_of_range(moved)
    assert (e.filename, e.lineno) == (str(directory / "gathers.py"), line + 5), str(e)
    assert e.source_line.strip() == ("return x[k]" if kernel == "gather_f" else "out[i] = x[idx[i]]")
    assert loader.launch_variant(moved, VariantSpec(checks=loader.checks(moved), all_checked=True)).from_cache
