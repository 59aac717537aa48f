#!/usr/bin/python3
"""Checks deploy/ (container image, Kubernetes manifests, KServe runtime)
against what kiln-serve really does (docs/deploy.md).

Every YAML document is validated against a hand-written schema for its kind
(schemas.py); then the rules that span fields and files:
- a probe points at /v2/health/live (liveness, startup) or /v2/health/ready
  (readiness), on the port kiln-serve listens on for HTTP;
- kiln-serve listens on 0.0.0.0 (its default, 127.0.0.1, is unreachable from
  outside the container) and every containerPort is its HTTP or gRPC port;
- a Service's ports reach those containerPorts, by name or number;
- Prometheus annotations name /metrics on the HTTP port;
- env names are KILN_SERVE_<FLAG> of a real flag and args are real flags
  (parsed from add_option("--...") in tools/kiln-serve/kiln-serve.cpp, plus
  the flags being added: --grpc-port, --drain-timeout, --log-format);
- CPU requests equal --threads x --session-threads;
- terminationGracePeriodSeconds exceeds the preStop sleep plus the drain
  timeout (default 30 s);
- the kustomization lists files that exist, and every manifest beside it;
- the Containerfile installs the .deb, runs as a non-root user, exposes the
  ports its env configures and has kiln-serve as ENTRYPOINT.
With kubectl on PATH, `kubectl kustomize` (offline) renders the overlay and
the rendered objects are checked again; without it that step is skipped.

usage: check_manifests.py REPO_ROOT              check deploy/
       check_manifests.py --self-test REPO_ROOT  break copies of the good
           manifests one way at a time and require each to be rejected
Prints every problem and exits 1 if there is any.
"""
import copy
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

import jsonschema
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import schemas  # noqa: E402

LIVE, READY, METRICS = "/v2/health/live", "/v2/health/ready", "/metrics"
# Flags that the gRPC / operations work is adding to kiln-serve; the
# manifests are written against them already.
PENDING_FLAGS = {"grpc-port", "drain-timeout", "log-format"}
DEFAULT_DRAIN_TIMEOUT = 30
ANY_HOST = {"0.0.0.0", "::", "[::]"}


# ---------------------------------------------------------------- kiln-serve

def serve_flags(root):
    """{flag name without --: takes a value} from kiln-serve.cpp."""
    src = open(os.path.join(root, "tools/kiln-serve/kiln-serve.cpp")).read()
    flags = {}
    for kind, names in re.findall(r'add_(option|flag)\(\s*"([^"]+)"', src):
        for name in names.split(","):
            if name.startswith("--"):
                flags[name[2:]] = kind == "option"
    for f in PENDING_FLAGS:
        flags.setdefault(f, True)
    return flags


def env_name(flag):
    return "KILN_SERVE_" + flag.upper().replace("-", "_")


def check_routes(root, problems):
    """The routes the probes and scrapers use must exist in HttpServer.cpp,
    which splits a path into segments: "/v2/health/live" -> v2 health live."""
    src = open(os.path.join(root, "tools/kiln-serve/HttpServer.cpp")).read()
    for route in (LIVE, READY, METRICS):
        for segment in route.strip("/").split("/"):
            if f'"{segment}"' not in src and f'"/{segment}"' not in src:
                problems.append(f"HttpServer.cpp: no route segment '{segment}' of {route}; "
                                "the probes or the scrape config point at nothing")


# --------------------------------------------------------------- Containerfile

def containerfile_instructions(text):
    """[(stage index, INSTRUCTION, argument string)], continuations joined."""
    lines, cur = [], ""
    for raw in text.splitlines():
        s = raw.strip()
        if not cur and (not s or s.startswith("#")):
            continue
        if s.startswith("#"):
            continue
        if s.endswith("\\"):
            cur += s[:-1] + " "
            continue
        lines.append(cur + s)
        cur = ""
    out, stage = [], -1
    for line in lines:
        op, _, arg = line.partition(" ")
        op = op.upper()
        if op == "FROM":
            stage += 1
        out.append((stage, op, arg.strip()))
    return out


