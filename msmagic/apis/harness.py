"""The verification harness: every mapping proven by running both frameworks.

``python -m msmagic.apis.harness`` (``make verify-apis``) verifies each entry of the
engine's tables and writes ``msmagic/apis/verification.json``:

* an entry that PyTorch's ``op_db`` tests (functions, Tensor methods, in-place variants,
  ``nn.functional``, ``linalg``, ``special``, ``fft``) is run on its samples for
  float32, float64, int64 and bool where the operator supports them: each sample is
  written as a PyTorch snippet, ported with :func:`msmagic.port`, run on both sides and
  compared (values, shapes, dtypes);
* a layer that ``module_db`` tests is built from its constructor samples, its
  parameters are copied across, and its forward outputs compared;
* other APIs have hand-written cases (:mod:`msmagic.apis.cases`);
* every rule example is run in lockstep, and the APIs it ported are credited.

Each op runs in a worker process; a worker that crashes (a native abort in either
framework) is restarted and the entry recorded as crashed. ``--discover`` proposes
same-signature candidates for op_db entries the table lacks and keeps those that pass
(see :mod:`msmagic.apis.discover`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from typing import Any, Optional

from msmagic.parity_check.options import DEFAULT_ATOL as ATOL, DEFAULT_RTOL as RTOL  # parity's own tolerance

_WORST = {"ok": 0, "raises": 1, "differs": 2}

#: the largest |MindSpore - PyTorch| of the float values compared since the last reset
#: (one list per worker process; :func:`measured` reads and clears it)
_MEASURED: list = []


def measured() -> Optional[float]:
    """The largest absolute difference of float values compared since the last call, or
    None when none was compared; clears the record."""
    out = max(_MEASURED) if _MEASURED else None
    _MEASURED.clear()
    return out


def _row_error(rows) -> Optional[float]:
    """The largest ``max_abs`` of lockstep rows that compared numbers."""
    vals = [float(r.max_abs) for r in rows if isinstance(getattr(r, "max_abs", None), (int, float))]
    return max(vals) if vals else None


# ----------------------------------------------------------------------------- comparing


def _dtype_name(d) -> str:
    return str(d).split(".")[-1].lower()


def compare(t, m) -> Optional[str]:
    """None when the MindSpore result ``m`` is PyTorch's ``t``; else what differs."""
    import mindspore
    import numpy as np
    import torch

    if isinstance(t, torch.Tensor):
        if not isinstance(m, mindspore.Tensor):
            return f"returns {type(m).__name__} where PyTorch returns a tensor"
        if tuple(t.shape) != tuple(m.shape):
            return f"shape {tuple(m.shape)} where PyTorch gives {tuple(t.shape)}"
        td, md = _dtype_name(t.dtype), _dtype_name(m.dtype)
        if td != md:
            return f"dtype {md} where PyTorch gives {td}"
        if t.dtype == torch.bfloat16:
            a, b = t.detach().float().numpy(), m.float().asnumpy()
        else:
            # a lazy conjugate (torch.fft.ihfft, x.conj()) is materialised before numpy()
            a, b = t.detach().cpu().resolve_conj().resolve_neg().numpy(), m.asnumpy()
        if a.dtype.kind in "fc":
            if a.size and (np.isnan(a) == np.isnan(b)).all():
                wide = np.complex128 if a.dtype.kind == "c" else np.float64
                with np.errstate(invalid="ignore"):
                    d = np.abs(b.astype(wide) - a.astype(wide))
                finite = np.isfinite(d)
                if finite.any():
                    _MEASURED.append(float(d[finite].max()))
            if not np.allclose(b, a, rtol=RTOL, atol=ATOL, equal_nan=True):
                with np.errstate(invalid="ignore"):
                    wide = "complex128" if a.dtype.kind == "c" else "float64"
                    d = np.nanmax(np.abs(b.astype(wide) - a.astype(wide))) if a.size else 0
                return f"values differ (max |d| {d:.3g})"
        elif not np.array_equal(a, b):
            return "values differ"
        return None
    if isinstance(t, (tuple, list)):
        if not isinstance(m, (tuple, list)):
            return f"returns {type(m).__name__} where PyTorch returns a tuple of {len(t)}"
        if len(t) != len(m):
            return f"returns {len(m)} values where PyTorch returns {len(t)}"
        for i, (a, b) in enumerate(zip(t, m)):
            why = compare(a, b)
            if why:
                return f"[{i}]: {why}"
        return None
    if isinstance(t, (bool, int, float)):
        if isinstance(m, mindspore.Tensor):
            return "returns a tensor where PyTorch returns a Python number"
        if type(t) is not type(m) and not (isinstance(t, float) and isinstance(m, float)):
            return f"returns {type(m).__name__} where PyTorch returns {type(t).__name__}"
        if isinstance(t, float):
            if math.isfinite(t) and math.isfinite(m):
                _MEASURED.append(abs(m - t))
            return None if np.isclose(m, t, rtol=RTOL, atol=ATOL, equal_nan=True) else "values differ"
        return None if t == m else "values differ"
    if t is None:
        return None if m is None else f"returns {type(m).__name__} where PyTorch returns None"
    if isinstance(t, torch.dtype):
        return None if _dtype_name(t) == _dtype_name(m) else f"dtype {m} where PyTorch gives {t}"
    return "not comparable"


