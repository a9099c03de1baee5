"""Held-out measurement: one-API PyTorch snippets written by another project, ported and run.

PaConvert (PyTorch -> Paddle, Apache-2.0) tests each API it converts with small PyTorch
snippets (``tests/test_<api>.py``: ``pytorch_code`` and the names to compare). msmagic was
not written against them; this script measures how it does on them. Each snippet is
ported with :func:`msmagic.port`, both versions run, and the named results are compared
as ``make verify-apis`` compares (values at parity's tolerance, shapes, dtypes; shapes and
dtypes only where the test itself does not check values, i.e. random draws). A snippet is

* **match**: the port ran and every named result agrees;
* **flagged**: it did not match, and the port reported a finding (never silently wrong);
* **crash**: the MindSpore side raised and the port reported nothing;
* **wrong**: the results differ and the port reported nothing (silently wrong);
* **skip**: PyTorch itself raised, or nothing was comparable.

Per API the first snippet counts (one per API, as the issue's measurement); ``--all``
also prints the totals over every snippet. Usage (the tests come from a PaConvert checkout
or a snapshot of it; nothing of it is kept in this repository)::

    python benchmarks/api_snippets.py --tests PaConvert/tests [--every N] [--limit N] [--json out.json]

Each test file runs in a worker process with a time limit, so a native abort or a hang in
either framework costs one file, not the run.
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FILE_TIMEOUT = 120


def snippets(path: Path) -> tuple:
    """(api, [(case name, pytorch code, names, check_value)]) of one PaConvert test file."""
    tree = ast.parse(path.read_text())
    api = None
    for node in tree.body:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", "") in ("APIBase",) and node.value.args
                and isinstance(node.value.args[0], ast.Constant)):
            api = node.value.args[0].value
    cases = []
    for node in tree.body:
        if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test_case")):
            continue
        code, names, check = None, None, True
        for sub in ast.walk(node):
            if (isinstance(sub, ast.Assign) and getattr(sub.targets[0], "id", "") == "pytorch_code"
                    and isinstance(sub.value, ast.Call) and sub.value.args
                    and isinstance(sub.value.args[0], ast.Constant)):
                import textwrap

                code = textwrap.dedent(sub.value.args[0].value)
            if (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "run"
                    and len(sub.args) >= 2 and isinstance(sub.args[1], (ast.List, ast.Tuple))):
                names = [e.value for e in sub.args[1].elts if isinstance(e, ast.Constant)]
                for kw in sub.keywords:
                    if kw.arg == "check_value" and isinstance(kw.value, ast.Constant):
                        check = bool(kw.value.value)
                    if kw.arg == "unsupport":
                        pass
        if code and names:
            cases.append((node.name, code, names, check))
    return api, cases


def run_case(code: str, names: list, check: bool) -> tuple:
    """(outcome, detail) for one snippet."""
    import warnings

    warnings.filterwarnings("ignore")
    import msmagic
    from msmagic.apis.harness import compare, compare_kind

    tns: dict = {"__name__": "__snippet_torch__"}
    try:
        exec(compile(code, "<torch>", "exec"), tns)
    except Exception as exc:
        return "skip", f"PyTorch raises {type(exc).__name__}"
    try:
        port = msmagic.port(code)
    except Exception as exc:
        return "crash", f"port raised {type(exc).__name__}: {exc}"[:200]
    findings = [f"{f.rule_id} {f.api}" for f in port.unsupported]
    mns: dict = {"__name__": "__snippet_ms__"}
    try:
        exec(compile(port.code, "<mindspore>", "exec"), mns)
        whys = []
        for n in names:
            if n not in tns:
                continue
            if n not in mns:
                whys.append(f"{n}: not bound")
                continue
            why = (compare if check else compare_kind)(tns[n], mns[n])
            if why == "not comparable":
                continue
            if why:
                whys.append(f"{n}: {why}")
    except BaseException as exc:  # noqa: BLE001  (MindSpore raises lazily too)
        if isinstance(exc, KeyboardInterrupt):
            raise
        text = str(exc).strip().splitlines()
        msg = next((ln for ln in text if ln.strip() and not set(ln.strip()) <= set("-=")), "")
        detail = f"{type(exc).__name__}: {msg[:160]}"
        return ("flagged" if findings else "crash"), detail + (f" [{findings[0]}]" if findings else "")
    if not whys:
        return "match", ""
    return ("flagged" if findings else "wrong"), "; ".join(whys)[:200] + (f" [{findings[0]}]" if findings else "")


def worker(paths: list) -> None:
    """Run the files given, one JSON line per snippet on stdout."""
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    import torch

    for p in paths:
        api, cases = snippets(Path(p))
        for name, code, names, check in cases:
            torch.manual_seed(0)
            t0 = time.perf_counter()
            try:
                outcome, detail = run_case(code, names, check)
            except Exception as exc:  # a harness failure is a result, never a silent pass
                outcome, detail = "crash", f"runner: {type(exc).__name__}: {exc}"[:200]
            out.write(json.dumps({"file": p, "api": api, "case": name, "outcome": outcome, "detail": detail,
                                  "seconds": round(time.perf_counter() - t0, 3)}) + "\n")
            out.flush()


def family(api: str) -> str:
    if not api:
        return "?"
    if api.startswith("torch.Tensor."):
        return "Tensor methods"
    parts = api.split(".")
    if api.startswith("torch.nn.functional."):
        return "nn.functional"
    if api.startswith("torch.nn.") and parts[2][:1].isupper():
        return "nn layers"
    if len(parts) == 2:
        return "torch functions"
    return ".".join(parts[:2]) if parts[1] != "nn" else ".".join(parts[:3])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tests", required=True, help="PaConvert's tests/ directory")
    ap.add_argument("--limit", type=int, default=0, help="only the first N test files")
    ap.add_argument("--every", type=int, default=1, help="only every N-th test file (a fixed sample)")
    ap.add_argument("--json", help="write every snippet's outcome here")
    ap.add_argument("--all", action="store_true", help="also print totals over every snippet")
    ap.add_argument("--worker", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker is not None:
        worker(args.worker)
        return 0
    files = sorted(str(p) for p in Path(args.tests).glob("test_*.py"))
    files = [f for f in files if snippets(Path(f))[0] and str(snippets(Path(f))[0]).startswith("torch")]
    files = files[:: max(1, args.every)]
    if args.limit:
        files = files[: args.limit]
    t0 = time.perf_counter()
    rows: list = []
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    batch = 60
    for i in range(0, len(files), batch):
        chunk = files[i:i + batch]
        pending = list(chunk)
        while pending:
            try:
                proc = subprocess.run([sys.executable, __file__, "--tests", args.tests, "--worker", *pending],
                                      capture_output=True, text=True, env=env,
                                      timeout=FILE_TIMEOUT * len(pending))
                out, code = proc.stdout, proc.returncode
            except subprocess.TimeoutExpired as exc:
                out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
                code = "timeout"
            got = [json.loads(ln) for ln in out.splitlines() if ln.startswith("{")]
            rows.extend(got)
            if code == 0:
                break
            # the worker died (a native abort) or hung in the first file it did not finish
            have = collections.Counter(r["file"] for r in rows)
            bad = next((p for p in pending if have[p] < len(snippets(Path(p))[1])), None)
            if bad is None:
                break
            api, cases = snippets(Path(bad))
            seen = {r["case"] for r in rows if r["file"] == bad}
            for name, *_ in cases:
                if name not in seen:
                    rows.append({"file": bad, "api": api, "case": name, "outcome": "crash",
                                 "detail": f"process died ({code})", "seconds": 0})
            pending = pending[pending.index(bad) + 1:]
        print(f"  {min(i + batch, len(files))}/{len(files)} files, {time.perf_counter() - t0:.0f} s",
              file=sys.stderr, flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=0) + "\n")
    report(rows, args.all, time.perf_counter() - t0)
    return 0


def report(rows: list, show_all: bool, seconds: float) -> None:
    first: dict = {}
    for r in rows:
        first.setdefault(r["api"], r)
    kinds = ("match", "flagged", "crash", "wrong", "skip")
    fam = collections.defaultdict(collections.Counter)
    for api, r in first.items():
        fam[family(api)][r["outcome"]] += 1
    tot = collections.Counter(r["outcome"] for r in first.values())
    print(f"{'family':<28}" + "".join(f"{k:>9}" for k in kinds) + f"{'total':>8}")
    for f in sorted(fam, key=lambda f: -sum(fam[f].values())):
        c = fam[f]
        print(f"{f:<28}" + "".join(f"{c[k]:>9}" for k in kinds) + f"{sum(c.values()):>8}")
    n = sum(tot.values())
    print(f"{'all APIs (first snippet)':<28}" + "".join(f"{tot[k]:>9}" for k in kinds) + f"{n:>8}")
    ran = n - tot["skip"]
    if ran:
        print(f"faithful (match) {tot['match'] / ran:.1%} of {ran} APIs PyTorch runs; unflagged crashes "
              f"{tot['crash']}, silently wrong {tot['wrong']}")
    if show_all:
        every = collections.Counter(r["outcome"] for r in rows)
        print("every snippet: " + ", ".join(f"{k} {every[k]}" for k in kinds) + f" (of {len(rows)})")
    print(f"run time {seconds:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
