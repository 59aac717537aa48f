#!/usr/bin/python3
"""Exports real arena traces: compiles models with kiln-compile
--emit=memory-plan and writes the buffers the arena pass planned to
test/plan/traces/model_<name>.json, in kiln-plan's input format.

    /usr/bin/python3 test/plan/export_model_traces.py \\
        [--kiln-compile build/bin/kiln-compile] [--out test/plan/traces] \\
        [--torch NAME ...] [MODEL.onnx ...]

With no --torch and no MODEL, it exports the built-in torch models below
(random weights from a fixed seed; only the shapes matter) and the
end-to-end test models (test/e2e/make_models.py). A model the compiler
rejects is skipped with its error. Needs Debian's /usr/bin/python3 (torch,
onnx).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def torch_models():
    import torch
    import torch.nn as nn

    def conv_bn(cin, cout, k, s=1, groups=1, act=True):
        layers = [nn.Conv2d(cin, cout, k, s, k // 2, groups=groups,
                            bias=False), nn.BatchNorm2d(cout)]
        if act:
            layers.append(nn.ReLU6() if act == "relu6" else nn.ReLU())
        return nn.Sequential(*layers)

    class Basic(nn.Module):
        def __init__(self, cin, cout, s):
            super().__init__()
            self.a = conv_bn(cin, cout, 3, s)
            self.b = conv_bn(cout, cout, 3, 1, act=False)
            self.down = None if s == 1 and cin == cout else \
                conv_bn(cin, cout, 1, s, act=False)

        def forward(self, x):
            y = self.b(self.a(x))
            return torch.relu(y + (x if self.down is None else self.down(x)))

    class ResNet18(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(conv_bn(3, 64, 7, 2),
                                      nn.MaxPool2d(3, 2, 1))
            blocks, cin = [], 64
            for cout, s in [(64, 1), (128, 2), (256, 2), (512, 2)]:
                blocks += [Basic(cin, cout, s), Basic(cout, cout, 1)]
                cin = cout
            self.blocks = nn.Sequential(*blocks)
            self.fc = nn.Linear(512, 1000)

        def forward(self, x):
            x = self.blocks(self.stem(x))
            return self.fc(torch.flatten(x.mean((2, 3), keepdim=True), 1))

    class Inverted(nn.Module):
        def __init__(self, cin, cout, s, t):
            super().__init__()
            mid = cin * t
            layers = [] if t == 1 else [conv_bn(cin, mid, 1, act="relu6")]
            layers += [conv_bn(mid, mid, 3, s, groups=mid, act="relu6"),
                       conv_bn(mid, cout, 1, act=False)]
            self.body = nn.Sequential(*layers)
            self.res = s == 1 and cin == cout

        def forward(self, x):
            y = self.body(x)
            return x + y if self.res else y

    class MobileNetV2(nn.Module):
        def __init__(self):
            super().__init__()
            layers, cin = [conv_bn(3, 32, 3, 2, act="relu6")], 32
            for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2),
                               (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                               (6, 320, 1, 1)]:
                for i in range(n):
                    layers.append(Inverted(cin, c, s if i == 0 else 1, t))
                    cin = c
            layers.append(conv_bn(cin, 1280, 1, act="relu6"))
            self.features = nn.Sequential(*layers)
            self.fc = nn.Linear(1280, 1000)

        def forward(self, x):
            x = self.features(x).mean((2, 3))
            return self.fc(x)

    class Fire(nn.Module):
        def __init__(self, cin, sq, ex):
            super().__init__()
            self.sq = nn.Conv2d(cin, sq, 1)
            self.e1 = nn.Conv2d(sq, ex, 1)
            self.e3 = nn.Conv2d(sq, ex, 3, padding=1)

        def forward(self, x):
            s = torch.relu(self.sq(x))
            return torch.cat([torch.relu(self.e1(s)), torch.relu(self.e3(s))],
                             1)

    class SqueezeNet11(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 64, 3, 2), nn.ReLU(), nn.MaxPool2d(3, 2),
                Fire(64, 16, 64), Fire(128, 16, 64), nn.MaxPool2d(3, 2),
                Fire(128, 32, 128), Fire(256, 32, 128), nn.MaxPool2d(3, 2),
                Fire(256, 48, 192), Fire(384, 48, 192), Fire(384, 64, 256),
                Fire(512, 64, 256))
            self.head = nn.Conv2d(512, 1000, 1)

        def forward(self, x):
            x = torch.relu(self.head(self.features(x)))
            return x.mean((2, 3))

    class Encoder(nn.Module):
        """Two pre-norm encoder layers written out op by op."""

        def __init__(self, d=128, heads=4, layers=2):
            super().__init__()
            self.heads = heads
            self.ln1 = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))
            self.q = nn.ModuleList(nn.Linear(d, d) for _ in range(layers))
            self.k = nn.ModuleList(nn.Linear(d, d) for _ in range(layers))
            self.v = nn.ModuleList(nn.Linear(d, d) for _ in range(layers))
            self.out = nn.ModuleList(nn.Linear(d, d) for _ in range(layers))
            self.ln2 = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))
            self.fc1 = nn.ModuleList(nn.Linear(d, 4 * d) for _ in range(layers))
            self.fc2 = nn.ModuleList(nn.Linear(4 * d, d) for _ in range(layers))

        def forward(self, x):
            b, s, d = x.shape
            h = self.heads
            for i in range(len(self.q)):
                a = self.ln1[i](x)
                q, k, v = self.q[i](a), self.k[i](a), self.v[i](a)
                q = q.reshape(b, s, h, d // h).transpose(1, 2)
                k = k.reshape(b, s, h, d // h).transpose(1, 2)
                v = v.reshape(b, s, h, d // h).transpose(1, 2)
                p = torch.softmax(q @ k.transpose(2, 3) / (d // h) ** 0.5, -1)
                c = (p @ v).transpose(1, 2).reshape(b, s, d)
                x = x + self.out[i](c)
                x = x + self.fc2[i](torch.relu(self.fc1[i](self.ln2[i](x))))
            return x

    return {
        "resnet18_r64": (ResNet18, (1, 3, 64, 64)),
        "resnet18_r224": (ResNet18, (1, 3, 224, 224)),
        "mobilenetv2_r64": (MobileNetV2, (1, 3, 64, 64)),
        "mobilenetv2_r224": (MobileNetV2, (1, 3, 224, 224)),
        "squeezenet1_1_r64": (SqueezeNet11, (1, 3, 64, 64)),
        "encoder_l2_s64_d128": (Encoder, (1, 64, 128)),
    }


def export_torch(name, tmp):
    import torch
    cls, shape = torch_models()[name]
    torch.manual_seed(0)
    model = cls().eval()
    path = os.path.join(tmp, name + ".onnx")
    torch.onnx.export(model, torch.randn(*shape), path, opset_version=13,
                      input_names=["x"], output_names=["y"])
    return path


def e2e_models(tmp):
    out = os.path.join(tmp, "e2e")
    subprocess.run([sys.executable, os.path.join(ROOT, "test", "e2e",
                                                 "make_models.py"), out],
                   check=True, stdout=subprocess.DEVNULL)
    return {f"e2e_{m}": os.path.join(out, m, "model.onnx")
            for m in sorted(os.listdir(out))}


def export(kiln_compile, name, onnx_path, out_dir, tmp):
    plan_path = os.path.join(tmp, name + ".memory-plan.json")
    p = subprocess.run([kiln_compile, onnx_path, "--emit=memory-plan", "-o",
                        plan_path], capture_output=True, text=True)
    if p.returncode != 0:
        print(f"skipped {name}: {p.stderr.strip().splitlines()[0]}")
        return
    with open(plan_path) as f:
        plan = json.load(f)
    keep = ("id", "size", "first", "last")
    lines = ",\n".join("  " + json.dumps({k: b[k] for k in keep},
                                         separators=(", ", ": "))
                       for b in plan["buffers"])
    dest = os.path.join(out_dir, f"model_{name}.json")
    with open(dest, "w") as f:
        f.write(f'{{"alignment": {plan["alignment"]}, "source": '
                f'"kiln-compile --emit=memory-plan {name}", "buffers": '
                f'[\n{lines}\n]}}\n')
    print(f"wrote {dest}: {len(plan['buffers'])} buffers, arena "
          f"{plan['arena_bytes']}, lower bound {plan['lower_bound_bytes']}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln-compile",
                    default=os.path.join(ROOT, "build", "bin", "kiln-compile"))
    ap.add_argument("--out", default=os.path.join(HERE, "traces"))
    ap.add_argument("--torch", nargs="*", default=None)
    ap.add_argument("models", nargs="*")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        jobs = {}
        for path in args.models:
            jobs[os.path.splitext(os.path.basename(path))[0]] = path
        names = args.torch
        if names is None and not args.models:
            names = list(torch_models())
            jobs.update(e2e_models(tmp))
        for name in names or []:
            jobs[name] = export_torch(name, tmp)
        for name, path in jobs.items():
            export(args.kiln_compile, name, path, args.out, tmp)


if __name__ == "__main__":
    main()