def _first_line(exc) -> str:
    """``TypeError: <the first line that says something>`` (MindSpore's messages open
    with rules of dashes and end with a C++ stack)."""
    for line in str(exc).splitlines():
        line = line.strip()
        if line and not set(line) <= set("-= ") and not line.startswith("- C++"):
            return f"{type(exc).__name__}: {line[:160]}"
    return type(exc).__name__


def compare_kind(t, m) -> Optional[str]:
    """For random draws: the same structure, shapes and dtypes (values differ by design)."""
    import torch

    if isinstance(t, torch.Tensor):
        return compare(torch.zeros_like(t), _zeros_like_ms(m)) if hasattr(m, "shape") else compare(t, m)
    if isinstance(t, (tuple, list)) and isinstance(m, (tuple, list)) and len(t) == len(m):
        for a, b in zip(t, m):
            why = compare_kind(a, b)
            if why:
                return why
        return None
    return compare(t, m)


def _zeros_like_ms(m):
    from mindspore import ops

    return ops.zeros_like(m)


def _is_random(key: str) -> bool:
    from msmagic.engine import spec as S

    if key.startswith("Tensor."):
        return any(getattr(m, "random", False) for m in S.METHODS.get(key.split(".", 1)[1], ()))
    entry = S.APIS.get(key)
    return bool(entry and entry.random)


# ----------------------------------------------------------------------------- running


class _Runner:
    """Ports and runs snippets in this process (a worker)."""

    def __init__(self) -> None:
        import mindspore  # noqa: F401  (load once, before timing anything)
        import torch

        import msmagic

        self.msmagic = msmagic
        self.torch = torch
        self._ports: dict = {}

    def port(self, code: str, tensors) -> Any:
        from msmagic.engine.session import PortSession

        hit = self._ports.get(code)
        if hit is None:
            session = PortSession()
            session.kinds = {name: "tensor" for name in tensors}
            hit = self.msmagic.port(code, session=session)
            self._ports[code] = hit
        return hit

    def run_snippet(self, snippet, key: str) -> tuple[str, str]:
        """("ok" | "raises" | "differs" | "skip" | "flagged", detail)."""
        src = "import torch\n" + snippet.code
        tns = _namespace("torch", snippet)
        try:
            exec(compile(src, "<torch>", "exec"), tns)
        except Exception as exc:  # PyTorch itself refuses this sample
            return "skip", f"PyTorch raises {type(exc).__name__}"
        if "out" not in tns:
            return "skip", "no output"
        try:
            port = self.port(src, snippet.tensors)
        except Exception as exc:
            return "raises", f"port failed: {type(exc).__name__}: {exc}"
        # a finding means the port itself says this call is not faithful: the sample then
        # proves nothing about the mapping (API006, "pattern not verified yet", excepted)
        own = [f for f in port.unsupported if f.rule_id != "API006"]
        if own:
            return "flagged", own[0].reason
        mns = _namespace("mindspore", snippet)
        try:
            exec(compile(port.code, "<mindspore>", "exec"), mns)
        except Exception as exc:
            return "raises", _first_line(exc)
        measured()  # a fresh measurement for this sample
        try:  # MindSpore may run the kernel only when the value is read
            if _is_random(key):  # draws differ by design: parity copies them; check kind
                why = compare_kind(tns["out"], mns.get("out"))
            else:
                why = compare(tns["out"], mns.get("out"))
        except Exception as exc:
            return "raises", _first_line(exc)
        if why is None:
            return "ok", ""
        if why == "not comparable":
            return "skip", why
        return "differs", why

    def run_module(self, snippet, key: str) -> tuple[str, str]:
        from msmagic.parity_check import MATCH, ONLY_MS, execute, plan_steps

        src = "import torch\n" + snippet.code
        try:
            port = self.port(src, snippet.tensors)
        except Exception as exc:
            return "raises", f"port failed: {exc}"
        own = [f for f in port.unsupported if f.api == key or f.rule_id in ("GEN001", "API005", "API007")]
        if own:  # an argument the mapping flags: this sample is not a verification
            return "flagged", own[0].reason
        tns = _namespace("torch", snippet)
        mns = _namespace("mindspore", snippet)
        steps = plan_steps(src, port)
        try:  # MindSpore may raise only when a value is read (while comparing)
            run = execute(steps, tns, mns, port=port, sync=True, rtol=RTOL, atol=ATOL)
        except Exception as exc:
            return "raises", _first_line(exc)
        if run.torch_error is not None:
            return "skip", f"PyTorch raises {type(run.torch_error).__name__}"
        if run.ms_error is not None:
            return "raises", _first_line(run.ms_error)
        out = [r for r in run.rows if r.name == "out"]
        if not out:
            return "skip", "no output compared"
        _MEASURED.extend([e] if (e := _row_error(run.rows)) is not None else [])
        bad = [r for r in run.rows if r.status not in (MATCH, ONLY_MS)]
        if bad:
            r = bad[0]
            return "differs", f"{r.name}: {r.status} (max |d| {r.max_abs})"
        dtype = strict_dtype_mismatch(r for r in run.rows if r.status == MATCH)
        if dtype:
            return "differs", dtype
        return "ok", ""


