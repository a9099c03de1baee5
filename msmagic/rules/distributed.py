"""Distributed data parallel: PyTorch processes join a process group and wrap the model in
DistributedDataParallel; MindSpore processes are started by ``msrun``, join with
``mindspore.communication.init()`` and declare data parallelism in the parallel context."""

import libcst as cst

from msmagic.engine.spec import api, member, module
from msmagic.rules.registry import register

GROUP = "Distributed training"
SEED = "seeds/002 API Comparison › distributed training"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"
DDP_KIND = "module:torch.nn.parallel.DistributedDataParallel"
ROLE_VAR = "MS_ROLE"  # set by msrun for every process it starts

register(
    "DDP001",
    "init_process_group becomes init() + DATA_PARALLEL context, guarded for msrun",
    group=GROUP,
    why="""
        PyTorch processes meet through ``init_process_group(backend, init_method, rank,
        world_size)``. MindSpore processes are started by its launcher, ``msrun
        --worker_num=N --local_worker_num=N script.py``, which runs a scheduler and exports
        the rank, world size and address; ``mindspore.communication.init()`` then joins
        them, choosing the backend from the device, so every argument of
        ``init_process_group`` is dropped. ``mindspore.set_auto_parallel_context(
        parallel_mode=ParallelMode.DATA_PARALLEL, gradients_mean=True)`` declares what
        DistributedDataParallel does: one model replica per process, gradients averaged.
        ``init()`` raises outside ``msrun``, so both are guarded by the ``MS_ROLE``
        variable msrun sets: in a notebook (a single process) they are skipped and the
        code runs as rank 0 of 1, like a world of one. ``destroy_process_group()`` becomes
        ``mindspore.communication.release()`` under the same guard: called in a process
        that never ran ``init()`` it breaks MindSpore's device context (later kernels fail
        or crash the process).
    """,
    installed_note="""
        Checked on MindSpore 2.10 CPU: ``init()`` in a plain process raises RuntimeError
        (it asks for a launcher); under ``msrun --worker_num=1 --local_worker_num=1`` it
        succeeds with rank 0 of 1; ``get_rank()`` / ``get_group_size()`` return 0 and 1
        without ``init()``; ``release()`` without ``init()`` returns, but the next kernel
        segfaults. Several CPU workers
        were not tried.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        import torch.distributed as dist
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29533", rank=0, world_size=1)
        rank = dist.get_rank()
        dist.destroy_process_group()
    """,
)

register(
    "DDP002",
    "DistributedDataParallel(model) becomes the model itself",
    group=GROUP,
    why="""
        ``DistributedDataParallel`` wraps a model so that backward all-reduces the
        gradients across processes; its forward computes what the model computes. In
        MindSpore the data-parallel context (rule DDP001) replaces the wrapper, so the
        model is used directly and ``ddp_model.module`` becomes the model too. Arguments
        such as ``device_ids`` or ``find_unused_parameters`` go with the wrapper. The
        averaging itself is not automatic in a hand-written MindSpore loop: with
        ``value_and_grad`` the step must pass the gradients through
        ``nn.DistributedGradReducer(optimizer.parameters)`` before ``optimizer(grads)``
        (``Model.train`` does this itself). The port is flagged with that instruction;
        in a single process the reducer changes nothing.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        import torch.nn as nn
        from torch.nn.parallel import DistributedDataParallel as DDP
        import torch.distributed as dist
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29534", rank=0, world_size=1)
        net = nn.Linear(3, 2)
        out = DDP(net)(torch.ones(4, 3))
        dist.destroy_process_group()
    """,
)

register(
    "DDP003",
    "dist.get_rank / get_world_size become communication.get_rank / get_group_size",
    group=GROUP,
    why="""
        Both frameworks number processes from 0 and report how many take part. MindSpore
        calls the world size the group size. Without ``init()`` (a single notebook process)
        MindSpore answers 0 and 1, where PyTorch would raise because no process group
        exists; after ``init()`` under ``msrun`` they report the launched processes.
        PyTorch's ``group=`` takes a ProcessGroup object while MindSpore names groups by
        string, so a ``group=`` argument is flagged.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        import torch.distributed as dist
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29535", rank=0, world_size=1)
        rank = dist.get_rank()
        world = dist.get_world_size()
        dist.destroy_process_group()
    """,
)

register(
    "DDP004",
    "mp.spawn(fn, args, nprocs) becomes fn(0, *args): msrun starts the processes",
    group=GROUP,
    why="""
        ``torch.multiprocessing.spawn`` starts ``nprocs`` processes from Python and calls
        ``fn(rank, *args)`` in each. MindSpore does not start processes from inside the
        program: the script is launched ``nprocs`` times by ``msrun --worker_num=N
        --local_worker_num=N script.py`` and each process learns its rank from
        ``get_rank()``. The port therefore calls the function once, here, as rank 0,
        which is what a single-process run computes; the call is flagged, because running
        N processes means moving the cell into a script started with msrun (and reading
        the rank with ``get_rank()`` instead of the first argument).
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch
        import torch.multiprocessing as mp
        world_size = 1
        mp.spawn(print, args=("worker ready", world_size), nprocs=world_size)
    """,
)


