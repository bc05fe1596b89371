"""The ``device`` fixtures of the device tests (test_gpu_*.py): a test runs
once per device, the CPU then each CUDA device. ``ADJIT_DEVICE_TESTS=cuda``
leaves the CPU out, as the GPU machine does, where the kernels come
precompiled for its GPU only (tools/gpu_device_check.py). Without a CUDA
device the CUDA runs do not exist and the CPU runs check the tests."""
import os

import pytest

import adjit as wp

CUDA_DEVICES = [d.alias for d in wp.get_cuda_devices()] if wp.is_cuda_available() else []
DEVICES = ([] if os.environ.get("ADJIT_DEVICE_TESTS") == "cuda" else ["cpu"]) + CUDA_DEVICES


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture
def cuda_device(device):
    if device == "cpu":
        pytest.skip("CUDA only")
    return device