def _namespace(side: str, snippet) -> dict:
    """A fresh namespace holding the snippet's inputs: copies on the PyTorch side (in-place
    calls must not touch the sample), MindSpore tensors of the same values on the other."""
    from msmagic.parity_check import to_mindspore

    ns = {"__name__": f"__verify_{side}__"}
    for k, v in snippet.tensors.items():
        ns[k] = v.clone() if side == "torch" else to_mindspore(v.clone())
    return ns


def _aggregate(key: str, source: str, outcomes: list) -> dict:
    """outcomes: (snippet, status, detail, max |d| or None) -> the entry's record."""
    dtypes: dict[str, str] = {}
    patterns: dict[tuple, dict] = {}
    counts = {"ok": 0, "raises": 0, "differs": 0, "skip": 0, "flagged": 0}
    first_error = ""
    zero_dim = empty = ""
    per_dtype: dict = {}
    worst = None  # the largest |d| of the samples that count (not 0-d, not empty)
    for snip, status, detail, err in outcomes:
        if snip.zero_dim and status in ("differs", "raises"):
            # 0-d inputs are rare in notebooks: recorded apart, not held against the entry
            zero_dim = zero_dim or f"{status}: {detail}"
            continue
        if getattr(snip, "empty", False) and status in ("differs", "raises"):
            # so are inputs with no elements (MindSpore 2.10's matmul kernels return
            # uninitialised memory for an empty inner dimension): recorded apart too
            empty = empty or f"{status}: {detail}"
            continue
        counts[status] = counts.get(status, 0) + 1
        if status in ("skip",):
            continue
        if err is not None and status in ("ok", "differs"):
            worst = err if worst is None else max(worst, err)
        if status == "flagged":
            first_error = first_error or detail
            continue
        label = "ok" if status == "ok" else f"{status}: {detail}"
        seen = per_dtype.setdefault(snip.dtype, {"ok": 0, "bad": None})
        if status == "ok":
            seen["ok"] += 1
        elif seen["bad"] is None or _WORST[status] > _WORST[seen["bad"].split(":")[0]]:
            seen["bad"] = label
        pat = (snip.positional, tuple(snip.keywords))
        p = patterns.setdefault(pat, {"positional": snip.positional, "keywords": list(snip.keywords),
                                      "status": label})
        # a pattern is verified when a sample with it passed (dtype failures are kept
        # per dtype above); it fails only when no sample with it passed
        if status == "ok":
            p["status"] = "ok"
            # only a sample with elements in every dimension proves a pattern: a 0-d
            # input hides a default reduction that differs (smooth_l1_loss: 'none'
            # against PyTorch's 'mean')
            if not (snip.zero_dim or getattr(snip, "empty", False)):
                p["passed"] = True
            else:
                p.setdefault("scalar_only", True)
        elif not p.get("passed") and _WORST[status] >= _WORST[p["status"].split(":")[0]]:
            p["status"] = label
        if status != "ok" and not first_error:
            first_error = f"{status}: {detail}"
    for dt, seen in per_dtype.items():
        # "ok": every sample passed; "partly <kind>": some did; "<kind>": none did
        if seen["bad"] is None:
            dtypes[dt] = "ok"
        elif seen["ok"]:
            dtypes[dt] = "partly " + seen["bad"]
        else:
            dtypes[dt] = seen["bad"]
    float_differs = any(d in ("float32", "float64") and w.startswith(("differs", "partly differs")) for d, w in dtypes.items())
    if float_differs or (counts["differs"] and not counts["ok"]):
        status = "differs"
    elif counts["ok"]:
        status = "verified"
    elif counts["raises"]:
        status = "raises"
    elif counts["flagged"]:
        status = "flagged"
    else:
        status = "untested"
    ok_patterns = sorted((p for p in patterns.values() if p["status"] == "ok" and p.get("passed")),
                         key=lambda p: (p["positional"], p["keywords"]))
    rec = {
        "status": status,
        "source": source,
        "samples": counts["ok"],
        "dtypes": dict(sorted(dtypes.items())),
        "patterns": [{"positional": p["positional"], "keywords": p["keywords"]} for p in ok_patterns],
    }
    failing = sorted(({k: v for k, v in p.items() if k != "passed"} for p in patterns.values()
                      if p["status"] != "ok"), key=lambda p: (p["positional"], p["keywords"]))
    if failing:
        rec["failing_patterns"] = failing[:6]
    if worst is not None:
        rec["max_error"] = float(f"{worst:.3g}")
    if zero_dim:
        rec["zero_dim"] = zero_dim[:200]
    if empty:
        rec["empty"] = empty[:200]
    if first_error and status != "verified":
        rec["error"] = first_error[:240]
    return rec


