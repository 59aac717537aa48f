"""kiln-serve as a Kubernetes pod: liveness and readiness probes, the drain
on SIGTERM (over HTTP and gRPC), configuration from KILN_SERVE_* variables,
and structured (JSON) logs."""
import json
import re
import signal
import socket
import threading
import time

import numpy as np
import pytest

from serve_client import binary_infer_request, decode_response

RFC3339_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def pending(server, model="slow", version="1"):
    return server.metrics().get(("kiln_pending_requests", model, version), 0.0)


def wait_until(predicate, what, timeout=30):
    deadline = time.time() + timeout
    while not predicate():
        assert time.time() < deadline, what
        time.sleep(0.005)


def slow_input(n):
    """n rows for the slow model: n runs of 20 ms or more each (one batch variant)."""
    return np.zeros((n, 32, 96, 96), np.float32)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_readiness_needs_a_loaded_model(serve, m):
    s = serve("--repository", m.repo)
    assert s.get_json("/v2/health/live") == (200, {"live": True})
    assert s.get_json("/v2/health/ready") == (503, {"ready": False})
    assert s.post_json("/v2/repository/models/mlp/load")[0] == 200
    assert s.get_json("/v2/health/ready") == (200, {"ready": True})
    assert s.post_json("/v2/repository/models/mlp/unload")[0] == 200
    assert s.get_json("/v2/health/ready") == (503, {"ready": False})
    assert s.get_json("/v2/health/live") == (200, {"live": True})
    assert s.terminate() == 0


def test_sigterm_drains_grpc(serve, m, pb):
    from grpc_client import GrpcClient
    s = serve("--grpc-port", "0", "--model", f"slow={m.slow}", "--threads", "1")
    c = GrpcClient(pb, s.grpc_port)
    assert c.call("ServerReady").ready is True
    result = {}

    def long_request():
        try:
            out, _ = c.infer("slow", {"x": slow_input(30)})
            result["y"] = out["y"].shape
        except Exception as e:  # noqa: BLE001 - reported by the assert below
            result["error"] = e

    t = threading.Thread(target=long_request)
    t.start()
    wait_until(lambda: pending(s) >= 1, "the long request never started")
    s.proc.send_signal(signal.SIGTERM)

    def not_ready():
        # False while draining, or refused once gRPC has shut down (the HTTP
        # readiness rule itself is tested above, the gRPC one with the
        # repository calls).
        try:
            return c.call("ServerReady", timeout=5).ready is False
        except c.grpc.RpcError:
            return True

    wait_until(not_ready, "readiness stayed true after SIGTERM", timeout=10)
    t.join(120)
    assert result == {"y": (30, 32)}
    assert s.proc.wait(60) == 0
    # The drain began with the long request in flight, and it still finished.
    assert re.search(r"^kiln-serve: draining signal=Terminated in_flight=[1-9]",
                     s.log_text(), re.M), s.log_text()
    with pytest.raises(OSError):
        s.request("GET", "/v2/health/live")
    c.close()


def test_drain_deadline_exits_nonzero(serve, m):
    # Four requests of 50 rows on one slot: seconds of work, and one second
    # to drain them.
    s = serve("--model", f"slow={m.slow}", "--threads", "1", "--drain-timeout", "1")
    statuses = []

    def client():
        body, headers = binary_infer_request({"x": slow_input(50)})
        try:
            statuses.append(s.request("POST", "/v2/models/slow/infer", body, headers)[0])
        except OSError:
            statuses.append("cut")

    threads = [threading.Thread(target=client) for _ in range(4)]
    for t in threads:
        t.start()
    wait_until(lambda: pending(s) >= 4, "the requests never queued")
    start = time.time()
    s.proc.send_signal(signal.SIGTERM)
    assert s.proc.wait(30) == 3
    assert time.time() - start < 1 + 5
    for t in threads:
        t.join(30)
    assert "cut" in statuses, statuses
    assert "drain deadline passed with requests still running" in s.log_text()


