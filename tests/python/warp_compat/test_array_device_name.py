"""``array.device`` answers what Warp code asks of it (a Device in Warp):
Newton's graph coloring tests ``graph_edge_indices.device.is_cpu``. It stays
the device's alias as a string (equal, hashed and pickled as it)."""
import pickle

import numpy as np

import adjit as wp


def test_array_device_is_the_alias_and_answers_device_questions():
    a = wp.array(np.arange(4, dtype=np.int32), dtype=wp.int32, device="cpu")
    assert a.device == "cpu" and str(a.device) == "cpu" and hash(a.device) == hash("cpu")
    assert a.device.is_cpu is True and a.device.is_cuda is False  # Warp 1.19: True, False
    assert a.device.alias == "cpu" and a.device == wp.get_device("cpu")
    assert {"cpu": 1}[a.device] == 1
    assert pickle.loads(pickle.dumps(a.device)) == "cpu"
    b = wp.clone(a, device=a.device)  # as Newton: wp.clone(x, device=x.device)
    assert b.device.is_cpu and b.numpy().tolist() == [0, 1, 2, 3]
    assert wp.zeros(2, dtype=float)[1:].device.is_cpu  # views too
    back = pickle.loads(pickle.dumps(a))
    assert back.device.is_cpu and back.numpy().tolist() == [0, 1, 2, 3]
