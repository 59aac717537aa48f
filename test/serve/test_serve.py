"""Integration tests of kiln-serve: the real server on 127.0.0.1 (port 0),
serving model.so files that kiln-compile builds from small ONNX models during
the session (see conftest.py). Traffic stays on loopback and every loop is
bounded in count and time."""
import json
import os
import threading
import time

import numpy as np
import pytest

from serve_client import binary_infer_request, decode_response, json_infer_body

RTOL, ATOL = 1e-4, 1e-5


def rows(n, seed=0):
    return np.random.default_rng(seed).standard_normal((n, 16)).astype(np.float32)


def infer(server, model, x, version=None, conn=None):
    path = f"/v2/models/{model}" + (f"/versions/{version}" if version else "") + "/infer"
    status, headers, body = server.request("POST", path, json.dumps(
        json_infer_body({"x": x})).encode(), {"Content-Type": "application/json"}, conn)
    return status, headers, body


def infer_y(server, model, x, version=None, conn=None):
    status, headers, body = infer(server, model, x, version, conn)
    assert status == 200, body
    out, head = decode_response(headers, body)
    return out["y"], head


def counter(metrics, name, model, version):
    return metrics.get((name, model, str(version)), 0.0)


# ---------------------------------------------------------------- endpoints


def test_health_and_metadata(serve, m):
    s = serve("--model", f"mlp={m.mlp1}", "--model", f"mlp={m.mlp2}@2",
              "--model", f"pair={m.pair}")
    assert s.get_json("/v2/health/live") == (200, {"live": True})
    assert s.get_json("/v2/health/ready") == (200, {"ready": True})
    status, meta = s.get_json("/v2")
    assert status == 200 and meta["name"] == "kiln"
    assert "binary_tensor_data" in meta["extensions"]

    status, meta = s.get_json("/v2/models/mlp")
    assert status == 200
    assert meta["name"] == "mlp" and meta["platform"] == "kiln"
    assert meta["versions"] == ["1", "2"]
    assert meta["parameters"]["version"] == "2"  # the newest serves by default
    assert meta["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [1, 16]}]
    assert meta["outputs"] == [{"name": "y", "datatype": "FP32", "shape": [1, 4]}]
    status, meta = s.get_json("/v2/models/mlp/versions/1")
    assert status == 200 and meta["parameters"]["version"] == "1"

    status, meta = s.get_json("/v2/models/pair")
    assert [i["name"] for i in meta["inputs"]] == ["x", "z"]
    assert [o["name"] for o in meta["outputs"]] == ["s", "p"]

    assert s.get_json("/v2/models/mlp/ready")[0] == 200
    assert s.get_json("/v2/models/mlp/versions/1/ready")[0] == 200
    status, body = s.get_json("/v2/models/nope/ready")
    assert status == 404 and "nope" in body["error"]
    status, body = s.get_json("/v2/models/mlp/versions/9")
    assert status == 404 and "version 9" in body["error"]
    status, body = s.get_json("/v2/nothing/here")
    assert status == 404 and "error" in body

    status, _, text = s.request("GET", "/metrics")
    assert status == 200
    for name in ("kiln_request_success_total", "kiln_request_failure_total",
                 "kiln_inference_count", "kiln_execution_count",
                 "kiln_queue_duration_us_total", "kiln_compute_duration_us_total",
                 "kiln_pending_requests", "kiln_batch_size_bucket"):
        assert f'{name}{{model="mlp",version="2"' in text.decode(), name
    assert s.terminate() == 0


def test_json_and_binary_infer(serve, m):
    s = serve("--model", f"mlp={m.mlp1}", "--model", f"pair={m.pair}")
    x = rows(1)
    y, head = infer_y(s, "mlp", x)
    assert head["model_name"] == "mlp" and head["model_version"] == "1"
    assert head["outputs"][0]["shape"] == [1, 4]
    np.testing.assert_allclose(y, m.mlp_ref[1](x), RTOL, ATOL)

    # Nested "data" and an "id" that comes back.
    body = {"id": "r1", "inputs": [{"name": "x", "shape": [1, 16], "datatype": "FP32",
                                    "data": x.tolist()}]}
    status, out = s.post_json("/v2/models/mlp/infer", body)
    assert status == 200 and out["id"] == "r1"
    np.testing.assert_allclose(np.array(out["outputs"][0]["data"]).reshape(1, 4),
                               m.mlp_ref[1](x), RTOL, ATOL)

    # Binary in, binary out.
    body, headers = binary_infer_request({"x": x}, binary_outputs=True)
    status, rh, data = s.request("POST", "/v2/models/mlp/infer", body, headers)
    assert status == 200
    assert "inference-header-content-length" in rh
    out, head = decode_response(rh, data)
    assert head["outputs"][0]["parameters"]["binary_data_size"] == 16
    np.testing.assert_allclose(out["y"], m.mlp_ref[1](x), RTOL, ATOL)

    # Binary in, JSON out.
    body, headers = binary_infer_request({"x": x}, binary_outputs=False)
    status, rh, data = s.request("POST", "/v2/models/mlp/infer", body, headers)
    assert status == 200 and "inference-header-content-length" not in rh
    np.testing.assert_allclose(decode_response(rh, data)[0]["y"], m.mlp_ref[1](x),
                               RTOL, ATOL)

    # Two inputs; outputs chosen and ordered by the request, one binary.
    a = np.arange(4, dtype=np.float32).reshape(1, 4)
    b = np.full((1, 4), 3, np.float32)
    body = json_infer_body({"x": a, "z": b})
    body["outputs"] = [{"name": "p"},
                       {"name": "s", "parameters": {"binary_data_output": True}}]
    status, rh, data = s.request("POST", "/v2/models/pair/infer", json.dumps(body).encode())
    assert status == 200
    out, head = decode_response(rh, data)
    assert [o["name"] for o in head["outputs"]] == ["p", "s"]
    np.testing.assert_array_equal(out["p"], a * b)
    np.testing.assert_array_equal(out["s"], a + b)
    body = json_infer_body({"x": a, "z": b}, outputs=["s"])
    status, out = s.post_json("/v2/models/pair/infer", body)
    assert status == 200 and [o["name"] for o in out["outputs"]] == ["s"]

    # Several rows on a one-variant model: run as several batches of one.
    before = s.metrics()
    x5 = rows(5, seed=3)
    y5, head = infer_y(s, "mlp", x5)
    assert head["outputs"][0]["shape"] == [5, 4]
    np.testing.assert_allclose(y5, m.mlp_ref[1](x5), RTOL, ATOL)
    after = s.metrics()
    assert counter(after, "kiln_inference_count", "mlp", 1) - \
        counter(before, "kiln_inference_count", "mlp", 1) == 5
    assert counter(after, "kiln_execution_count", "mlp", 1) - \
        counter(before, "kiln_execution_count", "mlp", 1) == 5
    assert s.terminate() == 0


# ---------------------------------------------------------------- errors


def test_bad_requests(serve, m):
    s = serve("--model", f"mlp={m.mlp1}", "--max-body-bytes", "4096")
    x = rows(1)

    def expect(status, path, body, needle, headers=None):
        if isinstance(body, dict):
            body = json.dumps(body).encode()
        got, _, data = s.request("POST", path, body, headers)
        assert got == status, data
        err = json.loads(data)["error"]
        assert needle in err, err

    good = json_infer_body({"x": x})
    expect(404, "/v2/models/nope/infer", good, "unknown model 'nope'")
    expect(404, "/v2/models/mlp/versions/7/infer", good, "no version 7")
    bad = json_infer_body({"x": x})
    bad["inputs"][0]["name"] = "q"
    expect(400, "/v2/models/mlp/infer", bad, "has no input 'q'")
    bad = json_infer_body({"x": x})
    bad["inputs"][0]["datatype"] = "INT64"
    expect(400, "/v2/models/mlp/infer", bad, "datatype INT64")
    bad = json_infer_body({"x": x})
    bad["inputs"][0]["shape"] = [1, 15]
    expect(400, "/v2/models/mlp/infer", bad, "has shape [1,15]")
    bad = json_infer_body({"x": x})
    bad["inputs"][0]["shape"] = [2, 16]
    expect(400, "/v2/models/mlp/infer", bad, "holds 16 elements")
    bad = json_infer_body({"x": x})
    del bad["inputs"][0]["data"]
    expect(400, "/v2/models/mlp/infer", bad, "has no 'data'")
    bad = json_infer_body({"x": x})
    bad["inputs"][0]["data"][3] = "three"
    expect(400, "/v2/models/mlp/infer", bad, "is not a number")
    expect(400, "/v2/models/mlp/infer", {"inputs": []}, "input 'x' of model 'mlp'")
    expect(400, "/v2/models/mlp/infer", {"outputs": []}, "no 'inputs'")
    expect(400, "/v2/models/mlp/infer", b'{"inputs": [', "malformed JSON")
    expect(400, "/v2/models/mlp/infer", b"[1, 2]", "JSON object")
    bad = json_infer_body({"x": x}, outputs=["zz"])
    expect(400, "/v2/models/mlp/infer", bad, "has no output 'zz'")
    # Binary extension: wrong sizes and a bad header length.
    body, headers = binary_infer_request({"x": x})
    expect(400, "/v2/models/mlp/infer", body[:-4], "binary bytes", headers)
    expect(400, "/v2/models/mlp/infer", body + b"junk", "bytes after", headers)
    expect(400, "/v2/models/mlp/infer", body, "Inference-Header-Content-Length",
           dict(headers, **{"Inference-Header-Content-Length": "99999"}))
    # Over --max-body-bytes.
    expect(413, "/v2/models/mlp/infer", b"{" + b" " * 5000 + b"}", "--max-body-bytes")
    # Hostile JSON: invalid UTF-8 (in a name echoed back), deep nesting,
    # ragged rows; each a 400 with a JSON body, and the server lives on.
    expect(400, "/v2/models/mlp/infer", b'{"inputs": [{"name": "\xff\xfe"}]}', "")
    deep = {"inputs": [{"name": "x", "shape": [1, 16], "datatype": "FP32", "data": None}]}
    text = json.dumps(deep).replace("null", "[" * 1000 + "1" + "]" * 1000)
    expect(400, "/v2/models/mlp/infer", text.encode(), "nested")
    ragged = json_infer_body({"x": x})
    flat = ragged["inputs"][0]["data"]
    ragged["inputs"][0]["data"] = [flat[:7], flat[7:]]
    expect(400, "/v2/models/mlp/infer", ragged, "nested unlike its shape")

    metrics = s.metrics()
    assert counter(metrics, "kiln_request_failure_total", "mlp", 1) >= 17
    assert counter(metrics, "kiln_request_success_total", "mlp", 1) == 0
    # Still serving after all that.
    np.testing.assert_allclose(infer_y(s, "mlp", x)[0], m.mlp_ref[1](x), RTOL, ATOL)
    assert s.terminate() == 0


def raw_exchange(server, data, timeout=10):
    """Sends raw bytes, returns (status, seconds until the reply)."""
    import socket
    import time
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as sock:
        sock.sendall(data)
        reply = sock.recv(65536)
    return int(reply.split(b" ", 2)[1]), time.monotonic() - start


def test_bad_headers_are_answered_at_once(serve, m):
    """A Content-Length that is no byte count or over --max-body-bytes, and too
    many header fields, are answered before any body arrives."""
    s = serve("--model", f"mlp={m.mlp1}", "--max-body-bytes", "4096")
    head = b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\n"
    for length, status in ((b"1000000000000", 413), (b"-1", 400),
                           (b"18446744073709551621", 400), (b"12a", 400)):
        got, seconds = raw_exchange(s, head + b"Content-Length: " + length + b"\r\n\r\n")
        assert (got, seconds < 2) == (status, True), (length, got, seconds)
    many = b"".join(b"X-H%d: v\r\n" % i for i in range(150))
    got, _ = raw_exchange(s, head + many + b"Content-Length: 2\r\n\r\n{}")
    assert got == 431
    x = rows(1)
    np.testing.assert_allclose(infer_y(s, "mlp", x)[0], m.mlp_ref[1](x), RTOL, ATOL)
    assert s.terminate() == 0


def test_slow_clients_do_not_starve_the_server(serve, m):
    """100 clients trickling request heads a byte at a time (each byte well
    inside --read-timeout) hold no thread a normal request needs, and each is
    dropped once --request-timeout has passed without a whole request."""
    import socket
    s = serve("--model", f"mlp={m.mlp1}", "--read-timeout", "5", "--request-timeout", "3")
    # A request head that never ends: one header value growing by a byte.
    head = b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nX-Pad: "
    slow = [socket.create_connection(("127.0.0.1", s.port)) for _ in range(100)]
    for sock in slow:
        sock.setblocking(False)
    start = time.monotonic()
    closed_at = [None] * len(slow)
    sent = [0] * len(slow)

    def trickle(i):
        sock = slow[i]
        try:
            if sock.recv(4096) == b"":
                closed_at[i] = time.monotonic() - start
                return
        except BlockingIOError:
            pass
        except OSError:
            closed_at[i] = time.monotonic() - start
            return
        try:
            sock.send(head[sent[i]:sent[i] + 1] or b"a")
            sent[i] += 1
        except OSError:
            closed_at[i] = time.monotonic() - start

    x = rows(1)
    latencies = []
    while time.monotonic() - start < 7 and None in closed_at:
        for i in range(len(slow)):
            if closed_at[i] is None:
                trickle(i)
        if time.monotonic() - start > 1 and len(latencies) < 3:
            t = time.monotonic()
            np.testing.assert_allclose(infer_y(s, "mlp", x)[0], m.mlp_ref[1](x), RTOL, ATOL)
            latencies.append(time.monotonic() - t)
        time.sleep(0.1)
    for sock in slow:
        sock.close()
    assert len(latencies) == 3 and max(latencies) < 1.0, latencies
    # Dropped at the deadline (3 s), enforced within a quarter of it.
    assert all(c is not None and 2.5 < c < 5 for c in closed_at), [
        (i, c) for i, c in enumerate(closed_at) if c is None or not 2.5 < c < 5]
    assert s.terminate() == 0


def slow_request(n):
    """A binary request of n rows for the slow model: n runs of 20 ms or more."""
    return binary_infer_request({"x": np.zeros((n, 32, 96, 96), np.float32)})


def wait_for(server, predicate, what, timeout=30):
    deadline = time.time() + timeout
    while not predicate(server.metrics()):
        assert time.time() < deadline, what
        time.sleep(0.002)


def test_overload_gets_503(serve, m):
    # One slot and room for one queued slice. A 20-row request is admitted to
    # the empty queue and keeps 19 slices queued for ~400 ms; a request in
    # that window is refused with 503, one after it is served.
    s = serve("--model", f"slow={m.slow}", "--threads", "1", "--max-queue", "1")
    body, headers = slow_request(20)
    result = {}
    t = threading.Thread(target=lambda: result.update(
        status=s.request("POST", "/v2/models/slow/infer", body, headers)[0]))
    t.start()
    wait_for(s, lambda x: counter(x, "kiln_pending_requests", "slow", 1) >= 1,
             "the long request never queued")
    small, small_headers = slow_request(1)
    status, _, data = s.request("POST", "/v2/models/slow/infer", small, small_headers)
    assert status == 503, data
    assert "overloaded" in json.loads(data)["error"]
    t.join(60)
    assert result["status"] == 200
    assert s.request("POST", "/v2/models/slow/infer", small, small_headers)[0] == 200
    metrics = s.metrics()
    assert counter(metrics, "kiln_request_failure_total", "slow", 1) == 1
    assert s.terminate() == 0


# ---------------------------------------------------------------- versions


def test_versions_and_repository(serve, m):
    s = serve("--repository", m.repo, "--model", f"mlp={m.repo}/mlp/1/model.so@1")
    x = rows(1, seed=5)
    ref1, ref2 = m.mlp_ref[1](x), m.mlp_ref[2](x)

    status, index = s.post_json("/v2/repository/index")
    assert status == 200
    states = {(r["name"], r["version"]): r["state"] for r in index}
    assert states == {("mlp", "1"): "READY", ("mlp", "2"): "UNAVAILABLE"}

    # Load the newest version from the repository: it serves by default.
    status, out = s.post_json("/v2/repository/models/mlp/load")
    assert status == 200 and out["version"] == "2", out
    np.testing.assert_allclose(infer_y(s, "mlp", x)[0], ref2, RTOL, ATOL)
    np.testing.assert_allclose(infer_y(s, "mlp", x, version=1)[0], ref1, RTOL, ATOL)
    assert s.get_json("/v2/models/mlp")[1]["versions"] == ["1", "2"]

    # Failed loads leave version 2 serving.
    failures = [({"parameters": {"path": f"{m.files}/nope.so", "version": "3"}},
                 "cannot load"),
                ({"parameters": {"path": f"{m.files}/not-a-model.so", "version": "3"}},
                 "cannot load"),
                ({"parameters": {"path": "/usr/lib/x86_64-linux-gnu/libm.so.6",
                                 "version": "3"}}, "outside the repository"),
                ({"parameters": {"path": f"{m.files}/../../mlp1.so",
                                 "version": "3"}}, "outside the repository"),
                ({"parameters": {"version": "9"}}, "")]
    if m.needs_missing:
        failures.append(({"parameters": {"path": f"{m.files}/needs-missing.so",
                                         "version": "3"}},
                         "cannot run on this CPU"))
    for body, needle in failures:
        status, out = s.post_json("/v2/repository/models/mlp/load", body)
        assert 400 <= status < 500 and needle in out["error"], out
        np.testing.assert_allclose(infer_y(s, "mlp", x)[0], ref2, RTOL, ATOL)
    status, index = s.post_json("/v2/repository/index")
    bad = [r for r in index if r["version"] == "3"]
    assert bad and bad[0]["state"] == "UNAVAILABLE" and bad[0]["reason"]

    # Rollback: unload version 2 and version 1 serves again.
    status, _ = s.post_json("/v2/repository/models/mlp/unload",
                            {"parameters": {"version": "2"}})
    assert status == 200
    y, head = infer_y(s, "mlp", x)
    assert head["model_version"] == "1"
    np.testing.assert_allclose(y, ref1, RTOL, ATOL)
    assert infer(s, "mlp", x, version=2)[0] == 404

    # A path load without a version takes the next number.
    status, out = s.post_json("/v2/repository/models/mlp/load",
                              {"parameters": {"path": f"{m.files}/mlp3.so"}})
    assert status == 200 and out["version"] == "2"
    np.testing.assert_allclose(infer_y(s, "mlp", x)[0], m.mlp_ref[3](x), RTOL, ATOL)

    # Unloading every version removes the model.
    assert s.post_json("/v2/repository/models/mlp/unload")[0] == 200
    assert infer(s, "mlp", x)[0] == 404
    assert s.post_json("/v2/repository/models/mlp/unload")[0] == 404
    assert s.terminate() == 0


def test_repository_api_token_and_links(serve, m, tmp_path):
    """With --api-token the repository API needs the bearer token; a link in
    the repository that leads out of it is not followed."""
    repo = tmp_path / "repo"
    (repo / "mlp" / "1").mkdir(parents=True)
    os.symlink(m.mlp1, repo / "mlp" / "1" / "model.so")
    s = serve("--repository", str(repo), "--api-token", "s3cret")
    status, out = s.post_json("/v2/repository/index")
    assert status == 401 and "--api-token" in out["error"], out
    status, out, _ = s.request("POST", "/v2/repository/models/mlp/load", b"",
                               {"Authorization": "Bearer wrong"})
    assert status == 401
    status, _, data = s.request("POST", "/v2/repository/models/mlp/load", b"",
                                {"Authorization": "Bearer s3cret"})
    assert status == 403 and b"outside the repository" in data, data
    assert s.terminate() == 0


def test_hot_swap_under_load(serve, m):
    s = serve("--repository", m.repo, "--model", f"mlp={m.mlp1}@1")
    x = rows(1, seed=9)
    refs = {str(v): m.mlp_ref[v](x) for v in (1, 2, 3)}
    stop = threading.Event()
    seen, failures, count = set(), [], [0]
    lock = threading.Lock()

    def client():
        conn = s.connection()
        deadline = time.time() + 60
        while not stop.is_set() and time.time() < deadline:
            try:
                status, headers, body = infer(s, "mlp", x, conn=conn)
                if status != 200:
                    raise RuntimeError(f"{status} {body[:200]!r}")
                out, head = decode_response(headers, body)
                np.testing.assert_allclose(out["y"], refs[head["model_version"]], RTOL, ATOL)
                with lock:
                    seen.add(head["model_version"])
                    count[0] += 1
            except Exception as e:  # noqa: BLE001 - every failure counts
                with lock:
                    failures.append(repr(e))
                conn.close()
                conn = s.connection()
        conn.close()

    threads = [threading.Thread(target=client) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        time.sleep(0.3)
        for new, old, path in ((2, 1, f"{m.files}/mlp2.so"),
                               (3, 2, f"{m.files}/mlp3.so")):
            status, out = s.post_json("/v2/repository/models/mlp/load",
                                      {"parameters": {"path": path, "version": str(new)}})
            assert status == 200, out
            time.sleep(0.3)
            status, out = s.post_json("/v2/repository/models/mlp/unload",
                                      {"parameters": {"version": str(old)}})
            assert status == 200, out
            time.sleep(0.3)
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    assert failures == []
    assert count[0] > 20
    assert {"1", "2", "3"} <= seen or {"1", "3"} <= seen, seen
    assert s.get_json("/v2/models/mlp")[1]["versions"] == ["3"]
    assert s.terminate() == 0


# ---------------------------------------------------------------- shutdown


def test_sigterm_drains(serve, m):
    # A 20-row request (~400 ms) runs on the one slot and a 2-row request
    # waits behind it; SIGTERM must let both finish, then exit 0.
    s = serve("--model", f"slow={m.slow}", "--threads", "1")
    results = {}

    def client(n):
        body, headers = slow_request(n)
        status, rh, data = s.request("POST", "/v2/models/slow/infer", body, headers)
        results[n] = (status, decode_response(rh, data)[0]["y"].shape
                      if status == 200 else data)

    long = threading.Thread(target=client, args=(20,))
    long.start()
    wait_for(s, lambda x: counter(x, "kiln_pending_requests", "slow", 1) >= 1,
             "the long request never started")
    short = threading.Thread(target=client, args=(2,))
    short.start()
    # Both jobs have rows queued only while the long one is still running.
    wait_for(s, lambda x: counter(x, "kiln_pending_requests", "slow", 1) >= 2,
             "the short request never queued")
    s.proc.send_signal(15)
    for t in (long, short):
        t.join(60)
    assert s.proc.wait(60) == 0
    assert results == {20: (200, (20, 32)), 2: (200, (2, 32))}
    with pytest.raises(OSError):
        s.request("GET", "/v2/health/live")


# ---------------------------------------------------------------- batching


def concurrent(n, fn):
    """Runs fn(i) for i < n on n threads released together; returns results."""
    results, failures = [None] * n, []
    barrier = threading.Barrier(n)

    def run(i):
        try:
            barrier.wait(10)
            results[i] = fn(i)
        except Exception as e:  # noqa: BLE001
            failures.append(repr(e))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert failures == []
    return results


def test_dynamic_batching(serve, fake_batched):
    s = serve("--model", f"fb={fake_batched}", "--max-queue-delay-us", "20000",
              "--threads", "1")
    status, meta = s.get_json("/v2/models/fb")
    assert meta["inputs"][0]["shape"] == [-1, 4]
    assert meta["parameters"]["batch_sizes"] == [1, 4, 8]

    def fb(x):
        status, headers, body = s.request("POST", "/v2/models/fb/infer", json.dumps(
            json_infer_body({"x": x})).encode())
        assert status == 200, body
        return decode_response(headers, body)[0]["y"]

    n = 16
    xs = [np.random.default_rng(i).standard_normal((1, 4)).astype(np.float32)
          for i in range(n)]
    ys = concurrent(n, lambda i: fb(xs[i]))
    for x, y in zip(xs, ys):
        np.testing.assert_array_equal(y, 2 * x + 1)
    metrics = s.metrics()
    rows_done = counter(metrics, "kiln_inference_count", "fb", 1)
    batches = counter(metrics, "kiln_execution_count", "fb", 1)
    assert rows_done == n
    assert batches < rows_done, (batches, rows_done)
    assert counter(metrics, "kiln_batch_size_sum", "fb", 1) == n
    assert counter(metrics, "kiln_batch_size_count", "fb", 1) == batches
    assert counter(metrics, "kiln_queue_duration_us_total", "fb", 1) > 0

    # 3 rows pad to the 4-row variant; 20 rows split into 8 + 8 + 4.
    before = s.metrics()
    x3 = np.arange(12, dtype=np.float32).reshape(3, 4)
    x20 = np.arange(80, dtype=np.float32).reshape(20, 4)
    np.testing.assert_array_equal(fb(x3), 2 * x3 + 1)
    np.testing.assert_array_equal(fb(x20), 2 * x20 + 1)
    after = s.metrics()

    def delta(name):
        return counter(after, name, "fb", 1) - counter(before, name, "fb", 1)

    assert delta("kiln_inference_count") == 23
    assert delta("kiln_execution_count") == 4
    assert delta("kiln_padded_rows_total") == 1
    assert s.terminate() == 0


def test_batcher_stress(serve, fake_batched):
    # Two slots, a short queue delay and requests of 1 to 12 rows (so some are
    # split, most are packed with others): every row must come back to its
    # own request, unchanged by whatever it shared a batch with.
    s = serve("--model", f"fb={fake_batched}", "--threads", "2",
              "--max-queue-delay-us", "300")
    clients, per_client = 8, 40

    def client(i):
        rng = np.random.default_rng(i)
        conn = s.connection()
        for _ in range(per_client):
            x = rng.standard_normal((int(rng.integers(1, 13)), 4)).astype(np.float32)
            body, headers = binary_infer_request({"x": x})
            status, rh, data = s.request("POST", "/v2/models/fb/infer", body, headers,
                                         conn=conn)
            assert status == 200, data
            np.testing.assert_array_equal(decode_response(rh, data)[0]["y"], 2 * x + 1)
        conn.close()
        return per_client

    assert sum(concurrent(clients, client)) == clients * per_client
    metrics = s.metrics()
    assert counter(metrics, "kiln_request_success_total", "fb", 1) == clients * per_client
    assert counter(metrics, "kiln_pending_requests", "fb", 1) == 0
    assert s.terminate() == 0


def test_no_delay_runs_what_is_queued(serve, fake_batched):
    # Without a queue delay a lone request runs at once, in the 1-row variant.
    s = serve("--model", f"fb={fake_batched}")
    conn = s.connection()
    x = np.ones((1, 4), np.float32)
    for _ in range(10):
        status, headers, body = s.request("POST", "/v2/models/fb/infer", json.dumps(
            json_infer_body({"x": x})).encode(), conn=conn)
        assert status == 200
    conn.close()
    metrics = s.metrics()
    assert counter(metrics, "kiln_execution_count", "fb", 1) == 10
    assert counter(metrics, "kiln_padded_rows_total", "fb", 1) == 0
    assert s.terminate() == 0


def test_slo_mode_lowers_the_batch_cap(serve, fake_batched):
    x = np.ones((1, 4), np.float32)
    body = json.dumps(json_infer_body({"x": x})).encode()

    def drive(s, n):
        conn = s.connection()
        for _ in range(n):
            assert s.request("POST", "/v2/models/fb/infer", body, conn=conn)[0] == 200
        conn.close()

    # A target no request can meet: AIMD backs the cap off to one row.
    s = serve("--model", f"fb={fake_batched}", "--slo-p99-ms", "0.000001")
    assert counter(s.metrics(), "kiln_batch_cap", "fb", 1) == 8
    drive(s, 200)
    assert counter(s.metrics(), "kiln_batch_cap", "fb", 1) == 1
    assert s.terminate() == 0

    # A generous target keeps the largest variant.
    s = serve("--model", f"fb={fake_batched}", "--slo-p99-ms", "10000")
    drive(s, 64)
    assert counter(s.metrics(), "kiln_batch_cap", "fb", 1) == 8
    assert s.terminate() == 0


def test_slo_mode_lowers_the_cap_of_a_packing_model(serve, tmp_path):
    # A model at run-time sizes whose batch is proven independent packs
    # requests up to the symbol's bound; the SLO controller lowers that cap
    # as it does a batch-variant model's.
    from conftest import compile_model
    from models import save_seq_pool
    save_seq_pool(str(tmp_path / "seq.onnx"))
    so = compile_model(str(tmp_path / "seq.onnx"), str(tmp_path / "seq.so"),
                       "--dim", "b=1..6", "--dim", "s=1..32")
    s = serve("--model", f"seq={so}", "--slo-p99-ms", "0.000001")
    assert counter(s.metrics(), "kiln_batch_cap", "seq", 1) == 6
    body = json.dumps(json_infer_body({"x": np.ones((1, 5, 8), np.float32)})).encode()
    conn = s.connection()
    for _ in range(200):
        assert s.request("POST", "/v2/models/seq/infer", body, conn=conn)[0] == 200
    conn.close()
    assert counter(s.metrics(), "kiln_batch_cap", "seq", 1) == 1
    assert s.terminate() == 0


def test_compiled_batch_variants(serve, m, mlp_batched):
    # The same checks on a model kiln-compile built with --batch-sizes 1,4,8.
    s = serve("--model", f"mlp={mlp_batched}", "--max-queue-delay-us", "20000",
              "--threads", "1")
    status, meta = s.get_json("/v2/models/mlp")
    assert meta["inputs"][0]["shape"] == [-1, 16]
    assert meta["parameters"]["batch_sizes"] == [1, 4, 8]
    n = 16
    xs = [rows(1, seed=100 + i) for i in range(n)]
    ys = concurrent(n, lambda i: infer_y(s, "mlp", xs[i])[0])
    for x, y in zip(xs, ys):
        np.testing.assert_allclose(y, m.mlp_ref[1](x), RTOL, ATOL)
    metrics = s.metrics()
    assert counter(metrics, "kiln_execution_count", "mlp", 1) < \
        counter(metrics, "kiln_inference_count", "mlp", 1) == n
    for k in (3, 20):
        x = rows(k, seed=k)
        np.testing.assert_allclose(infer_y(s, "mlp", x)[0], m.mlp_ref[1](x), RTOL, ATOL)
    assert s.terminate() == 0


def test_symbolic_batch_packs_without_padding(serve, m, tmp_path):
    # docs/shapes.md: an .so compiled with --dim N=1..32 runs any number of
    # rows up to 32 in one call, so the batcher packs requests and never pads.
    import onnx
    from conftest import compile_model
    model = onnx.load(f"{m.dir}/mlp1.onnx")
    for v in list(model.graph.input) + list(model.graph.output):
        d = v.type.tensor_type.shape.dim[0]
        d.ClearField("dim_value")
        d.dim_param = "N"
    del model.graph.value_info[:]
    onnx.save(model, str(tmp_path / "mlp_sym.onnx"))
    so = compile_model(str(tmp_path / "mlp_sym.onnx"), str(tmp_path / "mlp_sym.so"),
                       "--dim", "N=1..32")
    s = serve("--model", f"mlp={so}", "--max-queue-delay-us", "20000", "--threads", "1")
    status, meta = s.get_json("/v2/models/mlp")
    assert meta["inputs"][0]["shape"] == [-1, 16]
    assert meta["parameters"]["max_batch"] == 32
    n = 12
    xs = [rows(1, seed=200 + i) for i in range(n)]
    ys = concurrent(n, lambda i: infer_y(s, "mlp", xs[i])[0])
    for x, y in zip(xs, ys):
        np.testing.assert_allclose(y, m.mlp_ref[1](x), RTOL, ATOL)
    for k in (3, 29, 40):  # 40 rows run as 32 + 8
        x = rows(k, seed=k)
        np.testing.assert_allclose(infer_y(s, "mlp", x)[0], m.mlp_ref[1](x), RTOL, ATOL)
    metrics = s.metrics()
    assert counter(metrics, "kiln_execution_count", "mlp", 1) < \
        counter(metrics, "kiln_inference_count", "mlp", 1)
    assert counter(metrics, "kiln_padded_rows_total", "mlp", 1) == 0
    assert s.terminate() == 0


def check_concurrent_outputs(s, model, xs, ref):
    """Sends every x in `xs` at once; each response's y and z must have the
    shapes and values of ref(x) = (y, z)."""
    def call(i):
        status, headers, body = infer(s, model, xs[i])
        assert status == 200, body
        return decode_response(headers, body)[0]

    for x, out in zip(xs, concurrent(len(xs), call)):
        for name, want in zip(("y", "z"), ref(x)):
            assert out[name].shape == want.shape, (name, out[name].shape, want.shape)
            np.testing.assert_allclose(out[name], want, RTOL, ATOL)


def test_run_time_sizes_run_each_request_at_its_shape(serve, tmp_path):
    # docs/shapes.md: a model whose height and width run at run-time sizes
    # serves any shape in range, each request alone; every output has the
    # shape the run wrote (z keeps the symbols, y's are computed from them).
    from conftest import compile_model
    from models import pool_relu_ref, save_pool_relu
    save_pool_relu(str(tmp_path / "images.onnx"))
    so = compile_model(str(tmp_path / "images.onnx"), str(tmp_path / "images.so"),
                       "--dim", "h=2..64", "--dim", "w=2..64")
    s = serve("--model", f"img={so}", "--threads", "2")
    status, meta = s.get_json("/v2/models/img")
    assert status == 200, meta
    assert meta["inputs"][0]["shape"] == [1, 4, -1, -1]
    assert meta["outputs"][0]["shape"] == [1, 4, -1, -1]
    assert meta["parameters"]["symbols"] == [{"name": "h", "min": 2, "max": 64},
                                             {"name": "w", "min": 2, "max": 64}]

    shapes = [(1, 4, 9, 33), (1, 4, 64, 2), (1, 4, 2, 2), (1, 4, 17, 40)]
    xs = [np.random.default_rng(i).standard_normal(sh).astype(np.float32)
          for i, sh in enumerate(shapes)]

    check_concurrent_outputs(s, "img", xs, pool_relu_ref)
    # The binary extension returns the written bytes only.
    body, headers = binary_infer_request({"x": xs[0]})
    status, rh, data = s.request("POST", "/v2/models/img/infer", body, headers)
    assert status == 200, data
    out, _ = decode_response(rh, data)
    np.testing.assert_allclose(out["y"], pool_relu_ref(xs[0])[0], RTOL, ATOL)

    for bad, words in [((1, 4, 65, 8), "outside the range 2..64"),
                       ((1, 4, 1, 8), "outside the range 2..64"),
                       ((1, 3, 8, 8), "expects [1,4,-1,-1]"),
                       ((2, 4, 8, 8), "expects [1,4,-1,-1]")]:
        status, _, body = infer(s, "img", np.zeros(bad, np.float32))
        assert status == 400 and words in json.loads(body)["error"], body
    assert s.terminate() == 0


def test_outputs_sized_by_the_data(serve, tmp_path):
    # docs/shapes.md: a static model whose output length depends on the data
    # (a boolean mask select) answers each request with the length its run
    # wrote, none included, over JSON and the binary extension.
    from conftest import compile_model
    from models import masked_select_ref, save_masked_select
    save_masked_select(str(tmp_path / "mask.onnx"))
    so = compile_model(str(tmp_path / "mask.onnx"), str(tmp_path / "mask.so"))
    s = serve("--model", f"mask={so}", "--threads", "2")
    status, meta = s.get_json("/v2/models/mask")
    assert status == 200, meta
    assert meta["outputs"][0]["shape"] == [-1]
    rng = np.random.default_rng(40)
    xs = [rng.standard_normal((4, 6)).astype(np.float32) + shift
          for shift in (0.0, -3.0, 3.0, 0.5)]
    assert len(masked_select_ref(xs[1])[0]) == 0 and len(masked_select_ref(xs[2])[0]) == 24
    for x in xs:
        y, _ = infer_y(s, "mask", x)
        want = masked_select_ref(x)[0]
        assert y.shape == want.shape, (y.shape, want.shape)
        np.testing.assert_allclose(y, want, RTOL, ATOL)
    check_concurrent_outputs(s, "mask", xs, masked_select_ref)
    body, headers = binary_infer_request({"x": xs[3]})
    status, rh, data = s.request("POST", "/v2/models/mask/infer", body, headers)
    assert status == 200, data
    out, _ = decode_response(rh, data)
    np.testing.assert_allclose(out["y"], masked_select_ref(xs[3])[0], RTOL, ATOL)
    # A request of another shape is refused by the input check, not run.
    status, _, body = infer(s, "mask", np.zeros((4, 5), np.float32))
    assert status == 400 and "expects [4,6]" in json.loads(body)["error"], body
    assert s.terminate() == 0


def test_run_time_sizes_pack_requests_along_an_independent_batch(serve, tmp_path):
    # docs/serving.md: with a batch and a length at run-time sizes, the
    # compiler proves the batch independent, and the batcher concatenates
    # requests of one length along it (up to its bound), never ones of
    # different lengths: the softmax and mean run over the length.
    from conftest import compile_model
    from models import save_seq_pool, seq_pool_ref
    save_seq_pool(str(tmp_path / "seq.onnx"))
    so = compile_model(str(tmp_path / "seq.onnx"), str(tmp_path / "seq.so"),
                       "--dim", "b=1..6", "--dim", "s=1..32")
    s = serve("--model", f"seq={so}", "--max-queue-delay-us", "50000",
              "--threads", "1")
    status, meta = s.get_json("/v2/models/seq")
    assert status == 200, meta
    assert meta["inputs"][0]["shape"] == [-1, -1, 8]
    assert meta["parameters"]["batched"] is True
    assert meta["parameters"]["max_batch"] == 6
    # Lengths 5 and 9, batches 1..3: 5 + 5 rows cannot run as one batch of 6.
    shapes = [(1, 5), (2, 9), (3, 5), (1, 9), (2, 5), (1, 5), (3, 9), (5, 5)]
    xs = [np.random.default_rng(30 + i).standard_normal((b, t, 8)).astype(np.float32)
          for i, (b, t) in enumerate(shapes)]

    check_concurrent_outputs(s, "seq", xs, seq_pool_ref)
    metrics = s.metrics()
    runs = counter(metrics, "kiln_execution_count", "seq", 1)
    assert counter(metrics, "kiln_inference_count", "seq", 1) == sum(b for b, _ in shapes)
    assert runs < len(shapes), runs
    assert counter(metrics, "kiln_padded_rows_total", "seq", 1) == 0
    status, _, body = infer(s, "seq", np.zeros((7, 5, 8), np.float32))
    assert status == 400 and "outside the range 1..6" in json.loads(body)["error"], body
    assert s.terminate() == 0


def test_run_time_sizes_refuse_disagreeing_inputs(serve, tmp_path):
    # Inputs that share a symbol must give it one size: the request is a 400
    # naming both inputs, never a run at mismatched sizes.
    from conftest import compile_model
    from models import save_shared_sum
    save_shared_sum(str(tmp_path / "shared.onnx"))
    so = compile_model(str(tmp_path / "shared.onnx"), str(tmp_path / "shared.so"),
                       "--dim", "n=1..8")
    s = serve("--model", f"shared={so}")
    x, z = np.ones((1, 3), np.float32), np.full((1, 3), 2, np.float32)
    status, headers, body = s.request("POST", "/v2/models/shared/infer", json.dumps(
        json_infer_body({"x": x, "z": z})).encode(), {"Content-Type": "application/json"})
    assert status == 200, body
    np.testing.assert_array_equal(decode_response(headers, body)[0]["s"], x + z)
    status, _, body = s.request("POST", "/v2/models/shared/infer", json.dumps(
        json_infer_body({"x": x, "z": np.ones((1, 4), np.float32)})).encode(),
        {"Content-Type": "application/json"})
    error = json.loads(body)["error"]
    assert status == 400 and "input 'x' has 3 for it" in error, body
    assert s.terminate() == 0


def test_http_fuzz_keeps_the_server_up(serve, m):
    # A bounded run of fuzz_http.py (docs/security.md has the long one):
    # mutated and hostile requests, the server answering /v2/health/live
    # after each.
    from fuzz_http import fuzz
    s = serve("--model", f"mlp={m.mlp1}", "--read-timeout", "1", "--threads", "2")
    failures = fuzz("127.0.0.1", s.port, "mlp", iterations=150, seed=20261128, timeout=20)
    assert failures == [], failures[:5]
    assert s.terminate() == 0
