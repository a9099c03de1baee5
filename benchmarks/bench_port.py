"""Port speed on a realistic notebook of mixed cells, and how it grows with size.

The generated notebook mixes model classes (``nn.Module``), scalar autograd cells
(``z.backward()``, ``torch.autograd.grad``), ``torch.no_grad()`` evaluation, full training
loops (``zero_grad``/``backward``/``step``) over a ``DataLoader``/``TensorDataset`` with
``StepLR``/``CosineAnnealingLR`` schedulers, and checkpoint cells (``torch.save``/
``torch.load``/``load_state_dict``). Every cell is distinct (index suffixes). Backward and
training-loop cells dominate: they are the shapes whose cost once grew quadratically.

Figures (targets in brackets):

* port time at ~500, ~2,000 and ~8,000 lines, lines/s, and the growth factor per size
  step = (time ratio) / (line ratio)  [<= 1.15; 1.0 is linear];
* port time / bare ``libcst.parse_module(text).code`` of the same text  [<= 2x];
* peak memory of the port / of a bare libcst parse+codegen, each measured in a fresh
  subprocess as the growth of the peak resident set (``VmHWM``) over the one call,
  after the imports and a warm-up port  [<= 1.5x]. The ``tracemalloc`` peak is printed
  too, but it misses what libcst's native parser allocates (a bare parse of 8,000 lines
  shows ~15 MiB there and ~180 MiB of resident growth), so the ratio uses the RSS;
* 50-line cell latency p50/p95 over ~200 ports, fresh ``PortSession`` each, after a warm-up
  [p50 <= 10 ms];
* an ~8,000-line file with no torch in it: port time / time to read it with
  ``libcst.parse_module``  [<= 1.1x: costs no more than reading it]; ``ast.parse`` and a
  plain file read are shown for scale;
* ``%load_ext msmagic`` and import + first port, each in a fresh subprocess;
* PaConvert (PyTorch -> Paddle, ``pip install paconvert``; needs no paddle to convert) on
  the same files, in a side virtualenv ``benchmarks/.paconvert-venv``, timed inside a
  driver script (no interpreter start), with its default black/isort formatting and
  with ``no_format``  [msmagic lines/s >= 3x PaConvert's].

Run: ``.venv/bin/python benchmarks/bench_port.py [--quick] [--json PATH] [--repo PATH]
[--paconvert | --no-paconvert] [--profile]``. ``--repo`` ports with the msmagic found
in PATH (e.g. a git worktree of an older commit). ``--profile`` prints the cProfile hot
spots of porting the largest file instead of the figures.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SIDE_VENV = HERE / ".paconvert-venv"

HEADER = '''"""A long PyTorch notebook exported as a script."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torch.optim.lr_scheduler import StepLR, CosineAnnealingLR

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
'''

MODEL = '''
class Block{i}(nn.Module):
    """A residual block ({i})."""

    def __init__(self, channels={c}, p=0.1):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels, momentum=0.1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        identity = x
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.drop(self.bn2(self.conv2(out)))
        return F.relu(out + identity)


class Net{i}(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, {c}, 3, padding=1),
            nn.BatchNorm2d({c}),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.blocks = nn.ModuleList([Block{i}({c}) for _ in range(2)])
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear({c}, num_classes)

    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        x = self.pool(x)
        x = x.view(x.size(0), -1)
        return self.fc(x)


model{i} = Net{i}().to(device)
for m in model{i}.modules():
    if isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
