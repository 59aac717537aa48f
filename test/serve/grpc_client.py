"""A KServe v2 gRPC client for the tests, built the way Triton's and KServe's
clients call a server: message classes that protoc --python_out generates
from the protocol's .proto (ours, tools/kiln-serve/proto/inference.proto),
and grpc's generic unary_unary on '/inference.GRPCInferenceService/<Call>'.
Nothing here comes from kiln-serve's C++ code, so a wrong field number or
name on either side shows up as a failing test."""
import importlib
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = os.environ.get("KILN_SERVE_PROTO", os.path.join(
    HERE, "..", "..", "tools", "kiln-serve", "proto", "inference.proto"))
PROTOC = os.environ.get("KILN_PROTOC") or shutil.which("protoc")
SERVICE = "/inference.GRPCInferenceService/"

DTYPES = {"FP32": np.float32, "FP64": np.float64, "FP16": np.float16,
          "INT8": np.int8, "INT16": np.int16, "INT32": np.int32, "INT64": np.int64,
          "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32,
          "UINT64": np.uint64, "BOOL": np.bool_}
# The typed field of InferTensorContents for each datatype (the protocol's).
TYPED_FIELD = {"FP32": "fp32_contents", "FP64": "fp64_contents",
               "INT8": "int_contents", "INT16": "int_contents", "INT32": "int_contents",
               "INT64": "int64_contents", "UINT8": "uint_contents",
               "UINT16": "uint_contents", "UINT32": "uint_contents",
               "UINT64": "uint64_contents", "BOOL": "bool_contents"}
NUMPY_NAMES = {np.dtype(v): k for k, v in DTYPES.items()}


def generate(out_dir):
    """Runs protoc --python_out on the .proto; returns the inference_pb2 module."""
    subprocess.run([PROTOC, f"--proto_path={os.path.dirname(os.path.abspath(PROTO))}",
                    f"--python_out={out_dir}", os.path.abspath(PROTO)],
                   check=True, capture_output=True, text=True)
    sys.path.insert(0, out_dir)
    try:
        return importlib.import_module("inference_pb2")
    finally:
        sys.path.remove(out_dir)


class GrpcClient:
    def __init__(self, pb, port, max_message=-1):
        import grpc
        self.grpc = grpc
        self.pb = pb
        self.channel = grpc.insecure_channel(
            f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", max_message),
                                          ("grpc.max_receive_message_length", -1)])

    def close(self):
        self.channel.close()

    def call(self, method, request=None, timeout=60, token=None, **fields):
        """Calls `method` with `request` (or one built from `fields`); raises
        grpc.RpcError with .code() on an error status."""
        request = request or getattr(self.pb, f"{method}Request")(**fields)
        response_class = getattr(self.pb, f"{method}Response")
        stub = self.channel.unary_unary(
            SERVICE + method, request_serializer=type(request).SerializeToString,
            response_deserializer=response_class.FromString)
        metadata = [("authorization", f"Bearer {token}")] if token else None
        return stub(request, timeout=timeout, metadata=metadata)

    def code(self, method, request=None, **kwargs):
        """The status code (and details) of a call expected to fail."""
        try:
            self.call(method, request, **kwargs)
        except self.grpc.RpcError as e:
            return e.code().name, e.details()
        return "OK", ""

    def infer_request(self, model, inputs, raw=True, outputs=None, version="", id=""):
        """inputs: {name: ndarray}; raw: raw_input_contents, else typed contents."""
        req = self.pb.ModelInferRequest(model_name=model, model_version=version, id=id)
        for name, a in inputs.items():
            t = req.inputs.add(name=name, datatype=NUMPY_NAMES[a.dtype], shape=list(a.shape))
            if raw:
                req.raw_input_contents.append(np.ascontiguousarray(a).tobytes())
            else:
                getattr(t.contents, TYPED_FIELD[t.datatype]).extend(a.reshape(-1).tolist())
        for name in outputs or ():
            req.outputs.add(name=name)
        return req

    def infer(self, model, inputs, **kwargs):
        """{name: ndarray} of the outputs, and the response."""
        res = self.call("ModelInfer", self.infer_request(model, inputs, **kwargs))
        return decode(res), res


def decode(res):
    """{name: ndarray} from raw_output_contents or the typed contents."""
    out = {}
    for k, o in enumerate(res.outputs):
        dtype = DTYPES[o.datatype]
        if res.raw_output_contents:
            a = np.frombuffer(res.raw_output_contents[k], dtype)
        else:
            a = np.array(getattr(o.contents, TYPED_FIELD[o.datatype]), dtype)
        out[o.name] = a.reshape(list(o.shape))
    return out
