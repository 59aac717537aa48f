#!/usr/bin/python3
"""A mutation fuzzer for kiln-serve's HTTP front end (docs/security.md).

Sends raw requests over sockets: valid KServe requests (JSON and binary
tensors, metadata, health) with random mutations of the request line, the
headers (lengths, counts, duplicate and contradictory Content-Length,
chunked bodies with bad sizes) and the body (bit flips, truncation, invalid
UTF-8, deep nesting, ragged data), plus random bytes. After every request the
server must still answer /v2/health/live with 200; every answer it gives must
be an HTTP status line (or a closed connection).

  fuzz_http.py KILN_SERVE MODEL.so WORKDIR [--iterations 300 | --minutes 60] [--seed S]

`fuzz(host, port, ...)` is what test_serve.py calls for the short run in CI.
Exit status: 0 when the server stayed up and sane.
"""
import argparse
import json
import os
import random
import socket
import sys
import time


def _valid_requests(model, rng):
    x = [round(rng.uniform(-1, 1), 3) for _ in range(16)]
    body = json.dumps({"inputs": [{"name": "x", "shape": [1, 16], "datatype": "FP32",
                                   "data": x}]}).encode()
    head = json.dumps({"inputs": [{"name": "x", "shape": [1, 16], "datatype": "FP32",
                                   "parameters": {"binary_data_size": 64}}]}).encode()
    binary = head + bytes(rng.randrange(256) for _ in range(64))
    return [
        ("POST", f"/v2/models/{model}/infer", {"Content-Type": "application/json"}, body),
        ("POST", f"/v2/models/{model}/infer",
         {"Inference-Header-Content-Length": str(len(head))}, binary),
        ("GET", f"/v2/models/{model}", {}, b""),
        ("GET", "/v2/health/ready", {}, b""),
        ("POST", f"/v2/repository/models/{model}/load", {}, b"{}"),
    ]


def _build(method, path, headers, body, length=None):
    lines = [f"{method} {path} HTTP/1.1", "Host: fuzz", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    lines.append(f"Content-Length: {len(body) if length is None else length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape") + body


def _deep(n):
    return b'{"inputs":[{"name":"x","shape":[1,16],"datatype":"FP32","data":' + \
        b"[" * n + b"1" + b"]" * n + b"}]}"


def make_request(rng, model):
    method, path, headers, body = rng.choice(_valid_requests(model, rng))
    kind = rng.randrange(14)
    if kind == 0:  # bit flips anywhere
        raw = bytearray(_build(method, path, headers, body))
        for _ in range(rng.randrange(1, 12)):
            i = rng.randrange(len(raw))
            raw[i] ^= 1 << rng.randrange(8)
        return bytes(raw)
    if kind == 1:  # truncated
        raw = _build(method, path, headers, body)
        return raw[: rng.randrange(len(raw))]
    if kind == 2:  # bad Content-Length
        return _build(method, path, headers, body,
                      rng.choice(["-1", "1e12", "18446744073709551621", "abc", " 5",
                                  "99999999999999999999", str(len(body) + 1000)]))
    if kind == 3:  # two disagreeing Content-Lengths
        headers = dict(headers)
        headers["Content-length"] = str(rng.randrange(0, 100))
        return _build(method, path, headers, body)
    if kind == 4:  # chunked with a bad chunk
        lines = [f"{method} {path} HTTP/1.1", "Host: fuzz", "Transfer-Encoding: chunked"]
        chunk = rng.choice([b"zz\r\n", b"ffffffffffffffff\r\n", b"-5\r\n", b"4\r\nab\r\n",
                            b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"])
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + chunk
    if kind == 5:  # many or huge headers
        headers = dict(headers)
        if rng.randrange(2):
            for i in range(rng.randrange(100, 3000)):
                headers[f"X-{i}"] = "v"
        else:
            headers["X-Big"] = "a" * rng.randrange(10000, 200000)
        return _build(method, path, headers, body)
    if kind == 6:  # invalid UTF-8 in JSON
        return _build(method, path, {"Content-Type": "application/json"},
                      b'{"inputs":[{"name":"\xff\xfe\xc0","shape":[1,16],"datatype":"FP32",'
                      b'"data":[1]}]}')
    if kind == 7:  # deep nesting
        return _build("POST", f"/v2/models/{model}/infer", {}, _deep(rng.choice([100, 5000,
                                                                                 100000])))
    if kind == 8:  # ragged data
        data = [[1.0] * 15, [1.0] * 17]
        b = json.dumps({"inputs": [{"name": "x", "shape": [2, 16], "datatype": "FP32",
                                    "data": data}]}).encode()
        return _build("POST", f"/v2/models/{model}/infer", {}, b)
    if kind == 9:  # hostile paths
        path = rng.choice(["/v2/models/../../etc/passwd", "/v2/models/%00/infer",
                           "/" + "a" * 100000, "/v2/repository/models/x/load",
                           "*", "http://evil/", "/v2/models/" + "\u202e" + "/infer"])
        body = rng.choice([b"", b'{"parameters":{"path":"/etc/passwd"}}',
                           b'{"parameters":{"path":"../../../tmp/x.so"}}'])
        return _build(rng.choice(["GET", "POST", "DELETE", "PUT", "FOO"]), path, {}, body)
    if kind == 10:  # random bytes
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4096)))
    if kind == 11:  # other protocols
        return rng.choice([b"GET /\r\n\r\n", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
                           b"GET / HTTP/9.9\r\n\r\n", b"\r\n\r\n\r\n", b"\x16\x03\x01\x02\x00"])
    if kind == 12:  # binary header length lies
        headers = {"Inference-Header-Content-Length": rng.choice(["-1", "0", "999999",
                                                                  "18446744073709551615"])}
        return _build("POST", f"/v2/models/{model}/infer", headers, body)
    return _build(method, path, headers, body)  # a valid request now and then


