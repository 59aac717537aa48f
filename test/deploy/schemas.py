"""Hand-written JSON schemas for the fields of deploy/ that kiln-serve's
behaviour depends on. They are deliberately narrow: a field that is here is
required and typed; anything else in the manifests is left to Kubernetes.
The cross-field rules (ports that must agree, flags that must exist) are in
check_manifests.py, because a schema cannot see two documents at once."""

DNS_LABEL = {"type": "string", "pattern": r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 63}
PORT = {"type": "integer", "minimum": 1, "maximum": 65535}
PORT_REF = {"anyOf": [PORT, DNS_LABEL]}
QUANTITY = {"anyOf": [{"type": "string", "pattern": r"^[0-9.]+(m|[KMGT]i?)?$"},
                      {"type": "number"}]}

META = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": DNS_LABEL,
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}

HTTP_PROBE = {
    "type": "object",
    "required": ["httpGet"],
    "properties": {
        "httpGet": {
            "type": "object",
            "required": ["path", "port"],
            "properties": {"path": {"type": "string", "pattern": "^/"}, "port": PORT_REF},
        },
        "periodSeconds": {"type": "integer", "minimum": 1},
        "failureThreshold": {"type": "integer", "minimum": 1},
        "timeoutSeconds": {"type": "integer", "minimum": 1},
    },
}

ENV_VAR = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
    # A number or boolean as `value` is rejected by the API server.
    "oneOf": [{"required": ["value"]}, {"required": ["valueFrom"]}],
}

RESOURCES = {
    "type": "object",
    "required": ["requests", "limits"],
    "properties": {
        "requests": {"type": "object", "required": ["cpu", "memory"],
                     "properties": {"cpu": QUANTITY, "memory": QUANTITY}},
        "limits": {"type": "object", "required": ["memory"],
                   "properties": {"cpu": QUANTITY, "memory": QUANTITY}},
    },
}

CONTAINER_PORT = {
    "type": "object",
    "required": ["containerPort"],
    "properties": {"name": DNS_LABEL, "containerPort": PORT,
                   "protocol": {"enum": ["TCP", "UDP", "SCTP"]}},
}


def container(probes):
    """A kiln-serve container; `probes` names the probes it must have."""
    return {
        "type": "object",
        "required": ["name", "image", "ports", "resources", "securityContext"] + probes,
        "properties": {
            "name": DNS_LABEL,
            "image": {"type": "string", "minLength": 1},
            "command": {"not": {}},  # the image's ENTRYPOINT is kiln-serve
            "args": {"type": "array", "items": {"type": "string"}},
            "env": {"type": "array", "items": ENV_VAR},
            "ports": {"type": "array", "minItems": 1, "items": CONTAINER_PORT},
            "resources": RESOURCES,
            "livenessProbe": HTTP_PROBE,
            "readinessProbe": HTTP_PROBE,
            "startupProbe": HTTP_PROBE,
            "securityContext": {
                "type": "object",
                "required": ["readOnlyRootFilesystem", "allowPrivilegeEscalation"],
                "properties": {"readOnlyRootFilesystem": {"const": True},
                               "allowPrivilegeEscalation": {"const": False},
                               "runAsUser": {"type": "integer", "minimum": 1}},
            },
        },
    }


DEPLOYMENT = {
    "type": "object",
    "required": ["spec"],
    "properties": {"spec": {
        "type": "object",
        "required": ["replicas", "selector", "template"],
        "properties": {
            "replicas": {"type": "integer", "minimum": 1},
            "selector": {"type": "object", "required": ["matchLabels"]},
            "template": {
                "type": "object",
                "required": ["metadata", "spec"],
                "properties": {
                    "metadata": {"type": "object", "required": ["labels", "annotations"]},
                    "spec": {
                        "type": "object",
                        "required": ["containers", "terminationGracePeriodSeconds",
                                     "securityContext"],
                        "properties": {
                            "terminationGracePeriodSeconds": {"type": "integer", "minimum": 1},
                            "securityContext": {
                                "type": "object", "required": ["runAsNonRoot"],
                                "properties": {"runAsNonRoot": {"const": True},
                                               "runAsUser": {"type": "integer", "minimum": 1}}},
                            "containers": {
                                "type": "array", "minItems": 1,
                                "items": container(["livenessProbe", "readinessProbe",
                                                    "startupProbe"])},
                            "volumes": {"type": "array",
                                        "items": {"type": "object", "required": ["name"]}},
                        },
                    },
                },
            },
        },
    }},
}