def parse_env(arg):
    """ENV K=V K2="V 2" (the legacy `ENV K V` form too)."""
    words = shlex.split(arg)
    if words and "=" not in words[0]:
        return {words[0]: " ".join(words[1:])}
    return dict(w.split("=", 1) for w in words)


def check_containerfile(text, flags, problems, where="deploy/container/Containerfile"):
    """Returns the env of the first (serve) stage: the defaults every
    container of the image starts with."""
    ins = containerfile_instructions(text)
    serve = [(op, arg) for stage, op, arg in ins if stage == 0]
    if not serve or serve[0][0] != "FROM" or not serve[0][1].startswith("debian:12-slim"):
        problems.append(f"{where}: the first stage must be FROM debian:12-slim")
    env = {}
    for stage, op, arg in ins:
        if op == "ENV":
            for k in parse_env(arg):
                if k.startswith("KILN_SERVE_") and k not in {env_name(f) for f in flags}:
                    problems.append(f"{where}: ENV {k} is not a kiln-serve flag")
            if stage == 0:
                env.update(parse_env(arg))
        if op == "HEALTHCHECK":
            problems.append(f"{where}: HEALTHCHECK in the image; Kubernetes probes do that")
    copies = [arg for op, arg in serve if op == "COPY" and "kiln_*.deb" in arg]
    installs = [arg for op, arg in serve if op == "RUN"
                and re.search(r"apt-get install\b[^&;]*\s\./kiln_\*\.deb", arg)]
    if not copies or not installs:
        problems.append(f"{where}: the serve stage must COPY kiln_*.deb and "
                        "`apt-get install -y ./kiln_*.deb`")
    entry = [arg for op, arg in serve if op == "ENTRYPOINT"]
    try:
        argv = json.loads(entry[-1]) if entry else None
    except json.JSONDecodeError:
        argv = None  # shell form: signals would go to /bin/sh, not kiln-serve
    if not argv or os.path.basename(argv[0]) != "kiln-serve":
        problems.append(f"{where}: ENTRYPOINT must be the exec form [\"/usr/bin/kiln-serve\"]")
    users = [arg for op, arg in serve if op == "USER"]
    if not users or users[-1].split(":")[0] in ("0", "root"):
        problems.append(f"{where}: the serve stage must end as a non-root USER")
    exposed = {int(p.split("/")[0]) for op, arg in serve if op == "EXPOSE" for p in arg.split()}
    for var in ("KILN_SERVE_PORT", "KILN_SERVE_GRPC_PORT"):
        if var not in env or not env[var].isdigit() or int(env[var]) not in exposed:
            problems.append(f"{where}: {var}={env.get(var)} is not an EXPOSEd port {sorted(exposed)}")
    if env.get("KILN_SERVE_HOST") not in ANY_HOST:
        problems.append(f"{where}: KILN_SERVE_HOST must be 0.0.0.0; kiln-serve's default "
                        "127.0.0.1 cannot be reached from outside the container")
    for stage, op, arg in ins:
        if op == "RUN" and "kiln-compile" in arg and "--mcpu" not in arg:
            problems.append(f"{where}: kiln-compile without --mcpu builds for the build "
                            "machine's CPU, not the nodes'")
    return env


# ------------------------------------------------------------------ containers

def quantity_cpu(q):
    s = str(q)
    return float(s[:-1]) / 1000 if s.endswith("m") else float(s)


def parse_args(args, flags, where, problems):
    """kiln-serve argv -> {flag: value}; every word must be a real flag or
    the value of the flag before it (kiln-serve takes no positionals)."""
    out, i = {}, 0
    while i < len(args):
        a = args[i]
        if not a.startswith("--"):
            problems.append(f"{where}: argument '{a}' is not a kiln-serve flag")
            i += 1
            continue
        name, eq, value = a[2:].partition("=")
        if name not in flags:
            problems.append(f"{where}: --{name} is not a kiln-serve flag")
        elif flags[name] and not eq:
            if i + 1 >= len(args):
                problems.append(f"{where}: --{name} needs a value")
            else:
                value = args[i + 1]
                i += 1
        out.setdefault(name, []).append(value)
        i += 1
    return out