def send(host, port, raw, timeout):
    """Sends `raw`; returns the first line of the answer, "" if the server
    closed the connection without one. Raises on a timeout."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        try:
            s.sendall(raw)
        except OSError:
            pass  # the server may close early on a bad request: fine
        data = b""
        try:
            while b"\r\n" not in data and len(data) < 65536:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
        except ConnectionResetError:
            return ""
        return data.split(b"\r\n", 1)[0].decode("latin-1")


def alive(host, port, timeout=10):
    line = send(host, port,
                b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                timeout)
    return line.startswith("HTTP/1.1 200")


def fuzz(host, port, model, iterations=300, minutes=0, seed=0, timeout=30, log=print):
    """Returns a list of failures (empty when the server held up)."""
    rng = random.Random(seed)
    deadline = time.monotonic() + minutes * 60 if minutes else None
    failures = []
    n = 0
    while (deadline and time.monotonic() < deadline) or (not deadline and n < iterations):
        raw = make_request(rng, model)
        try:
            line = send(host, port, raw, timeout)
            if line and not line.startswith("HTTP/1."):
                failures.append(f"request {n}: answered {line[:80]!r}")
        except (socket.timeout, TimeoutError):
            failures.append(f"request {n}: no answer in {timeout} s")
        except OSError:
            pass  # refused mid-send: judged by the liveness check below
        try:
            if not alive(host, port):
                failures.append(f"request {n}: /v2/health/live failed after {raw[:120]!r}")
                break
        except OSError as e:
            failures.append(f"request {n}: the server is gone ({e}) after {raw[:120]!r}")
            break
        n += 1
    log(f"fuzz_http: seed {seed}, {n} requests, {len(failures)} failures")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("serve")
    ap.add_argument("model_so")
    ap.add_argument("workdir")
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--minutes", type=float, default=0)
    ap.add_argument("--seed", type=int, default=None)
    a = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from serve_client import Server
    os.makedirs(a.workdir, exist_ok=True)
    server = Server(a.serve, ["--model", f"m={a.model_so}", "--read-timeout", "2"],
                    os.path.join(a.workdir, "serve.log"))
    seed = a.seed if a.seed is not None else int(time.time())
    try:
        failures = fuzz("127.0.0.1", server.port, "m", a.iterations, a.minutes, seed)
    finally:
        code = server.terminate()
    for f in failures:
        print("FAIL", f)
    return 1 if failures or code != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