def verify_op(runner: _Runner, key: str, per_dtype: int) -> dict:
    from msmagic.apis import samples

    idx = _op_index()
    op, form = idx[key]
    outcomes = []
    for snip in samples.snippets_for(op, form, key, per_dtype):
        status, detail = runner.run_snippet(snip, key)
        outcomes.append((snip, status, detail, measured()))
    return _aggregate(key, f"op_db:{op.name}", outcomes)


def verify_operator(runner: _Runner, key: str) -> dict:
    from msmagic.apis import samples

    outcomes = []
    for snip in samples.operator_snippets(key):
        status, detail = runner.run_snippet(snip, key)
        outcomes.append((snip, status, detail, measured()))
    return _aggregate(key, f"op_db:{samples.OPERATORS[key][0]}", outcomes)


def verify_generic(runner: _Runner, key: str) -> dict:
    from msmagic.apis import samples

    form = samples.generic_index([key]).get(key)
    outcomes = []
    if form:
        for snip in samples.generic_snippets(key, form):
            status, detail = runner.run_snippet(snip, key)
            outcomes.append((snip, status, detail, measured()))
    return _aggregate(key, "generic samples", outcomes)


def verify_module(runner: _Runner, key: str, per_dtype: int) -> dict:
    from msmagic.apis import samples

    info = _module_index()[key]
    outcomes = []
    for snip in samples.module_snippets(info, key, per_dtype):
        status, detail = runner.run_module(snip, key)
        outcomes.append((snip, status, detail, measured()))
    return _aggregate(key, f"module_db:{info.module_cls.__name__}", outcomes)


def verify_case(key: str) -> dict:
    from msmagic.apis import cases
    from msmagic.apis.samples import Snippet

    outcomes = []
    for case in cases.CASES.get(key, ()):
        snip = Snippet(code=case.code, positional=case.positional, keywords=case.keywords,
                       dtype=case.dtype)
        status, detail = _run_case(case)
        outcomes.append((snip, status, detail, measured()))
    return _aggregate(key, "case", outcomes)


def strict_dtype_mismatch(rows) -> Optional[str]:
    """Lockstep compares dtype kinds (int vs float); the harness wants exact dtypes."""
    for r in rows:
        a, b = _dtype_name(r.torch_dtype), _dtype_name(r.ms_dtype)
        if r.torch_dtype and r.ms_dtype and a != b and "tensor" not in (a, b):
            if {a, b} <= {"int", "float", "bool", "tuple", "list", "nonetype", "str"}:
                if a == b:
                    continue
            return f"{r.name}: dtype {b} where PyTorch gives {a}"
    return None


