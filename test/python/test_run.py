"""kiln.load() and Model: numbers against torch eager, metadata, threads."""
import gc
import hashlib
import threading

import numpy as np
import pytest

import kiln
from conftest import ATOL, RTOL


def test_call_matches_reference(model, ref):
    outputs = model(*[array for _, array in ref.inputs])
    assert isinstance(outputs, list)
    assert len(outputs) == len(ref.outputs)
    for got, (name, want) in zip(outputs, ref.outputs):
        assert got.dtype == want.dtype and got.shape == want.shape, name
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=name)


@pytest.mark.parametrize("threads", [2, 3])
def test_threads_match_reference(compiled, model_name, ref, threads):
    # A session with a thread pool splits each parallel loop among threads;
    # the numbers must not change (same tolerances as one thread).
    model = kiln.load(compiled(model_name), threads=threads)
    for _ in range(3):
        outputs = model(*[array for _, array in ref.inputs])
        for got, (name, want) in zip(outputs, ref.outputs):
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=name)


def test_threads_must_be_positive(compiled):
    with pytest.raises(ValueError, match="threads must be at least 1"):
        kiln.load(compiled("mlp"), threads=0)


def test_run_dict_matches_reference(model, ref):
    outputs = model.run(dict(ref.inputs))
    assert isinstance(outputs, dict)
    assert list(outputs) == [name for name, _ in ref.outputs]  # model order
    for name, want in ref.outputs:
        np.testing.assert_allclose(outputs[name], want, rtol=RTOL, atol=ATOL, err_msg=name)


def test_inputs_and_outputs_metadata(model, ref):
    assert [(t.name, t.dtype, t.shape) for t in model.inputs] == ref.graph_inputs
    assert [(t.name, t.dtype, t.shape) for t in model.outputs] == ref.graph_outputs
    for t in model.inputs + model.outputs:
        assert isinstance(t.dtype, np.dtype)
        assert isinstance(t.shape, tuple)
        assert t.name in repr(t)


def test_info(model, ref, compiled, model_name):
    info = model.info
    for key in ["name", "hash", "compiler_version", "compile_options", "target_triple",
                "cpu", "required_isa", "arena_bytes", "arena_alignment"]:
        assert key in info, key
    with open(ref.onnx_path, "rb") as f:
        assert info["hash"] == hashlib.sha256(f.read()).hexdigest()
    assert info["compiler_version"] == kiln.__version__
    assert info["target_triple"].startswith(("x86_64", "aarch64"))
    assert isinstance(info["required_isa"], str)
    assert info["arena_bytes"] >= 0
    align = info["arena_alignment"]
    assert align > 0 and align & (align - 1) == 0, align
    assert model.path == compiled(model_name)
    assert model.name == info["name"]
    info["name"] = "edited"  # a copy: the model is unaffected
    assert model.info["name"] != "edited"


def test_repr(model):
    text = repr(model)
    assert model.name in text
    for t in model.inputs + model.outputs:
        assert t.name in text


def test_outputs_are_fresh_arrays(mlp_model, ref_models):
    x = ref_models["mlp"].inputs[0][1]
    (a,) = mlp_model(x)
    (b,) = mlp_model(x)
    assert a is not b and not np.shares_memory(a, b)
    assert not np.shares_memory(a, x)
    assert a.flags.c_contiguous and a.flags.writeable and a.flags.aligned
    np.testing.assert_array_equal(a, b)


def test_output_memory_is_reused_once_freed(compiled, ref_models):
    # A freed output's block goes to a later call (no new pages each call),
    # never one that an array or a view still holds.
    model = kiln.load(compiled("mlp"))
    x = ref_models["mlp"].inputs[0][1]
    (a,) = model(x)
    (b,) = model(x)
    view = a[1:]
    address = a.__array_interface__["data"][0]
    del a
    (c,) = model(x)
    assert not np.shares_memory(c, view) and not np.shares_memory(c, b)
    del view
    (d,) = model(x)
    assert d.__array_interface__["data"][0] == address
    np.testing.assert_array_equal(d, b)
    np.testing.assert_array_equal(c, b)


def test_outputs_outlive_the_model(compiled, ref_models):
    x = ref_models["mlp"].inputs[0][1]
    model = kiln.load(compiled("mlp"))
    (a,) = model(x)
    want = a.copy()
    del model
    gc.collect()
    (b,) = kiln.load(compiled("mlp"))(x)
    np.testing.assert_array_equal(a, want)
    np.testing.assert_array_equal(b, want)


def test_non_contiguous_inputs(mlp_model, ref_models):
    x = ref_models["mlp"].inputs[0][1]
    (want,) = mlp_model(x)
    fortran = np.asfortranarray(x)
    strided = np.repeat(x, 2, axis=1)[:, ::2]
    assert not fortran.flags.c_contiguous and not strided.flags.c_contiguous
    for view in (fortran, strided):
        (got,) = mlp_model(view)
        np.testing.assert_array_equal(got, want)


def test_inputs_are_not_modified(model, ref):
    copies = [array.copy() for _, array in ref.inputs]
    model(*copies)
    for got, (_, want) in zip(copies, ref.inputs):
        np.testing.assert_array_equal(got, want)


def test_concurrent_threads(mlp_model, ref_models):
    x, want = ref_models["mlp"].inputs[0][1], ref_models["mlp"].outputs[0][1]
    (expected,) = mlp_model(x)
    np.testing.assert_allclose(expected, want, rtol=RTOL, atol=ATOL)
    failures = []

    def worker():
        try:
            for _ in range(50):
                (got,) = mlp_model(x)
                np.testing.assert_array_equal(got, expected)
                got = mlp_model.run({"input": x})["output"]
                np.testing.assert_array_equal(got, expected)
        except Exception as e:  # surfaced in the main thread below
            failures.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[0]


def test_two_models_in_one_process(compiled, ref_models):
    models = {name: kiln.load(compiled(name)) for name in ref_models}
    for name, m in models.items():
        ref = ref_models[name]
        (got,) = m(ref.inputs[0][1])
        np.testing.assert_allclose(got, ref.outputs[0][1], rtol=RTOL, atol=ATOL)


def test_two_sessions_of_one_so(compiled, ref_models):
    path = compiled("mlp")
    a, b = kiln.load(path), kiln.load(path)
    x = ref_models["mlp"].inputs[0][1]
    np.testing.assert_array_equal(a(x)[0], b(x)[0])
    del a
    np.testing.assert_allclose(b(x)[0], ref_models["mlp"].outputs[0][1], rtol=RTOL, atol=ATOL)