def serve_config(c, image_env, flags, where, problems):
    """The effective settings of one kiln-serve container: the image's ENV,
    then the container's env, then its args (CLI11: a flag beats its env)."""
    valid_env = {env_name(f): f for f in flags}
    conf = {valid_env[k]: v for k, v in image_env.items() if k in valid_env}
    for e in c.get("env", []):
        if e["name"] not in valid_env:
            problems.append(f"{where}: env {e['name']} is not KILN_SERVE_<FLAG> of a "
                            "kiln-serve flag")
        elif "value" in e:
            conf[valid_env[e["name"]]] = e["value"]
    for flag, values in parse_args(c.get("args", []), flags, where, problems).items():
        conf[flag] = values[-1]
    conf["_models"] = [v for v in parse_args(c.get("args", []), flags, where, []).get("model", [])]
    return conf


def port_of(ref, ports):
    """A probe's or Service's port (name or number) -> containerPort."""
    if isinstance(ref, int):
        return ref if ref in ports.values() else None
    return ports.get(ref)


def check_serve_container(c, conf, where, problems, need_grpc_declared):
    ports = {p.get("name", str(p["containerPort"])): p["containerPort"] for p in c["ports"]}
    http = int(conf.get("port", 8000))
    grpc = int(conf["grpc-port"]) if conf.get("grpc-port") else None
    if conf.get("host", "127.0.0.1") not in ANY_HOST:
        problems.append(f"{where}: kiln-serve listens on {conf.get('host', '127.0.0.1')}; "
                        "probes and Services reach only 0.0.0.0")
    if http not in ports.values():
        problems.append(f"{where}: kiln-serve's HTTP port {http} is not a containerPort "
                        f"{sorted(ports.values())}")
    if need_grpc_declared and grpc is not None and grpc not in ports.values():
        problems.append(f"{where}: kiln-serve's gRPC port {grpc} is not a containerPort")
    for name, num in ports.items():
        if num not in (http, grpc):
            problems.append(f"{where}: containerPort {name}={num} is neither the HTTP "
                            f"({http}) nor the gRPC ({grpc}) port of kiln-serve")
        if name == "http" and num != http or name == "grpc" and num != grpc:
            problems.append(f"{where}: containerPort '{name}' is {num} but kiln-serve "
                            f"listens for {name} on {http if name == 'http' else grpc}")
    for probe, route in (("livenessProbe", LIVE), ("startupProbe", LIVE),
                         ("readinessProbe", READY)):
        if probe not in c:
            continue
        get = c[probe]["httpGet"]
        if get["path"] != route:
            problems.append(f"{where}: {probe} asks {get['path']}; kiln-serve answers {route}")
        if port_of(get["port"], ports) != http:
            problems.append(f"{where}: {probe} port {get['port']} is not kiln-serve's HTTP "
                            f"port {http}")
    threads = conf.get("threads")
    cpu = c["resources"]["requests"]["cpu"]
    if threads is None:
        problems.append(f"{where}: set --threads (KILN_SERVE_THREADS); its default follows "
                        "the node's cores, not the CPU request")
    elif quantity_cpu(cpu) != int(threads) * int(conf.get("session-threads", 1)):
        problems.append(f"{where}: CPU request {cpu} != --threads {threads} x "
                        f"--session-threads {conf.get('session-threads', 1)}")
    return http, grpc, ports


def pod_prestop_seconds(c):
    pre = c.get("lifecycle", {}).get("preStop", {})
    if "sleep" in pre:
        return int(pre["sleep"]["seconds"])
    cmd = pre.get("exec", {}).get("command", [])
    if cmd and os.path.basename(cmd[0]) == "sleep":
        return float(cmd[1])
    return 0


# ------------------------------------------------------------------ documents