def verify_flagged(key: str) -> dict:
    """Port the snippet of an always-flagged entry and check that the port flags it."""
    import msmagic
    from msmagic.apis import cases

    result = msmagic.port(cases.FLAGGED[key])
    found = [f for f in result.unsupported if f.rule_id not in ("GEN001",)]
    status = "flagged" if found else "raises"
    rec = {"status": status, "source": "port flags it", "samples": 0, "dtypes": {}, "patterns": []}
    rec["error" if not found else "note"] = (str(found[0]) if found else "expected a finding, got none")[:240]
    return rec


def _run_case(case) -> tuple[str, str]:
    from msmagic.parity_check import MATCH, ONLY_MS, run_pair

    try:
        run = run_pair(case.code, rtol=RTOL, atol=ATOL)
    except Exception as exc:  # raised while comparing (a lazily run MindSpore kernel)
        return "raises", _first_line(exc)
    flagged = [f for f in run.port.unsupported if f.rule_id != "API006"]  # not yet verified: that's us
    if flagged:
        return "flagged", str(flagged[0])
    if run.torch_error is not None:
        return "skip", f"PyTorch raises {run.torch_error!r}"
    if run.ms_error is not None:
        return "raises", _first_line(run.ms_error)
    if not any(r.status == MATCH for r in run.rows):
        return "skip", "nothing compared"
    _MEASURED.extend([e] if (e := _row_error(run.rows)) is not None else [])
    bad = [r for r in run.rows if r.status not in (MATCH, ONLY_MS)]
    if bad:
        return "differs", f"{bad[0].name}: {bad[0].status} (max |d| {bad[0].max_abs})"
    dtype = strict_dtype_mismatch(r for r in run.rows if r.status == MATCH)
    if dtype:
        return "differs", dtype
    return "ok", ""


def verify_rule_example(rule_id: str) -> dict:
    """Run one rule's example in lockstep: {api key: record} for what it ported."""
    from msmagic.parity_check import MATCH, ONLY_MS, run_pair
    from msmagic.rules.registry import get_rule

    rule = get_rule(rule_id)
    if rule.finding_only:
        return {}
    run = run_pair(rule.example, rtol=RTOL, atol=ATOL)
    ok = (run.torch_error is None and run.ms_error is None and any(r.status == MATCH for r in run.rows)
          and all(r.status in (MATCH, ONLY_MS) for r in run.rows))
    # the PyTorch side needs a package this machine cannot install (torchvision has no CPU
    # wheel for torch 2.13): nothing was proved either way
    missing = isinstance(run.torch_error, ModuleNotFoundError)
    out = {}
    for e in run.port.edits:
        key = api_key(e.api)
        if key:
            rec = out.setdefault(key, {"status": "untested" if missing else "verified" if ok else "differs",
                                       "source": f"rule example {rule_id}", "samples": 1,
                                       "dtypes": {}, "patterns": []})
            if not ok:
                rec["error"] = run.explain()[:240]
            elif (err := _row_error(run.rows)) is not None:
                rec["max_error"] = float(f"{err:.3g}")
    return out


def api_key(api: str) -> Optional[str]:
    """The table key of an edit's ``api`` label (``Tensor.view``, ``torch.nn.Linear``)."""
    if not api or api == "import":
        return None
    if api.startswith("."):
        return None
    return api


# ----------------------------------------------------------------------------- indexes

_OPS = None
_MODULES = None


def _op_index() -> dict:
    global _OPS
    if _OPS is None:
        from msmagic.apis import samples

        _OPS = samples.op_index()
    return _OPS


def _module_index() -> dict:
    global _MODULES
    if _MODULES is None:
        from msmagic.apis import samples

        _MODULES = samples.module_index()
    return _MODULES


# ----------------------------------------------------------------------------- worker


def install_candidate(key: str, fields: Optional[dict]) -> None:
    """Put a candidate table entry in front of the engine's own for ``key``."""
    if fields is None:
        return
    from msmagic.engine import spec as S
    from msmagic.rules import api_table

    entry = api_table.build(key, fields)
    if isinstance(entry, S.Method):
        S.METHODS[entry.name] = [entry] + [m for m in S.METHODS.get(entry.name, [])
                                           if m.receiver not in (S.TENSOR, "any")]
    else:
        S.APIS[key] = entry


