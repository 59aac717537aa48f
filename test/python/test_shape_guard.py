"""A run-time shape argument that disagrees with the compiled shape raises
kiln.Error; the right one gives numpy's numbers."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import kiln


@pytest.fixture(scope="module")
def reshape_model(tmp_path_factory):
    d = tmp_path_factory.mktemp("shape_guard")
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape1")],
        "shape_guard",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 6])])
    path = d / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]),
              str(path))
    return kiln.load(kiln.compile(str(path), str(d / "model.so")))


def test_right_shape_matches_numpy(reshape_model):
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    for shape in ([4, 6], [-1, 6]):
        (y,) = reshape_model(x, np.array(shape, np.int64))
        np.testing.assert_array_equal(y, x.reshape(4, 6))


def test_wrong_shape_raises(reshape_model):
    x = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(kiln.Error) as info:
        reshape_model(x, np.array([6, 4], np.int64))
    message = str(info.value)
    assert info.value.code == "INVALID_ARGUMENT"
    for part in ["'shape'", "'reshape1'", "4x6"]:
        assert part in message, message
    # The session stays usable after a failed guard.
    (y,) = reshape_model(x, np.array([4, 6], np.int64))
    assert y.shape == (4, 6)


def test_guards_do_not_leak_between_threads(reshape_model):
    """Each session has its own status word: a failing call on one thread
    never fails (or passes) a call on another."""
    import threading

    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    right, wrong = np.array([4, 6], np.int64), np.array([6, 4], np.int64)
    failures = []

    def worker(i):
        try:
            for k in range(40):
                if (i + k) % 2:
                    (y,) = reshape_model(x, right)
                    np.testing.assert_array_equal(y, x.reshape(4, 6))
                else:
                    with pytest.raises(kiln.Error, match="'reshape1'"):
                        reshape_model(x, wrong)
        except Exception as e:  # surfaced in the main thread below
            failures.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[0]
