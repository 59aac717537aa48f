"""A torch.jit.script LSTMCell loop, the way scripted recurrent layers are
written: torch exports it as an ONNX Loop over x.size(0) whose body holds an
LSTM node on the cell's weights, with the per-step outputs appended to a
list (a loop-carried sequence) and stacked after the loop. Shared by
check_runtime_loop.py and check_symbolic_recurrent.py."""
import torch


class ScriptedLSTM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = torch.nn.LSTMCell(16, 32)
        self.out = torch.nn.Linear(32, 5)

    def forward(self, x):
        h = torch.zeros(x.size(1), 32)
        c = torch.zeros(x.size(1), 32)
        outs = []
        for t in range(x.size(0)):
            h, c = self.cell(x[t], (h, c))
            outs.append(self.out(h))
        return torch.stack(outs), h