def worker() -> int:
    """Read jobs (JSON lines) from stdin, write one JSON result line per job."""
    import warnings

    warnings.filterwarnings("ignore")
    runner = _Runner()
    from msmagic.apis import cases  # noqa: F401

    # The protocol gets its own copy of stdout; file descriptor 1 (where native code in
    # either framework may print) and sys.stdout go to stderr.
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        job = json.loads(line)
        t0 = time.perf_counter()
        # op_db/module_db draw their sample values from the global generators: seeded per
        # job, a run's records depend on nothing but the code and the installed versions
        runner.torch.manual_seed(0)
        import numpy as np

        np.random.seed(0)
        try:
            kind = job["kind"]
            if job.get("fields") is not None:
                install_candidate(job["key"], job["fields"])
                runner._ports.clear()
            if kind == "op":
                result = {job["key"]: verify_op(runner, job["key"], job.get("per_dtype", 4))}
            elif kind == "module":
                result = {job["key"]: verify_module(runner, job["key"], job.get("per_dtype", 4))}
            elif kind == "operator":
                result = {job["key"]: verify_operator(runner, job["key"])}
            elif kind == "generic":
                result = {job["key"]: verify_generic(runner, job["key"])}
            elif kind == "case":
                result = {job["key"]: verify_case(job.get("alias") or job["key"])}
            elif kind == "flagged":
                result = {job["key"]: verify_flagged(job["key"])}
            elif kind == "rule":
                result = verify_rule_example(job["key"])
            else:
                raise ValueError(kind)
        except Exception as exc:  # a harness failure is a result too, never a silent pass
            result = {job["key"]: {"status": "raises", "source": "harness", "samples": 0, "dtypes": {},
                                   "patterns": [], "error": f"harness: {type(exc).__name__}: {exc}"[:240]}}
        out.write(json.dumps({"job": job, "result": result, "seconds": time.perf_counter() - t0}) + "\n")
        out.flush()
    return 0