def check_schema(path, doc, problems):
    try:
        jsonschema.validate(doc, schemas.OBJECT)
    except jsonschema.ValidationError as e:
        problems.append(f"{path}: {e.message}")
        return None
    key = (doc["apiVersion"], doc["kind"])
    schema = schemas.BY_KIND.get(key)
    if schema is None:
        problems.append(f"{path}: unexpected {key[1]} of {key[0]}")
        return None
    if doc["kind"] != "Kustomization" and "name" not in doc.get("metadata", {}):
        problems.append(f"{path}: {doc['kind']} without metadata.name")
    errors = list(jsonschema.Draft7Validator(schema).iter_errors(doc))
    for e in errors:
        at = "/".join(str(p) for p in e.absolute_path)
        problems.append(f"{path}: {doc['kind']} {at}: {e.message}")
    return key if not errors else None


def check_deployment(path, d, image_env, flags, claims, problems):
    pod = d["spec"]["template"]
    spec, labels = pod["spec"], pod["metadata"]["labels"]
    sel = d["spec"]["selector"]["matchLabels"]
    if any(labels.get(k) != v for k, v in sel.items()):
        problems.append(f"{path}: selector {sel} does not match the pod labels {labels}")
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    http_ports = []
    for c in spec["containers"]:
        where = f"{path}: container {c['name']}"
        conf = serve_config(c, image_env, flags, where, problems)
        http, grpc, ports = check_serve_container(c, conf, where, problems, True)
        http_ports.append(http)
        drain = float(conf.get("drain-timeout", DEFAULT_DRAIN_TIMEOUT))
        grace = spec["terminationGracePeriodSeconds"]
        if grace <= drain + pod_prestop_seconds(c):
            problems.append(f"{path}: terminationGracePeriodSeconds {grace} <= preStop "
                            f"{pod_prestop_seconds(c)} s + drain timeout {drain} s: the "
                            "kubelet would kill kiln-serve while it drains")
        mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
        for m in mounts.values():
            if m["name"] not in volumes:
                problems.append(f"{where}: volumeMount {m['name']} has no volume")
        paths = [conf.get("repository")] + [m.split("=", 1)[-1].split("@")[0]
                                            for m in conf["_models"]]
        for p in filter(None, paths):
            if not any(p == mp or p.startswith(mp.rstrip("/") + "/") for mp in mounts):
                problems.append(f"{where}: {p} is on no mounted volume")
    for v in volumes.values():
        claim = v.get("persistentVolumeClaim", {}).get("claimName")
        if claim is not None and claim not in claims:
            problems.append(f"{path}: volume {v['name']} claims {claim}, which no manifest makes")
    ann = pod["metadata"]["annotations"]
    if ann.get("prometheus.io/scrape") != "true" or ann.get("prometheus.io/path") != METRICS \
            or not str(ann.get("prometheus.io/port", "")).isdigit() \
            or int(ann["prometheus.io/port"]) not in http_ports:
        problems.append(f"{path}: pod annotations must say prometheus.io/scrape \"true\", "
                        f"path {METRICS}, port {http_ports}; they say "
                        f"{ {k: v for k, v in ann.items() if k.startswith('prometheus.io/')} }")
    return labels, {p.get("name"): p["containerPort"] for c in spec["containers"]
                    for p in c["ports"]}


def check_service(path, s, pods, problems):
    sel = s["spec"]["selector"]
    matched = [ports for labels, ports in pods
               if all(labels.get(k) == v for k, v in sel.items())]
    if not matched:
        problems.append(f"{path}: selector {sel} matches no Deployment's pods")
        return
    ports = matched[0]
    for p in s["spec"]["ports"]:
        target = port_of(p["targetPort"], ports)
        if target is None:
            problems.append(f"{path}: port {p['name']} targets {p['targetPort']}, "
                            f"not a containerPort {ports}")
        elif p["name"] in ports and ports[p["name"]] != target:
            problems.append(f"{path}: port {p['name']} reaches containerPort {target}, "
                            f"but the container's '{p['name']}' is {ports[p['name']]}")
        want = {"http": {"http"}, "grpc": {"grpc", "kubernetes.io/h2c"}}.get(p["name"])
        if want and p["appProtocol"] not in want:
            problems.append(f"{path}: port {p['name']} has appProtocol {p['appProtocol']}, "
                            f"expected one of {sorted(want)}")