optimizer{i} = torch.optim.SGD(model{i}.parameters(), lr=0.01, momentum=0.9)
inputs{i} = torch.randn(8, 3, 32, 32)
logits{i} = model{i}(inputs{i})
probs{i} = F.softmax(logits{i}, dim=1)
top{i} = torch.argmax(probs{i}, dim=1)
summary{i} = torch.cat([logits{i}, probs{i}], dim=1).mean(dim=0, keepdim=True)
print(top{i}.detach().cpu().numpy(), summary{i}.size(1))
'''

BACKWARD = '''
x{i} = torch.randn(3, requires_grad=True)
w{i} = torch.ones(3, requires_grad=True)
y{i} = (x{i} * w{i}).sum()
z{i} = y{i} * 2 + x{i}.sum()
z{i}.backward()
g{i} = x{i}.grad
print(g{i}, w{i}.grad)
'''

BACKWARD_SCALAR = '''
a{i} = torch.tensor(1.5, requires_grad=True)
b{i} = torch.tensor(-0.5, requires_grad=True)
h{i} = torch.sin(a{i}) * b{i} + a{i} ** 2
loss{i} = h{i}.exp() - b{i}
loss{i}.backward()
da{i} = a{i}.grad
db{i} = b{i}.grad
print(f"step {i}: dloss/da={{da{i}.item():.4f}} dloss/db={{db{i}.item():.4f}}")
'''

AUTOGRAD_GRAD = '''
u{i} = torch.linspace(-1.0, 1.0, 5, requires_grad=True)
v{i} = torch.tensor(2.0, requires_grad=True)
f{i} = (u{i} ** 3 * v{i}).sum()
du{i}, dv{i} = torch.autograd.grad(f{i}, [u{i}, v{i}])
print(du{i}.shape, dv{i}.item())
'''

NO_GRAD = '''
model{m}.eval()
with torch.no_grad():
    batch{i} = torch.randn(16, 3, 32, 32).to(device)
    out{i} = model{m}(batch{i})
    pred{i} = out{i}.argmax(dim=1)
    conf{i} = F.softmax(out{i}, dim=1).max(dim=1).values
print("eval {i}", pred{i}[:4].tolist(), conf{i}.mean().item())
'''

TRAIN_STEP = '''
xs{i} = torch.randn(256, 3, 32, 32)
ys{i} = torch.randint(0, 10, (256,))
train_ds{i} = TensorDataset(xs{i}, ys{i})
train_loader{i} = DataLoader(train_ds{i}, batch_size=32, shuffle=True)
criterion{i} = nn.CrossEntropyLoss()
scheduler{i} = StepLR(optimizer{m}, step_size=2, gamma=0.5)
model{m}.train()
for epoch in range(3):
    running{i} = 0.0
    for images, labels in train_loader{i}:
        images, labels = images.to(device), labels.to(device)
        optimizer{m}.zero_grad()
        outputs = model{m}(images)
        loss = criterion{i}(outputs, labels)
        loss.backward()
        optimizer{m}.step()
        running{i} += loss.item()
    scheduler{i}.step()
    print(f"epoch {{epoch}}: loss {{running{i} / len(train_loader{i}):.4f}}")
'''

TRAIN_COSINE = '''
class MLP{i}(nn.Module):
    def __init__(self, d_in=20, hidden=64, d_out=1):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, d_out))

    def forward(self, x):
        return self.net(x).squeeze(-1)


reg{i} = MLP{i}()
opt{i} = torch.optim.Adam(reg{i}.parameters(), lr=1e-3, weight_decay=1e-4)
sched{i} = CosineAnnealingLR(opt{i}, T_max=10)
loss_fn{i} = nn.MSELoss()
X{i} = torch.randn(512, 20)
Y{i} = X{i}.sum(dim=1) + 0.1 * torch.randn(512)
loader{i} = DataLoader(TensorDataset(X{i}, Y{i}), batch_size=64, shuffle=True)
for epoch in range(10):
    reg{i}.train()
    for xb, yb in loader{i}:
        opt{i}.zero_grad()
        loss = loss_fn{i}(reg{i}(xb), yb)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(reg{i}.parameters(), max_norm=1.0)
        opt{i}.step()
    sched{i}.step()
reg{i}.eval()
with torch.no_grad():
    val{i} = loss_fn{i}(reg{i}(X{i}), Y{i}).item()
print("cosine {i}", val{i}, sched{i}.get_last_lr())
'''

EVAL_LOOP = '''
test_ds{i} = TensorDataset(torch.randn(128, 3, 32, 32), torch.randint(0, 10, (128,)))
test_loader{i} = DataLoader(test_ds{i}, batch_size=64)
model{m}.eval()
correct{i}, total{i} = 0, 0
with torch.no_grad():
    for images, labels in test_loader{i}:
        outputs = model{m}(images.to(device))
        _, predicted = torch.max(outputs, 1)
        total{i} += labels.size(0)
        correct{i} += (predicted == labels.to(device)).sum().item()