class Pool:
    """Worker processes fed one job at a time; a crashed worker is replaced."""

    def __init__(self, n: int, timeout: float = 120.0) -> None:
        self.n = n
        self.timeout = timeout

    def _spawn(self):
        env = dict(os.environ, PYTHONUNBUFFERED="1", GLOG_v="3", PYTHONWARNINGS="ignore")
        return subprocess.Popen([sys.executable, "-m", "msmagic.apis.harness", "--worker"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                text=True, env=env)

    def run(self, jobs: list, progress=None) -> list:
        import selectors

        pending = list(jobs)
        results = []
        procs = {}
        sel = selectors.DefaultSelector()

        def feed(p):
            if not pending:
                return False
            job = pending.pop(0)
            procs[p] = (job, time.monotonic())
            p.stdin.write(json.dumps(job) + "\n")
            p.stdin.flush()
            return True

        def start():
            p = self._spawn()
            sel.register(p.stdout, selectors.EVENT_READ, p)
            if not feed(p):
                self._stop(p, sel)
                procs.pop(p, None)

        for _ in range(min(self.n, len(pending))):
            start()
        while procs:
            events = sel.select(timeout=5)
            for keyobj, _ in events:
                p = keyobj.data
                line = p.stdout.readline()
                while line and not line.startswith('{"job"'):  # stray output: not ours
                    line = p.stdout.readline()
                job, _t = procs.pop(p)
                if not line:  # the worker died
                    results.append({"job": job, "result": {job["key"]: _crashed(job, p)}, "seconds": 0})
                    self._stop(p, sel)
                    if pending:
                        start()
                    continue
                results.append(json.loads(line))
                if progress:
                    progress(len(results), len(jobs), results[-1])
                if feed(p):
                    continue
                self._stop(p, sel)
            now = time.monotonic()
            for p, (job, t0) in list(procs.items()):
                if now - t0 > self.timeout:
                    p.kill()
                    procs.pop(p)
                    results.append({"job": job, "result": {job["key"]: {
                        "status": "raises", "source": "harness", "samples": 0, "dtypes": {}, "patterns": [],
                        "error": f"timed out after {self.timeout:.0f} s"}}, "seconds": self.timeout})
                    self._stop(p, sel)
                    if pending:
                        start()
        return results

    @staticmethod
    def _stop(p, sel) -> None:
        try:
            sel.unregister(p.stdout)
        except Exception:
            pass
        try:
            p.stdin.close()
        except Exception:
            pass
        try:
            p.wait(timeout=10)
        except Exception:
            p.kill()


def _crashed(job, p) -> dict:
    code = p.poll()
    return {"status": "raises", "source": "harness", "samples": 0, "dtypes": {}, "patterns": [],
            "error": f"the process crashed (exit {code}) running this entry"}


# ----------------------------------------------------------------------------- planning


def plan_jobs(keys: Optional[list] = None, with_examples: bool = False) -> list:
    """One job per entry with an op_db/module_db/case source, plus one per rule example
    (for ``keys``: only with ``with_examples``, the examples of the rules owning them)."""
    from msmagic import apis
    from msmagic.apis import cases, catalog

    ops = _op_index()
    mods = _module_index()
    jobs = []
    entries = catalog.entries()
    for e in entries:
        key = e.key
        if keys is not None and key not in keys:
            continue
        alias = case_alias(key, cases.CASES)
        if alias:  # torch.distributions.normal.Normal: cases written for torch.distributions.Normal
            jobs.append({"kind": "case", "key": key, "alias": alias})
            continue
        if e.flagged:
            continue
        if key in cases.CASES and (key in ops or key in mods):
            jobs.append({"kind": "case", "key": key})  # patterns op_db lacks: both count
        if e.family == "Tensor operators" and key not in cases.CASES:  # protocols have cases
            jobs.append({"kind": "operator", "key": key})
        elif key in cases.CASES and not (key in ops or key in mods):
            jobs.append({"kind": "case", "key": key})
        elif key in cases.FLAGGED:
            jobs.append({"kind": "flagged", "key": key})
        elif key in ops:
            jobs.append({"kind": "op", "key": key})
        elif key in mods:
            jobs.append({"kind": "module", "key": key})
        elif e.table and apis.table().get(key, {}).get("target"):
            jobs.append({"kind": "generic", "key": key})
    from msmagic.rules.registry import all_rules

    # the rule examples (all of them, or those of the rules owning the keys asked for:
    # entries with no sample or case of their own are verified there)
    if keys is not None and not with_examples:
        return jobs
    owners = None if keys is None else {e.rule for e in entries if e.key in keys}
    jobs += [{"kind": "rule", "key": r.id} for r in all_rules()
             if not r.finding_only and (owners is None or r.id in owners)]
    return jobs


def case_alias(key: str, cases: dict):
    """The public name whose cases cover ``key`` (``torch.distributions.normal.Normal`` ->
    ``torch.distributions.Normal``), when ``key`` itself has none."""
    if key in cases or key.count(".") < 3:
        return None
    parts = key.split(".")
    short = ".".join(parts[:-2] + parts[-1:])
    return short if short in cases else None


def merge(results: list) -> dict:
    """Records by key: a direct source (op_db, module_db, case) wins over a rule example."""
    records: dict = {}
    # workers finish in any order: merge in job order so a run's records are reproducible
    for res in sorted(results, key=lambda r: json.dumps(r["job"], sort_keys=True)):
        for key, rec in res["result"].items():
            old = records.get(key)
            if old is None:
                records[key] = rec
                continue
            if old["source"].startswith("rule example") and not rec["source"].startswith("rule example"):
                records[key] = rec
            elif not old["source"].startswith("rule example") and not rec["source"].startswith("rule example"):
                records[key] = _combine(old, rec)
            elif old["source"].startswith("rule example") and rec["source"].startswith("rule example"):
                if rec["status"] != "verified":
                    old["status"] = rec["status"]
                    old["error"] = rec.get("error", "")
                else:
                    old["samples"] += 1
    return dict(sorted(records.items()))


def _combine(a: dict, b: dict) -> dict:
    """Two direct sources for one entry (op_db samples and hand-written cases): their
    patterns and dtypes add up; a silent difference in either is kept, a loud one (an
    input MindSpore refuses) is not held against a mapping the other source verified."""
    order = ["verified", "untested", "flagged", "raises", "differs"]
    status = max(a["status"], b["status"], key=order.index)
    if "differs" not in (a["status"], b["status"]) and "verified" in (a["status"], b["status"]):
        status = "verified"
    pats = {(p["positional"], tuple(p["keywords"])): p for p in a["patterns"] + b["patterns"]}
    dtypes = dict(b["dtypes"])
    for d, w in a["dtypes"].items():
        dtypes[d] = w if d not in dtypes or w != "ok" else dtypes[d]
    errs = [r["max_error"] for r in (a, b) if r.get("max_error") is not None]
    out = {**a, "status": status, "source": f"{a['source']} + {b['source']}",
           "samples": a["samples"] + b["samples"], "dtypes": dict(sorted(dtypes.items())),
           "patterns": [pats[k] for k in sorted(pats)]}
    if errs:
        out["max_error"] = max(errs)
    if b.get("error") and status != "verified":
        out["error"] = out.get("error") or b["error"]
    return out


def versions() -> dict:
    from importlib.metadata import version

    return {"torch": version("torch").split("+")[0], "mindspore": version("mindspore")}


def write(records: dict, path=None) -> None:
    from msmagic import apis

    path = path or apis.RECORDS_PATH
    data = {"versions": versions(), "records": records}
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def main(argv=None) -> int:
    from msmagic import apis

    p = argparse.ArgumentParser(prog="python -m msmagic.apis.harness",
                                description="Verify the API table by running both frameworks.")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--only", nargs="*", help="verify only these keys (printed; written with --write)")
    p.add_argument("--write", action="store_true",
                   help="with --only: replace these keys' records in verification.json (the others are "
                        "kept) and regenerate docs/api_coverage.md")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--check", type=int, metavar="N", default=0,
                   help="re-verify a fixed sample of N entries and compare with the committed records")
    args = p.parse_args(argv)
    if args.worker:
        return worker()
    t0 = time.perf_counter()
    if args.only or args.check:
        from msmagic import apis

        keys = args.only or fixed_sample(args.check)
        results = Pool(args.workers).run(plan_jobs(keys, with_examples=bool(args.only)))
        records = {k: r for k, r in merge(results).items() if k in keys}
        if args.only:
            for k, r in records.items():
                print(k, r["status"], r["source"], r.get("samples"), json.dumps(r.get("dtypes")),
                      [(p["positional"], p["keywords"]) for p in r.get("patterns", [])],
                      r.get("zero_dim", ""), r.get("empty", ""), r.get("error", "")[:200])
            if args.write:
                write_subset(records, args.only)
            return 0
        committed = apis.verification()["records"]
        stale = [k for k, r in records.items() if committed.get(k, {}).get("status") != r["status"]]
        for k in stale:
            print(f"stale: {k}: committed {committed.get(k, {}).get('status')}, now {records[k]['status']}")
        print(f"checked {len(records)} entries in {time.perf_counter() - t0:.0f} s; {len(stale)} stale")
        return 1 if stale else 0
    jobs = plan_jobs()

    def progress(done, total, res):
        if done % 50 == 0 or done == total:
            print(f"  {done}/{total} jobs, {time.perf_counter() - t0:.0f} s", flush=True)

    results = Pool(args.workers).run(jobs, progress)
    from msmagic.apis import catalog as _catalog

    known = {e.key for e in _catalog.entries()}
    # a rule example also ports user code (loss.backward(), Module.forward): keep only
    # the records of table entries
    records = {k: r for k, r in merge(results).items() if k in known}
    write(records)
    from msmagic.apis import catalog

    apis.verification.cache_clear()
    catalog.write_docs()
    print(catalog.summary_text(time.perf_counter() - t0))
    return 0


def write_subset(records: dict, keys: list) -> None:
    """Replace the committed records of ``keys`` with ``records`` (a key that no job
    verified loses its record), keep every other record, and regenerate the coverage page:
    ``make verify-apis`` without re-running the whole table."""
    from msmagic import apis
    from msmagic.apis import catalog

    known = {e.key for e in catalog.entries()}
    committed = dict(apis.verification()["records"])
    for key in keys:
        committed.pop(key, None)
        if key in records and key in known:
            committed[key] = records[key]
    write(dict(sorted(committed.items())))
    apis.verification.cache_clear()
    catalog.write_docs()
    print(f"wrote {len([k for k in keys if k in records])} record(s) to {apis.RECORDS_PATH.name}")


def fixed_sample(n: int) -> list:
    """Every k-th verified table key: the same sample on every run."""
    from msmagic import apis

    keys = sorted(k for k, r in apis.verification()["records"].items()
                  if not r["source"].startswith("rule example"))
    if not keys:
        return []
    step = max(1, len(keys) // n)
    return keys[::step][:n]


if __name__ == "__main__":
    sys.exit(main())