def check_hpa(path, h, deployments, problems):
    ref = h["spec"]["scaleTargetRef"]
    d = deployments.get(ref["name"])
    if ref["kind"] != "Deployment" or d is None:
        problems.append(f"{path}: scaleTargetRef {ref['kind']}/{ref['name']} is not a "
                        "Deployment here")
    if h["spec"]["minReplicas"] > h["spec"]["maxReplicas"]:
        problems.append(f"{path}: minReplicas > maxReplicas")
    for m in h["spec"]["metrics"]:
        if m.get("type") == "Resource" and m["resource"]["name"] == "cpu" and d is not None:
            for c in d["spec"]["template"]["spec"]["containers"]:
                if "cpu" not in c.get("resources", {}).get("requests", {}):
                    problems.append(f"{path}: CPU utilisation of {c['name']}, which "
                                    "requests no CPU, is undefined")


def check_kserve(path, kind, doc, image_env, flags, runtimes, problems):
    spec = doc["spec"]
    if kind == "ServingRuntime":
        if "kiln" not in [f["name"] for f in spec["supportedModelFormats"]]:
            problems.append(f"{path}: no supportedModelFormats entry named kiln")
        for want in ("v2", "grpc-v2"):
            if want not in spec["protocolVersions"]:
                problems.append(f"{path}: protocolVersions lacks {want}")
        for c in spec["containers"]:
            where = f"{path}: container {c['name']}"
            if c["name"] != "kserve-container":
                problems.append(f"{where}: KServe merges the InferenceService into the "
                                "container named kserve-container")
            conf = serve_config(c, image_env, flags, where, problems)
            http, _, _ = check_serve_container(c, conf, where, problems, False)
            if conf.get("repository") != "/mnt/models":
                problems.append(f"{where}: --repository must be /mnt/models, where KServe "
                                "puts the storageUri")
            ann = spec.get("annotations", {})
            if ann.get("prometheus.kserve.io/path") != METRICS or \
                    ann.get("prometheus.kserve.io/port") != str(http):
                problems.append(f"{path}: prometheus.kserve.io/port and /path must be "
                                f"{http} and {METRICS}")
    else:
        model = spec["predictor"]["model"]
        if model["modelFormat"]["name"] != "kiln":
            problems.append(f"{path}: modelFormat {model['modelFormat']['name']} is not kiln")
        rt = runtimes.get(model.get("runtime"))
        if model.get("runtime") and rt is None:
            problems.append(f"{path}: runtime {model['runtime']} is not a ServingRuntime here")
        if rt and model.get("protocolVersion", "v1") not in rt["spec"]["protocolVersions"]:
            problems.append(f"{path}: protocolVersion {model.get('protocolVersion', 'v1')} "
                            "is not one the runtime speaks")


def check_docs(docs, image_env, flags, problems):
    """docs: [(label, doc)] of one deployment unit (a folder, or a render)."""
    typed = []
    for path, doc in docs:
        key = check_schema(path, doc, problems)
        if key:
            typed.append((path, key[1], doc))
    by = lambda k: [(p, d) for p, kind, d in typed if kind == k]  # noqa: E731
    claims = {d["metadata"]["name"] for _, d in by("PersistentVolumeClaim")}
    deployments = {d["metadata"]["name"]: d for _, d in by("Deployment")}
    runtimes = {d["metadata"]["name"]: d for _, d in by("ServingRuntime")}
    pods = [check_deployment(p, d, image_env, flags, claims, problems)
            for p, d in by("Deployment")]
    for p, s in by("Service"):
        check_service(p, s, pods, problems)
    for p, h in by("HorizontalPodAutoscaler"):
        check_hpa(p, h, deployments, problems)
    for kind in ("ServingRuntime", "InferenceService"):
        for p, d in by(kind):
            check_kserve(p, kind, d, image_env, flags, runtimes, problems)
    return typed


