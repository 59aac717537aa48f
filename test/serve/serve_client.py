"""A minimal kiln-serve launcher and KServe v2 client for the tests and the
benchmark: http.client only, loopback only."""
import http.client
import json
import os
import select
import signal
import subprocess
import time

import numpy as np

DTYPES = {"FP32": np.float32, "FP64": np.float64, "INT64": np.int64, "INT32": np.int32,
          "UINT8": np.uint8, "INT8": np.int8, "BOOL": np.bool_, "FP16": np.float16}


class Server:
    """A kiln-serve process on 127.0.0.1 and a free port (it binds port 0 and
    prints the port it got)."""

    def __init__(self, binary, args, log_path, startup_timeout=60, env=None,
                 port_args=("--port", "0"), grpc=False):
        """env: extra environment variables; port_args: the address flags
        (() to leave the port to KILN_SERVE_PORT); grpc: expect the second
        line, 'listening on grpc://HOST:PORT', and keep its port."""
        self.log_path = log_path
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(
            [binary, "--host", "127.0.0.1", *port_args, *args],
            stdout=subprocess.PIPE, stderr=self.log, bufsize=0,
            env={**os.environ, **(env or {})})
        deadline = time.time() + startup_timeout
        line = self._line(deadline)
        if "listening on http://" not in line:
            self.kill()
            raise RuntimeError(f"kiln-serve did not start: {line!r}; see {log_path}")
        self.port = int(line.rsplit(":", 1)[1])
        self.grpc_port = None
        if grpc:
            line = self._line(deadline)
            if "listening on grpc://" not in line:
                self.kill()
                raise RuntimeError(f"kiln-serve did not serve gRPC: {line!r}; see {log_path}")
            self.grpc_port = int(line.rsplit(":", 1)[1])

    def _line(self, deadline):
        """One line of stdout, read a byte at a time: a buffered readline
        could swallow the next line, which select() would then never see."""
        line = b""
        fd = self.proc.stdout.fileno()
        while time.time() < deadline and not line.endswith(b"\n"):
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                byte = os.read(fd, 1)
                if not byte:
                    break
                line += byte
            elif self.proc.poll() is not None:
                break
        return line.decode(errors="replace").strip()

    def log_text(self):
        """What the server wrote on stderr so far."""
        with open(self.log_path) as f:
            return f.read()

    def connection(self, timeout=60):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None, conn=None):
        """Returns (status, headers dict with lower-case keys, body bytes)."""
        own = conn is None
        conn = conn or self.connection()
        try:
            if isinstance(body, (dict, list)):
                body = json.dumps(body).encode()
            conn.request(method, path, body=body, headers=headers or {})
            r = conn.getresponse()
            data = r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, data
        finally:
            if own:
                conn.close()

    def get_json(self, path):
        status, _, body = self.request("GET", path)
        return status, json.loads(body) if body else None

    def post_json(self, path, body=None, conn=None):
        status, _, data = self.request("POST", path, body if body is not None else b"",
                                       {"Content-Type": "application/json"}, conn)
        return status, json.loads(data) if data else None

    def metrics(self):
        """{(name, model, version): value} from /metrics."""
        status, _, body = self.request("GET", "/metrics")
        assert status == 200
        out = {}
        for line in body.decode().splitlines():
            if not line or line.startswith("#"):
                continue
            series, value = line.rsplit(" ", 1)
            name, _, labels = series.partition("{")
            parts = dict(p.split("=", 1) for p in labels.rstrip("}").split(",") if p)
            key = (name, parts.get("model", "").strip('"'), parts.get("version", "").strip('"'))
            if "le" in parts:
                key += (parts["le"].strip('"'),)
            out[key] = float(value)
        return out

    def terminate(self, timeout=60):
        """SIGTERM, then the exit status."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        finally:
            self.log.close()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def json_infer_body(inputs, outputs=None, binary_output=None):
    """inputs: {name: ndarray FP32}."""
    body = {"inputs": [{"name": n, "shape": list(a.shape), "datatype": "FP32",
                        "data": a.reshape(-1).tolist()} for n, a in inputs.items()]}
    if outputs is not None:
        body["outputs"] = [{"name": n} for n in outputs]
    if binary_output is not None:
        body["parameters"] = {"binary_data_output": binary_output}
    return body


def binary_infer_request(inputs, binary_outputs=True, outputs=None):
    """Body and headers of a binary-extension request."""
    header = {"inputs": [], "parameters": {"binary_data_output": binary_outputs}}
    blobs = []
    for name, a in inputs.items():
        # A type the protocol names keeps its type; anything else is FP32.
        datatype = next((k for k, t in DTYPES.items()
                         if np.asarray(a).dtype == np.dtype(t)), "FP32")
        a = np.ascontiguousarray(a, DTYPES[datatype])
        header["inputs"].append({"name": name, "shape": list(a.shape), "datatype": datatype,
                                 "parameters": {"binary_data_size": a.nbytes}})
        blobs.append(a.tobytes())
    if outputs is not None:
        header["outputs"] = [{"name": n} for n in outputs]
    head = json.dumps(header).encode()
    return head + b"".join(blobs), {"Inference-Header-Content-Length": str(len(head)),
                                    "Content-Type": "application/octet-stream"}


def decode_response(headers, body):
    """{name: ndarray} from a JSON or binary infer response, plus the JSON."""
    n = int(headers.get("inference-header-content-length", len(body)))
    head = json.loads(body[:n])
    offset = n
    out = {}
    for o in head["outputs"]:
        dtype = DTYPES[o["datatype"]]
        if "data" in o:
            out[o["name"]] = np.array(o["data"], dtype).reshape(o["shape"])
        else:
            size = o["parameters"]["binary_data_size"]
            out[o["name"]] = np.frombuffer(body[offset:offset + size], dtype).reshape(o["shape"])
            offset += size
    assert offset == len(body)
    return out, head
