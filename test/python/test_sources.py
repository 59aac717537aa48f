"""kiln.compile() on an onnx.ModelProto and on a torch.nn.Module, and the
package's typing and documentation."""
import os

import numpy as np
import onnx
import pytest

import kiln

from conftest import ATOL, RTOL


def test_model_proto(models_dir, tmp_path, ref_models, monkeypatch):
    proto = onnx.load(os.path.join(models_dir, "mlp", "model.onnx"))
    path = kiln.compile(proto, tmp_path / "proto.so")
    assert path == str(tmp_path / "proto.so")
    ref = ref_models["mlp"]
    got = kiln.load(path)(*[a for _, a in ref.inputs])
    np.testing.assert_allclose(got[0], ref.outputs[0][1], rtol=RTOL, atol=ATOL)
    # Without an output, the .so is named after the graph, in the current
    # directory, and the temporary ONNX file is gone.
    monkeypatch.chdir(tmp_path)
    proto.graph.name = "digits"
    assert kiln.compile(proto) == str(tmp_path / "digits.so")
    assert kiln.compile(proto, emit="kiln") == str(tmp_path / "digits.kiln.mlir")
    assert "func.func" in (tmp_path / "digits.kiln.mlir").read_text()


def test_model_proto_errors_name_the_node(tmp_path):
    from onnx import TensorProto, helper
    node = helper.make_node("NoSuchOp", ["x"], ["y"], name="the_bad_node")
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(kiln.Error, match="the_bad_node"):
        kiln.compile(proto, tmp_path / "bad.so")
    assert not (tmp_path / "bad.so").exists()


def _net():
    torch = pytest.importorskip("torch")

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(6, 3)
            self.drop = torch.nn.Dropout(0.5)

        def forward(self, x):
            return torch.tanh(self.drop(self.fc(x)))

    torch.manual_seed(0)
    return torch, Net().train()


def test_torch_module(tmp_path):
    torch, net = _net()
    path = kiln.compile(net, tmp_path / "net.so", example_inputs=torch.randn(2, 6),
                        output_names=["y"])
    assert net.training, "compile() restores the module's training mode"
    model = kiln.load(path)
    assert [i.name for i in model.inputs] == ["input_0"]
    assert [o.name for o in model.outputs] == ["y"]
    x = torch.randn(2, 6)
    net.eval()
    with torch.no_grad():
        want = net(x).numpy()
    np.testing.assert_allclose(model(x.numpy())[0], want, rtol=RTOL, atol=ATOL)


def test_torch_dynamic_axes_become_bounds(tmp_path):
    torch, net = _net()
    net.eval()
    path = kiln.compile(net, tmp_path / "dyn.so", example_inputs=(torch.randn(3, 6),),
                        dynamic_axes={"input_0": {0: ("batch", 1, 8)}, "y": {0: "batch"}},
                        output_names=["y"])
    model = kiln.load(path)
    for batch in (1, 5, 8):
        x = torch.randn(batch, 6)
        with torch.no_grad():
            want = net(x).numpy()
        np.testing.assert_allclose(model(x.numpy())[0], want, rtol=RTOL, atol=ATOL)
    with pytest.raises(kiln.Error):
        model(np.zeros((9, 6), np.float32))


def test_torch_needs_example_inputs(tmp_path):
    _, net = _net()
    with pytest.raises(TypeError, match="example_inputs"):
        kiln.compile(net, tmp_path / "x.so")


def test_wrong_model_type():
    with pytest.raises(TypeError, match="onnx.ModelProto or a torch.nn.Module, not int"):
        kiln.compile(42)
    with pytest.raises(TypeError, match="torch.nn.Module, not to an ONNX file"):
        kiln.compile("model.onnx", example_inputs=1)


def test_typed_and_documented():
    folder = os.path.dirname(kiln.__file__)
    assert os.path.isfile(os.path.join(folder, "py.typed"))
    stub = open(os.path.join(folder, "__init__.pyi")).read()
    for name in kiln.__all__:
        assert f"{name}" in stub, f"{name} is missing from __init__.pyi"
    public = [getattr(kiln, n) for n in kiln.__all__ if callable(getattr(kiln, n))]
    public += [getattr(kiln.Model, n) for n in dir(kiln.Model) if not n.startswith("_")]
    public += [getattr(kiln.TensorInfo, n) for n in dir(kiln.TensorInfo)
               if not n.startswith("_")]
    undocumented = [getattr(f, "__name__", repr(f)) for f in public
                    if not (getattr(f, "__doc__", None) or "").strip()]
    assert not undocumented, f"no docstring: {undocumented}"
    assert "Options:" in kiln.compile.__doc__ and "torch.nn.Module" in kiln.compile.__doc__