def check_kustomization(folder, files, kust, problems):
    """`files`: {file name: [docs]} of the folder."""
    listed = kust.get("resources", [])
    for r in listed:
        if r not in files:
            problems.append(f"{folder}/kustomization.yaml: resource {r} does not exist")
    for f in files:
        if f != "kustomization.yaml" and f not in listed:
            problems.append(f"{folder}/kustomization.yaml: {f} is not listed in resources")
    images = {c["image"].split(":")[0] for docs in files.values() for d in docs
              if isinstance(d, dict) and d.get("kind") == "Deployment"
              for c in d["spec"]["template"]["spec"]["containers"]}
    for i in kust.get("images", []):
        if i["name"] not in images:
            problems.append(f"{folder}/kustomization.yaml: image {i['name']} is used by no "
                            "container, so the rewrite does nothing")


# ----------------------------------------------------------------- the bundle

FOLDERS = ("deploy/kubernetes", "deploy/kserve")


def load_bundle(root):
    """{"Containerfile": text, folder: {file: [docs]}}"""
    bundle = {"Containerfile": open(os.path.join(root, "deploy/container/Containerfile")).read()}
    for folder in FOLDERS:
        files = {}
        for f in sorted(os.listdir(os.path.join(root, folder))):
            if f.endswith((".yaml", ".yml")):
                with open(os.path.join(root, folder, f)) as fh:
                    files[f] = [d for d in yaml.safe_load_all(fh) if d is not None]
        bundle[folder] = files
    return bundle


def check_bundle(root, bundle):
    problems = []
    flags = serve_flags(root)
    check_routes(root, problems)
    image_env = check_containerfile(bundle["Containerfile"], flags, problems)
    for folder in FOLDERS:
        files = bundle[folder]
        if not files:
            problems.append(f"{folder}: no manifests")
        docs = [(f"{folder}/{f}", d) for f, ds in files.items() for d in ds
                if not (isinstance(d, dict) and d.get("kind") == "Kustomization")]
        check_docs(docs, image_env, flags, problems)
        kust = [d for ds in files.values() for d in ds
                if isinstance(d, dict) and d.get("kind") == "Kustomization"]
        for k in kust:
            if check_schema(f"{folder}/kustomization.yaml", k, problems):
                check_kustomization(folder, files, k, problems)
    return problems