def test_environment_configures_every_flag(serve, m):
    env = {"KILN_SERVE_MODEL": f"mlp={m.mlp1},pair={m.pair}",
           "KILN_SERVE_REPOSITORY": m.repo,
           "KILN_SERVE_GRPC_PORT": "0",
           "KILN_SERVE_API_TOKEN": "envtok",
           "KILN_SERVE_MAX_BODY_BYTES": "2000",
           "KILN_SERVE_LOG_FORMAT": "json",
           "KILN_SERVE_PORT": "1"}  # the --port 0 on the command line wins
    s = serve(env=env, grpc=True)
    assert s.port != 1 and s.grpc_port
    assert s.get_json("/v2/models/mlp")[0] == 200
    assert s.get_json("/v2/models/pair")[0] == 200
    assert s.post_json("/v2/repository/index")[0] == 401
    status, _, body = s.request("POST", "/v2/repository/index", b"",
                                {"Authorization": "Bearer envtok"})
    assert status == 200
    assert {(e["name"], e["version"]) for e in json.loads(body)} >= {("mlp", "1"), ("mlp", "2")}
    status, _, _ = s.request("POST", "/v2/models/mlp/infer", b" " * 3000,
                             {"Content-Type": "application/json"})
    assert status == 413
    assert s.terminate() == 0
    first = s.log_text().splitlines()[0]
    assert json.loads(first)["msg"] == "loaded model"

    # KILN_SERVE_PORT alone picks the port; --log-format on the command line
    # beats KILN_SERVE_LOG_FORMAT.
    port = free_port()
    s = serve("--model", f"mlp={m.mlp1}", "--log-format", "text",
              env={"KILN_SERVE_PORT": str(port), "KILN_SERVE_LOG_FORMAT": "json"},
              port_args=())
    assert s.port == port
    assert s.get_json("/v2/health/ready") == (200, {"ready": True})
    assert s.terminate() == 0
    assert s.log_text().startswith("kiln-serve: loaded model model=mlp version=1")

    # A bad value in the environment is an error, as on the command line.
    with pytest.raises(RuntimeError):
        serve("--model", f"mlp={m.mlp1}", env={"KILN_SERVE_MAX_QUEUE": "lots"})


def test_json_logs(serve, m):
    s = serve("--model", f"mlp={m.mlp1}", "--repository", m.repo, "--log-format", "json")
    assert s.post_json("/v2/repository/models/mlp/load", {"parameters": {"version": 2}})[0] == 200
    assert s.post_json("/v2/repository/models/mlp/unload", {"parameters": {"version": 2}})[0] == 200
    bad = {"parameters": {"path": f"{m.files}/not-a-model.so"}}
    assert s.post_json("/v2/repository/models/bad/load", bad)[0] >= 400
    assert s.terminate() == 0

    lines = [json.loads(line) for line in s.log_text().splitlines()]  # each parses
    for line in lines:
        assert RFC3339_UTC.match(line["ts"]), line
        assert line["level"] in ("info", "warning", "error"), line
        assert isinstance(line["msg"], str) and line["msg"], line
    loads = [line for line in lines if line["msg"] == "loaded model"]
    assert [(line["model"], line["version"]) for line in loads] == [("mlp", 1), ("mlp", 2)]
    for line in loads:
        assert isinstance(line["load_ms"], (int, float)) and line["load_ms"] > 0, line
        assert line["path"].endswith(".so") and line["batch_sizes"] == [1]
    assert any(line["msg"] == "unloaded model" and line["version"] == 2 for line in lines)
    failed = [line for line in lines if line["msg"] == "model load failed"]
    assert len(failed) == 1 and failed[0]["level"] == "error" and failed[0]["model"] == "bad"
    assert [line["msg"] for line in lines[-2:]] == ["draining", "stopped"]


def test_text_logs_carry_the_load_time(serve, m):
    s = serve("--model", f"mlp={m.mlp1}")
    assert s.terminate() == 0
    text = s.log_text()
    assert re.search(r"^kiln-serve: loaded model model=mlp version=1 path=\S+ "
                     r"load_ms=\d+(\.\d+)?", text, re.M), text
    assert "kiln-serve: draining" in text and "kiln-serve: stopped" in text