print(f"accuracy {i}: {{100.0 * correct{i} / total{i}:.1f}}%")
'''

CHECKPOINT = '''
ckpt_path{i} = "checkpoint_{i}.pt"
torch.save({{"epoch": {i}, "model": model{m}.state_dict(), "optimizer": optimizer{m}.state_dict()}}, ckpt_path{i})
state{i} = torch.load(ckpt_path{i}, map_location="cpu")
restored{i} = Net{m}()
restored{i}.load_state_dict(state{i}["model"])
optimizer{m}.load_state_dict(state{i}["optimizer"])
torch.save(restored{i}.state_dict(), "weights_{i}.pt")
restored{i}.load_state_dict(torch.load("weights_{i}.pt"))
print("restored epoch", state{i}["epoch"])
'''

# one "round" of the notebook: backward and training-loop cells dominate
ROUND = [MODEL, BACKWARD, TRAIN_STEP, AUTOGRAD_GRAD, BACKWARD_SCALAR, NO_GRAD, BACKWARD,
         TRAIN_COSINE, BACKWARD_SCALAR, EVAL_LOOP, AUTOGRAD_GRAD, CHECKPOINT, BACKWARD,
         TRAIN_STEP]


def notebook(lines: int) -> str:
    """A mixed PyTorch notebook script of about ``lines`` lines, every cell distinct."""
    parts, n, i, m = [HEADER], HEADER.count("\n"), 0, 0
    while n < lines:
        template = ROUND[i % len(ROUND)]
        if template is MODEL:
            m = i
        cell = template.format(i=i, m=m, c=16 + 8 * (i % 4))
        parts.append(cell)
        n += cell.count("\n")
        i += 1
    return "".join(parts)


CELL_50 = HEADER + '''
class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 64)
        self.fc2 = nn.Linear(64, 2)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


model = TinyNet().to(device)
for m in model.modules():
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = StepLR(optimizer, step_size=5, gamma=0.5)
criterion = nn.CrossEntropyLoss()
data = TensorDataset(torch.randn(256, 20), torch.randint(0, 2, (256,)))
loader = DataLoader(data, batch_size=32, shuffle=True)
for epoch in range(10):
    model.train()
    for xb, yb in loader:
        xb, yb = xb.to(device), yb.to(device)
        optimizer.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()
    scheduler.step()
model.eval()
with torch.no_grad():
    acc = (model(data.tensors[0]).argmax(1) == data.tensors[1]).float().mean()
torch.save(model.state_dict(), "tiny.pt")
model.load_state_dict(torch.load("tiny.pt"))
print(f"accuracy {acc.item():.3f}")
x = torch.randn(3, requires_grad=True)
y = (x ** 2).sum() + model(torch.ones(1, 20)).sum()
y.backward()
grad = x.grad
print(grad)
'''
assert CELL_50.count("\n") == 50, CELL_50.count("\n")

NO_TORCH = '''

class Accumulator{i}:
    """Running statistics ({i}) over plain floats and numpy arrays."""

    def __init__(self, size={c}):
        self.size = size
        self.values = []
        self.total = 0.0

    def add(self, value):
        self.values.append(float(value))
        self.total += value
        if len(self.values) > self.size:
            self.total -= self.values.pop(0)
        return self

    def mean(self):
        return self.total / max(len(self.values), 1)


def normalize{i}(arr, eps=1e-8):
    arr = np.asarray(arr, dtype=np.float64)
    mu, sigma = arr.mean(axis=0), arr.std(axis=0)
    return (arr - mu) / (sigma + eps)


def moving_window{i}(xs, k={c}):
    out = []
    for j in range(len(xs) - k + 1):
        window = xs[j:j + k]
        out.append(sum(window) / k)
    return out


table{i} = {{name: idx * {c} for idx, name in enumerate(["a", "b", "c", "d"])}}
matrix{i} = np.random.default_rng({i}).normal(size=({c}, 4))
scaled{i} = normalize{i}(matrix{i})
acc{i} = Accumulator{i}()
for row in scaled{i}:
    acc{i}.add(row.sum())