def check_rendered(root, problems):
    """kubectl kustomize (offline) and the same checks on its output. Returns
    a note saying what happened; not having kubectl is not a failure."""
    kubectl = shutil.which("kubectl")
    if not kubectl:
        return "kubectl not on PATH: the kustomize render was not checked"
    try:
        r = subprocess.run([kubectl, "kustomize", os.path.join(root, "deploy/kubernetes")],
                           capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"kubectl kustomize did not run ({e}); render not checked"
    if r.returncode != 0:
        if "unknown command" in r.stderr:
            return "this kubectl has no kustomize; render not checked"
        problems.append(f"kubectl kustomize deploy/kubernetes failed: {r.stderr.strip()}")
        return "kubectl kustomize failed"
    docs = [("rendered " + d.get("kind", "?"), d) for d in yaml.safe_load_all(r.stdout) if d]
    flags = serve_flags(root)
    image_env = check_containerfile(open(os.path.join(
        root, "deploy/container/Containerfile")).read(), flags, [])
    check_docs(docs, image_env, flags, problems)
    return f"kubectl kustomize rendered {len(docs)} objects and they were checked too"


# ------------------------------------------------------------------ self-test

def _container(b):
    return b["deploy/kubernetes"]["deployment.yaml"][0]["spec"]["template"]["spec"]["containers"][0]


def _env(b, name, value):
    for e in _container(b)["env"]:
        if e["name"] == name:
            e["value"] = value


def _runtime(b):
    return b["deploy/kserve"]["servingruntime.yaml"][0]["spec"]["containers"][0]


# (what is broken, how, a phrase the problem must contain)
BREAKAGES = [
    ("readiness probe path", lambda b: _container(b)["readinessProbe"]["httpGet"].update(
        path="/healthz"), "readinessProbe asks /healthz"),
    ("liveness probe on the gRPC port", lambda b: _container(b)["livenessProbe"]["httpGet"]
        .update(port="grpc"), "livenessProbe port grpc"),
    ("misspelt env name", lambda b: _container(b)["env"][1].update(name="KILN_SERVE_PROT"),
        "KILN_SERVE_PROT is not"),
    ("misspelt flag", lambda b: _container(b)["args"].append("--modle=x=/models/x/1/model.so"),
        "--modle is not a kiln-serve flag"),
    ("HTTP port moved without its containerPort", lambda b: _env(b, "KILN_SERVE_PORT", "8000"),
        "HTTP port 8000 is not a containerPort"),
    ("listening on loopback", lambda b: _env(b, "KILN_SERVE_HOST", "127.0.0.1"),
        "listens on 127.0.0.1"),
    ("Service gRPC port to nowhere", lambda b: b["deploy/kubernetes"]["service.yaml"][0]
        ["spec"]["ports"][1].update(targetPort=9000), "targets 9000"),
    ("scrape path", lambda b: b["deploy/kubernetes"]["deployment.yaml"][0]["spec"]["template"]
        ["metadata"]["annotations"].update({"prometheus.io/path": "/stats"}), "prometheus.io"),
    ("grace period shorter than the drain", lambda b: b["deploy/kubernetes"]["deployment.yaml"]
        [0]["spec"]["template"]["spec"].update(terminationGracePeriodSeconds=30),
        "terminationGracePeriodSeconds 30"),
    ("CPU request unlike the threads", lambda b: _container(b)["resources"]["requests"]
        .update(cpu="4"), "CPU request 4"),
    ("kustomization names a missing file", lambda b: b["deploy/kubernetes"]
        ["kustomization.yaml"][0]["resources"].append("ingress.yaml"), "ingress.yaml does not"),
    ("wrong apiVersion", lambda b: b["deploy/kubernetes"]["hpa.yaml"][0].update(
        apiVersion="autoscaling/v2beta2"), "unexpected HorizontalPodAutoscaler"),
    ("KServe repository elsewhere", lambda b: _runtime(b)["args"].__setitem__(
        3, "--repository=/models"), "--repository must be /mnt/models"),
    ("KServe model format", lambda b: b["deploy/kserve"]["inferenceservice.yaml"][0]["spec"]
        ["predictor"]["model"]["modelFormat"].update(name="onnx"), "is not kiln"),
    ("ENTRYPOINT a shell", lambda b: b.update(Containerfile=b["Containerfile"].replace(
        'ENTRYPOINT ["/usr/bin/kiln-serve"]', 'ENTRYPOINT ["/bin/sh"]')), "ENTRYPOINT"),
    ("image without the .deb", lambda b: b.update(Containerfile=b["Containerfile"].replace(
        "./kiln_*.deb \\", "kiln \\")), "apt-get install -y ./kiln_*.deb"),
]


def self_test(root):
    good = load_bundle(root)
    failures = []
    baseline = check_bundle(root, good)
    if baseline:
        failures.append("the good manifests are rejected:\n  " + "\n  ".join(baseline))
    for what, breakage, phrase in BREAKAGES:
        broken = copy.deepcopy(good)
        breakage(broken)
        if broken == good:
            failures.append(f"{what}: the breakage changed nothing (self-test out of date)")
            continue
        problems = check_bundle(root, broken)
        if not any(phrase in p for p in problems):
            failures.append(f"{what}: not rejected with '{phrase}'; problems: {problems}")
        else:
            print(f"rejected as expected: {what}")
    for f in failures:
        print(f"self-test: {f}")
    print(f"self-test: {len(BREAKAGES) - len(failures)} of {len(BREAKAGES)} breakages "
          "rejected" + ("" if not baseline else ", the good manifests failed"))
    return 1 if failures else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--self-test":
        return self_test(argv[2])
    if len(argv) != 2:
        print(__doc__)
        return 2
    root = argv[1]
    problems = check_bundle(root, load_bundle(root))
    note = check_rendered(root, problems)
    for p in problems:
        print(p)
    print(note)
    n = sum(len(ds) for f in FOLDERS for ds in load_bundle(root)[f].values())
    print(f"{n} YAML documents and the Containerfile checked: "
          f"{len(problems)} problem{'s' if len(problems) != 1 else ''}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
