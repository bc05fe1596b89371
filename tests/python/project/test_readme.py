"""The README's example runs as written (a kernel, with its gradient), and so
do docs/safety.md's, docs/determinism.md's and docs/autodiff.md's forward-mode
example."""
import re
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[3] / "README.md"
SAFETY = README.parent / "docs" / "safety.md"
DETERMINISM = README.parent / "docs" / "determinism.md"


def test_readme_kernel_with_gradient_runs(tmp_path):
    code = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    script = tmp_path / "readme_example.py"  # kernels need a real source file
    script.write_text(code)
    namespace = {"__name__": "readme_example", "__file__": str(script)}
    exec(compile(code, str(script), "exec"), namespace)
    np.testing.assert_array_equal(namespace["x"].grad.numpy(), 2.0)
    np.testing.assert_array_equal(namespace["y"].grad.numpy(), 1.0)
    assert ".entry saxpy" in namespace["ptx"]


def test_safety_doc_example_runs(tmp_path):
    code = re.search(r"```python\n(.*?)```", SAFETY.read_text(), re.S).group(1)
    script = tmp_path / "gather.py"
    script.write_text(code)
    namespace = {"__name__": "gather", "__file__": str(script)}
    exec(compile(code, str(script), "exec"), namespace)  # its own asserts check the error
    np.testing.assert_array_equal(namespace["out"].numpy()[:9], 2.0 * np.arange(9))


def test_determinism_doc_example_runs(tmp_path):
    code = re.search(r"```python\n(.*?)```", DETERMINISM.read_text(), re.S).group(1)
    script = tmp_path / "scatter.py"
    script.write_text(code)
    namespace = {"__name__": "scatter", "__file__": str(script)}
    exec(compile(code, str(script), "exec"), namespace)  # its assert compares with np.add.at bitwise
    assert namespace["y"].numpy().sum() != 0


AUTODIFF = README.parent / "docs" / "autodiff.md"


def test_autodiff_doc_forward_mode_example_runs(tmp_path):
    section = AUTODIFF.read_text().split("## Forward mode", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    script = tmp_path / "forward_mode.py"
    script.write_text(code)
    namespace = {"__name__": "forward_mode", "__file__": str(script)}
    exec(compile(code, str(script), "exec"), namespace)  # its asserts check jvp and the Jacobians
    x = namespace["x"].numpy()
    y1 = np.sin(2.0 * x) * x
    dy1 = np.cos(2.0 * x) * 2.0 * x + np.sin(2.0 * x)
    np.testing.assert_allclose(namespace["y2"].numpy(), np.sin(3.0 * y1) * y1, rtol=1e-12)
    np.testing.assert_allclose(namespace["dy2"].numpy(),
                               (np.cos(3.0 * y1) * 3.0 * y1 + np.sin(3.0 * y1)) * dy1, rtol=1e-12)


def _autodiff_examples() -> str:
    """docs/autodiff.md's Python examples, in order, as one script (each
    section's example builds on the ones before)."""
    return "\n".join(re.findall(r"```python\n(.*?)```", AUTODIFF.read_text(), re.S))


def test_autodiff_doc_examples_run_in_order(tmp_path):
    code = _autodiff_examples()
    script = tmp_path / "autodiff_doc.py"
    script.write_text(code)
    namespace = {"__name__": "autodiff_doc", "__file__": str(script)}
    exec(compile(code, str(script), "exec"), namespace)  # the asserts check gradients, Jacobians and H v
    xs = namespace["xs"]
    # the Hessian-vector product against central differences of the gradient
    v, h = namespace["v"], 1e-6
    grad = lambda z: np.cos(z) * z + np.sin(z)
    np.testing.assert_allclose(namespace["hv"], (grad(xs + h * v) - grad(xs - h * v)) / (2 * h),
                               rtol=1e-6, atol=1e-9)
    t = np.arange(1000) * 0.01
    np.testing.assert_allclose(namespace["J"][:, 0], np.exp(-0.5 * t) * np.cos(3.0 * t), rtol=1e-12)