smooth{i} = moving_window{i}([r.max() for r in scaled{i}])
words{i} = sorted({{w.lower() for w in "The quick brown fox jumps over the lazy dog".split()}})
print({i}, acc{i}.mean(), len(smooth{i}), table{i}["c"], words{i}[:3])
'''


def no_torch_file(lines: int) -> str:
    parts = ['"""Plain Python and numpy: nothing for msmagic to port."""\nimport math\n'
             "import numpy as np\nfrom collections import defaultdict\n"]
    n, i = parts[0].count("\n"), 0
    while n < lines:
        cell = NO_TORCH.format(i=i, c=4 + i % 7)
        parts.append(cell)
        n += cell.count("\n")
        i += 1
    return "".join(parts)


def best(fn, repeat: int) -> float:
    out = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return min(out)


def _env(repo: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(repo)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def _py(code: str, repo: Path, *args: str) -> str:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         cwd=repo, env=_env(repo))
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return out.stdout.strip().splitlines()[-1]


LOAD_EXT = """
import time
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
t0 = time.perf_counter()
ip.run_line_magic('load_ext', 'msmagic')
print(time.perf_counter() - t0)
"""

FIRST_PORT = """
import json, sys, time
cell = open(sys.argv[1]).read()
t0 = time.perf_counter()
import msmagic
t1 = time.perf_counter()
msmagic.port(cell)
t2 = time.perf_counter()
msmagic.port(cell)
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first": t2 - t1, "second": t3 - t2,
                  "file": msmagic.__file__}))
"""

PEAK = """
import json, resource, sys, tracemalloc
import libcst
kind, path, how = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
if kind == "port":
    import msmagic
    msmagic.port("import torch\\nx = torch.ones(2, requires_grad=True)\\nx.sum().backward()\\n")
    op = lambda: msmagic.port(text).code
else:
    libcst.parse_module("x = 1\\n").code
    op = lambda: libcst.parse_module(text).code
def hwm_kb():  # this process's resident high-water mark (ru_maxrss would carry the
    # parent's over fork+exec on Linux: a large benchmark process would hide the figure)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if how == "rss":  # without tracemalloc, whose own bookkeeping would count
    rss0 = hwm_kb()
    op()
    print(json.dumps({"rss_delta_kb": hwm_kb() - rss0}))
else:
    tracemalloc.start()
    op()
    print(json.dumps({"peak": tracemalloc.get_traced_memory()[1]}))
"""


def peak_memory(text: str, repo: Path) -> dict:
    """Per kind ("port", "bare"): resident growth and tracemalloc peak, each in its own
    fresh subprocess."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(text)
    try:
        return {kind: {**json.loads(_py(PEAK, repo, kind, f.name, "rss")),
                       **json.loads(_py(PEAK, repo, kind, f.name, "tracemalloc"))}
                for kind in ("port", "bare")}
    finally:
        os.unlink(f.name)


# ---------------------------------------------------------------- PaConvert (side env)

PACONVERT_DRIVER = """
import json, os, sys, time
files, repeat = json.loads(sys.argv[1]), int(sys.argv[2])
devnull = os.open(os.devnull, os.O_WRONLY)
saved_out, saved_err = os.dup(1), os.dup(2)
os.dup2(devnull, 1); os.dup2(devnull, 2)   # PaConvert logs and prints a banner
from paconvert.converter import Converter
from paconvert.version import __version__
res = {"version": __version__, "files": {}}
def once(path, no_format):
    out = path[:-3] + ".paddle.py"
    c = Converter(log_dir="disable", no_format=no_format)
    t0 = time.perf_counter()
    c.run(path, out)
    dt = time.perf_counter() - t0
    return dt, c.success_api_count, c.torch_api_count
once(files[0], False)   # warm-up: its tables, black's and isort's first-use costs
for path in files:
    r = {}
    for label, nf in (("format", False), ("no_format", True)):
        runs = [once(path, nf) for _ in range(repeat if path != files[-1] else max(1, repeat - 1))]
        r[label] = min(t for t, _, _ in runs)
        r["apis"] = runs[0][2]; r["converted"] = runs[0][1]
    res["files"][path] = r
os.dup2(saved_out, 1); os.dup2(saved_err, 2)
print(json.dumps(res))
"""


def ensure_side_env(create: bool) -> tuple[Path | None, str]:
    py = SIDE_VENV / "bin" / "python"
    if py.exists():
        ok = subprocess.run([str(py), "-c", "import paconvert.converter"],
                            capture_output=True, text=True)
        if ok.returncode == 0:
            return py, "side env present"
        if not create:
            return None, "side env present but paconvert does not import: " + ok.stderr[-200:]
    if not create:
        return None, f"skipped: no {SIDE_VENV.relative_to(ROOT)} (run with --paconvert)"
    base = getattr(sys, "_base_executable", sys.executable)
    steps = [[base, "-m", "venv", str(SIDE_VENV)],
             [str(py), "-m", "pip", "install", "-q", "paconvert"]]
    for cmd in steps:
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode:
            return None, f"could not set up PaConvert ({' '.join(cmd[-3:])}): {out.stderr[-300:]}"
    return py, "side env created"


def run_paconvert(py: Path, texts: dict, repeat: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        files = []
        for lines, text in texts.items():
            path = os.path.join(d, f"nb_{lines}.py")
            Path(path).write_text(text)
            files.append(path)
        out = subprocess.run([str(py), "-c", PACONVERT_DRIVER, json.dumps(files), str(repeat)],
                             capture_output=True, text=True, cwd=d)
        if out.returncode:
            raise RuntimeError(out.stderr[-1000:] or out.stdout[-1000:])
        res = json.loads(out.stdout.strip().splitlines()[-1])
        res["files"] = {n: res["files"][p] for n, p in zip(texts, files)}
        return res


# ---------------------------------------------------------------- profile

def profile(sizes: list[int], top: int = 15) -> None:
    import cProfile
    import pstats

    import msmagic

    msmagic.port(CELL_50)
    stats = {}
    for lines in sizes[-2:]:
        text = notebook(lines)
        prof = cProfile.Profile()
        prof.enable()
        msmagic.port(text)
        prof.disable()
        stats[text.count("\n")] = pstats.Stats(prof)
    (n_small, small), (n_big, big) = sorted(stats.items())
    print(f"cProfile of porting {n_big} lines: total {big.total_tt:.2f} s "
          f"({n_small} lines: {small.total_tt:.2f} s)")
    print(f"top {top} by cumulative time in msmagic code:")
    rows = [(v[3], v[2], v[1], k) for k, v in big.stats.items() if "msmagic" in k[0]]
    rows.sort(reverse=True)
    for cum, tot, calls, (fname, line, func) in rows[:top]:
        short = fname[fname.rfind("msmagic"):]
        print(f"  {cum:6.2f}s cum {tot:6.2f}s own {calls:>8} calls  {short}:{line} {func}")
    ratio = n_big / n_small
    print(f"own time growing faster than lines (x{ratio:.1f}) between the two sizes:")
    grow = []
    for k, v in big.stats.items():
        s = small.stats.get(k)
        if s and v[2] > 0.02 and s[2] > 0:
            grow.append((v[2] / s[2] / ratio, v[2], v[1] / max(s[1], 1), k))
    grow.sort(reverse=True)
    for g, tot, callg, (fname, line, func) in grow[:8]:
        short = fname[fname.rfind("msmagic"):] if "msmagic" in fname else fname.split("/")[-1]
        print(f"  growth {g:4.2f} own {tot:5.2f}s calls x{callg:.1f}  {short}:{line} {func}")


# ---------------------------------------------------------------- main

def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, few repeats (<60 s)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    ap.add_argument("--repo", metavar="PATH", type=Path, default=ROOT,
                    help="import msmagic from this checkout (default: this one)")
    pc = ap.add_mutually_exclusive_group()
    pc.add_argument("--paconvert", action="store_true",
                    help="compare with PaConvert (creates benchmarks/.paconvert-venv)")
    pc.add_argument("--no-paconvert", action="store_true")
    ap.add_argument("--profile", action="store_true",
                    help="print cProfile hot spots of the largest port and exit")
    args = ap.parse_args()
    repo = args.repo.resolve()
    sys.path.insert(0, str(repo))

    sizes = [200, 800] if args.quick else [500, 2000, 8000]
    repeats = [3, 2] if args.quick else [5, 3, 2]
    if args.profile:
        profile(sizes)
        return

    import libcst as cst

    import msmagic

    figures: dict = {"repo": str(repo), "msmagic": msmagic.__file__, "quick": args.quick}
    print(f"msmagic from {Path(msmagic.__file__).parent}")
    sub = json.loads(_py(FIRST_PORT, repo, _tmp_cell()))
    msmagic.port(CELL_50)  # one-time costs (rule tables) paid before any timing

    # 1-2: sizes, growth, ratio to bare libcst, memory
    texts, rows = {}, []
    for lines, rep in zip(sizes, repeats):
        text = notebook(lines)
        n = text.count("\n")
        texts[n] = text
        port_t = best(lambda: msmagic.port(text), rep)
        bare_t = best(lambda: cst.parse_module(text).code, rep)
        rows.append({"lines": n, "port_s": port_t, "bare_s": bare_t,
                     "lines_per_s": n / port_t, "ratio_bare": port_t / bare_t})
    for prev, row in zip(rows, rows[1:]):
        row["growth"] = (row["port_s"] / prev["port_s"]) / (row["lines"] / prev["lines"])
        # the same for bare libcst: on this machine libcst itself slows per line as the
        # heap grows, so growth / bare growth is what the port adds to that
        row["bare_growth"] = (row["bare_s"] / prev["bare_s"]) / (row["lines"] / prev["lines"])
    mem = peak_memory(texts[rows[-1]["lines"]], repo)
    mem_ratio = mem["port"]["rss_delta_kb"] / max(1, mem["bare"]["rss_delta_kb"])
    figures.update(sizes=rows, memory={**mem, "lines": rows[-1]["lines"], "ratio": mem_ratio})

    # 3: 50-line cell latency
    from msmagic.engine.session import PortSession

    lat = []
    for _ in range(50 if args.quick else 200):
        t0 = time.perf_counter()
        msmagic.port(CELL_50, session=PortSession())
        lat.append(time.perf_counter() - t0)
    lat.sort()
    p50, p95 = statistics.median(lat), lat[int(len(lat) * 0.95) - 1]
    figures["cell50"] = {"p50_s": p50, "p95_s": p95, "n": len(lat)}

    # 4: a file with no torch
    import ast

    plain = no_torch_file(2000 if args.quick else 8000)
    pn = plain.count("\n")
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(plain)
    rep = 2 if args.quick else 3

    def read_file():
        with open(f.name) as fh:
            return fh.read()

    nt = {"lines": pn,
          "port_s": best(lambda: msmagic.port(plain), rep),
          "cst_parse_s": best(lambda: cst.parse_module(plain), rep),
          "cst_parse_code_s": best(lambda: cst.parse_module(plain).code, rep),
          "ast_parse_s": best(lambda: ast.parse(plain), rep),
          "read_s": best(read_file, rep)}
    os.unlink(f.name)
    nt["ratio_parse"] = nt["port_s"] / nt["cst_parse_s"]
    nt["ratio_ast"] = nt["port_s"] / nt["ast_parse_s"]
    figures["no_torch"] = nt

    # 5: %load_ext and first port, fresh interpreters
    load = statistics.median(float(_py(LOAD_EXT, repo)) for _ in range(2 if args.quick else 5))
    figures["load_ext_s"] = load
    figures["first_port"] = sub

    # 6: PaConvert
    pac = None
    if not args.no_paconvert:
        py, why = ensure_side_env(create=args.paconvert)
        if py is None:
            figures["paconvert"] = {"status": why}
        else:
            try:
                pac = run_paconvert(py, texts, 2 if args.quick else 3)
                figures["paconvert"] = {"status": why, **pac}
            except Exception as exc:  # PaConvert failing is a finding, not a crash
                figures["paconvert"] = {"status": f"failed: {str(exc)[-300:]}"}
    else:
        figures["paconvert"] = {"status": "skipped (--no-paconvert)"}

    # 7: table
    print(f"\n{'lines':>6} {'port ms':>9} {'lines/s':>9} {'growth':>7} {'bare ms':>9} "
          f"{'port/bare':>9}" + (f" {'PaC lines/s fmt|nofmt':>22} {'ms/PaC':>12}" if pac else ""))
    for row in rows:
        line = (f"{row['lines']:>6} {row['port_s'] * 1e3:>9.1f} {row['lines_per_s']:>9,.0f} "
                f"{'-' if 'growth' not in row else format(row['growth'], '.2f'):>7} {row['bare_s'] * 1e3:>9.1f} "
                f"{row['ratio_bare']:>8.2f}x")
        if pac:
            p = pac["files"][row["lines"]]
            row["paconvert_lines_per_s"] = {"format": row["lines"] / p["format"],
                                            "no_format": row["lines"] / p["no_format"]}
            row["vs_paconvert"] = {k: row["lines_per_s"] / v
                                   for k, v in row["paconvert_lines_per_s"].items()}
            line += (f" {row['paconvert_lines_per_s']['format']:>10,.0f} |"
                     f"{row['paconvert_lines_per_s']['no_format']:>9,.0f}"
                     f" {row['vs_paconvert']['format']:>5.1f}x|{row['vs_paconvert']['no_format']:.1f}x")
        print(line)
    growths = [r["growth"] for r in rows[1:]]
    worst_ratio = max(r["ratio_bare"] for r in rows)
    print(f"\npeak memory ({rows[-1]['lines']} lines, fresh subprocess): resident growth "
          f"port {mem['port']['rss_delta_kb'] / 1024:.1f} MiB, bare libcst "
          f"{mem['bare']['rss_delta_kb'] / 1024:.1f} MiB ({mem_ratio:.2f}x); tracemalloc peak "
          f"port {mem['port']['peak'] / 2**20:.1f} MiB, bare {mem['bare']['peak'] / 2**20:.1f} MiB")
    print(f"50-line cell ({len(lat)} ports, fresh PortSession): p50 {p50 * 1e3:.1f} ms, "
          f"p95 {p95 * 1e3:.1f} ms")
    print(f"no-torch file ({pn} lines): port {nt['port_s'] * 1e3:.0f} ms; libcst parse "
          f"{nt['cst_parse_s'] * 1e3:.0f} ms, parse+code {nt['cst_parse_code_s'] * 1e3:.0f} ms, "
          f"ast.parse {nt['ast_parse_s'] * 1e3:.0f} ms (port/ast.parse {nt['ratio_ast']:.2f}x), "
          f"file read {nt['read_s'] * 1e3:.2f} ms")
    print(f"%load_ext msmagic {load * 1e3:.1f} ms; fresh interpreter: import msmagic "
          f"{sub['import'] * 1e3:.0f} ms, first port of the 50-line cell {sub['first'] * 1e3:.0f} ms, "
          f"second {sub['second'] * 1e3:.1f} ms")
    pst = figures["paconvert"]
    print(f"PaConvert: {pst['status']}" + (f", version {pac['version']}, timed in-process "
          "(default = black+isort formatting; no_format = conversion only)" if pac else ""))

    targets = [
        ("growth per size step <= 1.15", ", ".join(f"{g:.2f}" for g in growths)
         + " (bare libcst: " + ", ".join(f"{r['bare_growth']:.2f}" for r in rows[1:]) + ")",
         all(g <= 1.15 for g in growths)),
        ("port / bare libcst <= 2x", f"{worst_ratio:.2f}x (worst)", worst_ratio <= 2),
        ("peak memory port / bare <= 1.5x", f"{mem_ratio:.2f}x", mem_ratio <= 1.5),
        ("50-line cell p50 <= 10 ms", f"{p50 * 1e3:.1f} ms", p50 <= 0.010),
        ("no-torch port <= 1.1x libcst parse", f"{nt['ratio_parse']:.2f}x",
         nt["ratio_parse"] <= 1.1),
    ]
    if pac:
        vs = rows[-1]["vs_paconvert"]
        targets.append((f"msmagic >= 3x PaConvert lines/s ({rows[-1]['lines']} lines, fmt)",
                        f"{vs['format']:.1f}x", vs["format"] >= 3))
        targets.append((f"msmagic >= 3x PaConvert lines/s ({rows[-1]['lines']} lines, no_format)",
                        f"{vs['no_format']:.1f}x", vs["no_format"] >= 3))
    print()
    width = max(len(t[0]) for t in targets)
    for name, value, ok in targets:
        print(f"{verdict(ok)}  {name:<{width}}  {value}")
    figures["targets"] = {name: {"value": value, "pass": ok} for name, value, ok in targets}
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2, default=str))


def _tmp_cell() -> str:
    path = os.path.join(tempfile.gettempdir(), f"msmagic_bench_cell_{os.getpid()}.py")
    Path(path).write_text(CELL_50)
    return path


if __name__ == "__main__":
    main()