def _guarded(site, call: cst.Call, lines: list, what: str):
    """Replace the statement holding ``site``'s call by ``if os.getenv("MS_ROLE"):``
    followed by ``lines`` (source text): the calls only work in processes msrun started."""
    if not site.is_statement:
        site.finding("DDP001", f"{what} only works in a process started by msrun; call it as a "
                     "statement guarded by os.getenv('MS_ROLE')", comment=f"{what} needs msrun")
        return call
    site.require_import("os")  # added once, with the cell's other imports
    text = (f"if os.getenv({ROLE_VAR!r}):  # started by msrun: one process per device\n"
            + "".join(f"    {line}\n" for line in lines))

    def replace(line):
        return cst.parse_statement(text).with_changes(leading_lines=line.leading_lines)

    site.replace_line(replace)
    return call


def _init(site):
    call = cst.Call(func=site.ref("mindspore.communication.init"))
    site.edit("DDP001", call, detail=f"init_process_group(...) -> communication.init(), guarded by {ROLE_VAR}")
    context = site.code(site.ref("mindspore.set_auto_parallel_context"))
    mode = site.code(site.ref("mindspore.ParallelMode.DATA_PARALLEL"))
    return _guarded(site, call, [site.code(call), f"{context}(parallel_mode={mode}, gradients_mean=True)"],
                    "communication.init()")


def _release(site):
    call = cst.Call(func=site.ref("mindspore.communication.release"))
    site.edit("DDP001", call, detail=f"destroy_process_group() -> communication.release(), guarded by {ROLE_VAR}")
    return _guarded(site, call, [site.code(call)], "communication.release()")


def _unwrap(site):
    model = site.arg("module")
    if model is None:
        return None
    new = model.value
    site.edit("DDP002", new, detail="DistributedDataParallel(model) -> model")
    site.finding("DDP002", "gradients are averaged across msrun processes only if the training "
                 "step passes them through nn.DistributedGradReducer(optimizer.parameters) before "
                 "optimizer(grads)", comment="average grads with nn.DistributedGradReducer under msrun")
    return new


def _spawn(site):
    fn, extra = site.arg("fn"), site.arg("args")
    if fn is None:
        return None
    call_args = [cst.Arg(cst.Integer("0"))]
    if extra is not None:
        value = extra.value
        if isinstance(value, (cst.Tuple, cst.List)) and not any(
                isinstance(e, cst.StarredElement) for e in value.elements):
            call_args += [cst.Arg(e.value) for e in value.elements]
        else:
            call_args.append(cst.Arg(value, star="*"))
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    new = cst.Call(func=fn.value, args=[a.with_changes(comma=comma) for a in call_args[:-1]] + call_args[-1:])
    site.edit("DDP004", new, detail=f"spawn -> {site.code(new)} (rank 0 only)")
    nprocs = site.arg("nprocs")
    n = site.code(nprocs.value).strip() if nprocs is not None else "1"
    site.finding("DDP004", f"runs once here as rank 0; for {n} processes put the code in a script and "
                 f"launch it with msrun --worker_num={n} --local_worker_num={n}",
                 comment="runs as rank 0 only; launch N processes with msrun")
    return new


def _same(site):
    site.edit("DDP002", site.receiver, detail="ddp_model.module -> the model itself")
    return site.receiver


_GROUP = {"group": "MindSpore names groups by string (default 'hccl_world_group'); "
                   "pass the group's name"}

module("torch.distributed", None)
module("torch.multiprocessing", None)
module("torch.nn.parallel", None)
api("torch.distributed.init_process_group", rule="DDP001", handler=_init, returns="none")
api("torch.distributed.destroy_process_group", rule="DDP001", handler=_release, returns="none")
api("torch.distributed.get_rank", "mindspore.communication.get_rank", rule="DDP003",
    sig=("group",), unsupported=_GROUP, returns="int")
api("torch.distributed.get_world_size", "mindspore.communication.get_group_size", rule="DDP003",
    sig=("group",), unsupported=_GROUP, returns="int")
for _qual in ("torch.nn.parallel.DistributedDataParallel",
              "torch.nn.parallel.distributed.DistributedDataParallel"):
    api(_qual, rule="DDP002", sig=("module", "device_ids", "output_device"), handler=_unwrap,
        returns=DDP_KIND)
member("module", "DDP002", receiver=DDP_KIND, handler=_same, returns="module")
for _qual in ("torch.multiprocessing.spawn", "torch.multiprocessing.spawn.spawn"):
    api(_qual, rule="DDP004", sig=("fn", "args", "nprocs", "join", "daemon", "start_method"),
        handler=_spawn, returns="none")