SERVICE = {
    "type": "object",
    "required": ["spec"],
    "properties": {"spec": {
        "type": "object",
        "required": ["selector", "ports"],
        "properties": {
            "selector": {"type": "object", "minProperties": 1},
            "ports": {"type": "array", "minItems": 1, "items": {
                "type": "object",
                "required": ["name", "port", "targetPort", "appProtocol"],
                "properties": {"name": DNS_LABEL, "port": PORT, "targetPort": PORT_REF,
                               "appProtocol": {"type": "string"}},
            }},
        },
    }},
}

HPA = {
    "type": "object",
    "required": ["spec"],
    "properties": {"spec": {
        "type": "object",
        "required": ["scaleTargetRef", "minReplicas", "maxReplicas", "metrics"],
        "properties": {
            "scaleTargetRef": {"type": "object", "required": ["apiVersion", "kind", "name"]},
            "minReplicas": {"type": "integer", "minimum": 1},
            "maxReplicas": {"type": "integer", "minimum": 1},
            "metrics": {"type": "array", "minItems": 1},
        },
    }},
}

PVC = {
    "type": "object",
    "required": ["spec"],
    "properties": {"spec": {
        "type": "object",
        "required": ["accessModes", "resources"],
        "properties": {"accessModes": {"type": "array", "minItems": 1, "items": {
            "enum": ["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"]}}},
    }},
}

SERVING_RUNTIME = {
    "type": "object",
    "required": ["spec"],
    "properties": {"spec": {
        "type": "object",
        "required": ["supportedModelFormats", "protocolVersions", "containers"],
        "properties": {
            "supportedModelFormats": {"type": "array", "minItems": 1, "items": {
                "type": "object", "required": ["name"],
                "properties": {"name": {"type": "string"}, "version": {"type": "string"},
                               "autoSelect": {"type": "boolean"}}}},
            "protocolVersions": {"type": "array", "items": {
                "enum": ["v1", "v2", "grpc-v1", "grpc-v2"]}},
            "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
            "containers": {"type": "array", "minItems": 1, "items": container([])},
        },
    }},
}

INFERENCE_SERVICE = {
    "type": "object",
    "required": ["spec"],
    "properties": {"spec": {
        "type": "object",
        "required": ["predictor"],
        "properties": {"predictor": {
            "type": "object",
            "required": ["model"],
            "properties": {"model": {
                "type": "object",
                "required": ["modelFormat", "storageUri"],
                "properties": {
                    "modelFormat": {"type": "object", "required": ["name"]},
                    "runtime": DNS_LABEL,
                    "protocolVersion": {"enum": ["v1", "v2", "grpc-v2"]},
                    "storageUri": {"type": "string", "pattern": r"^[a-z][a-z0-9+.-]*://\S+$"},
                },
            }},
        }},
    }},
}

KUSTOMIZATION = {
    "type": "object",
    "required": ["resources"],
    "properties": {
        "resources": {"type": "array", "minItems": 1, "items": {"type": "string"}},
        "images": {"type": "array", "items": {"type": "object", "required": ["name"]}},
    },
}

# (apiVersion, kind) -> schema. Anything else in deploy/ is an error: a typo
# in apiVersion (apps/v1beta1, autoscaling/v2beta2) is caught here.
BY_KIND = {
    ("apps/v1", "Deployment"): DEPLOYMENT,
    ("v1", "Service"): SERVICE,
    ("v1", "PersistentVolumeClaim"): PVC,
    ("autoscaling/v2", "HorizontalPodAutoscaler"): HPA,
    ("serving.kserve.io/v1alpha1", "ServingRuntime"): SERVING_RUNTIME,
    ("serving.kserve.io/v1beta1", "InferenceService"): INFERENCE_SERVICE,
    ("kustomize.config.k8s.io/v1beta1", "Kustomization"): KUSTOMIZATION,
}

OBJECT = {
    "type": "object",
    "required": ["apiVersion", "kind"],
    "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                   "metadata": META},
}
