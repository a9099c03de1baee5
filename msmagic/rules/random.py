"""Random seeds and generators: ``torch.manual_seed`` -> ``mindspore.set_seed``,
``torch.Generator`` -> ``mindspore.Generator``; in-place random fills on tensors are
flagged (on 2.10 they exist but have no CPU kernel)."""

from __future__ import annotations

import libcst as cst

from msmagic.engine.spec import api, method
from msmagic.rules.registry import register

GROUP = "Random numbers"
SEED = "seeds/002 Random Number Generation"
REF = "r2.4.10/api_mapping/pytorch_api_mapping.md"

register(
    "RNG001",
    "torch.manual_seed becomes mindspore.set_seed",
    group=GROUP,
    why="""
        ``mindspore.set_seed`` fixes the global seed that MindSpore's random operators
        (``ops.randn``, ``ops.uniform``, Dropout...) and the weight Initializers start from,
        which is what ``torch.manual_seed`` does for PyTorch: running the ported cell twice
        gives the same numbers. The two frameworks use different generators, so the same
        seed does not give the same numbers as PyTorch; that is why msmagic's parity runner
        copies random values from the PyTorch side instead of comparing them. ``set_seed``
        also reseeds NumPy's global generator and ``mindspore.dataset``, which
        ``torch.manual_seed`` does not touch. It returns ``None`` where PyTorch returns the
        default Generator, so where the value is used the port also seeds MindSpore's
        default Generator and gives it: ``(mindspore.set_seed(s) or
        mindspore.manual_seed(s))`` (``manual_seed`` returns the Generator); a seed that is
        not a name or a number would be evaluated twice, so that case is flagged.
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        The mapping table lists mindspore.manual_seed; on 2.10 that only seeds the default
        Generator used by the mint and in-place random operators, while the classic ops and
        the Initializers targeted here follow set_seed (verified: ops.randn and Normal()
        repeat after set_seed, not after manual_seed alone).
    """,
    example="""
        import torch

        seed = 42
        torch.manual_seed(seed)
    """,
)

register(
    "RNG002",
    "torch.cuda.manual_seed and manual_seed_all become mindspore.set_seed",
    group=GROUP,
    why="""
        PyTorch keeps a separate generator per CUDA device, so seeding usually repeats the
        seed for the GPUs with ``torch.cuda.manual_seed`` or ``manual_seed_all``. MindSpore
        has one global seed for every device, set by ``mindspore.set_seed``, so these calls
        become ``set_seed`` as well. Setting it twice to the same value (after a
        ``torch.manual_seed`` that was ported too) is harmless: it restarts the same
        sequence at the same point of the cell.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch

        seed = 0
        torch.cuda.manual_seed_all(seed)
    """,
)

register(
    "RNG003",
    "torch.Generator becomes mindspore.Generator",
    group=GROUP,
    why="""
        MindSpore 2.10 has its own ``Generator`` with the same methods (``manual_seed``
        returning the generator, ``seed``, ``initial_seed``, ``get_state``, ``set_state``),
        so a generator object ports directly; the ``device=`` argument is dropped because a
        MindSpore generator is not tied to a device. Its states are not interchangeable
        with PyTorch's, and the classic ``mindspore.ops`` random functions take a ``seed``
        instead of a ``generator=``, so code passing the generator to a random operator is
        flagged where that operator is ported.
    """,
    seed=SEED,
    reference=REF,
    example="""
        import torch

        g = torch.Generator()
        g.manual_seed(7)
        start = g.initial_seed()
    """,
)

register(
    "RNG004",
    "In-place random fills random_, exponential_ and bernoulli_ are flagged",
    group=GROUP,
    finding_only=True,
    why="""
        MindSpore 2.10 does define ``Tensor.random_``, ``exponential_`` and
        ``bernoulli_`` with PyTorch's arguments, but only for Ascend: on CPU they fail when
        the result is used ("Create kernelmod for op InplaceRandom failed" or "not
        supported on this device"). So they are left in place and flagged. For a Parameter
        use ``set_data(initializer(...))`` (see the nn.init rules); for a tensor, create a
        new one with ``ops.randint``/``ops.bernoulli`` of the same shape. (``normal_`` and
        ``uniform_`` fail the same way and are ported through ``copy_``, rule TNS008.)
    """,
    seed=SEED,
    reference=REF,
    installed_note="""
        The migration guide says MindSpore has no in-place random methods; 2.10 has them,
        documented as Ascend-only, and they were verified to fail on the CPU backend.
    """,
    example="""
        import torch

        x = torch.zeros(3)
        x.bernoulli_(0.5)
    """,
)


def _set_seed(rule: str):
    def handler(site):
        new = site.apply(func=site.ref("mindspore.set_seed"))
        if site.is_statement or rule != "RNG001":  # torch.cuda.manual_seed returns None too
            site.edit(rule, new, detail=f"{site.api} -> mindspore.set_seed")
            return new
        seed = site.arg("seed")
        if seed is not None and isinstance(seed.value, (cst.Name, cst.Integer, cst.Attribute)):
            # its value is PyTorch's default Generator: MindSpore's, seeded the same way
            generator = cst.Call(func=site.ref("mindspore.manual_seed"), args=[cst.Arg(seed.value)])
            new = cst.BooleanOperation(left=new, operator=cst.Or(), right=generator,
                                       lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            site.edit(rule, new, detail=f"{site.api} -> mindspore.set_seed, and the default Generator "
                                        "mindspore.manual_seed returns")
            return new
        site.edit(rule, new, detail=f"{site.api} -> mindspore.set_seed")
        site.finding(rule, "mindspore.set_seed returns None, not a Generator",
                     comment="set_seed returns None; its value is used here")
        return new

    return handler


for _qual in ("torch.manual_seed", "torch.random.manual_seed"):
    api(_qual, "mindspore.set_seed", rule="RNG001", sig=("seed",), handler=_set_seed("RNG001"))
for _qual in ("torch.cuda.manual_seed", "torch.cuda.manual_seed_all"):
    api(_qual, "mindspore.set_seed", rule="RNG002", sig=("seed",), handler=_set_seed("RNG002"))

api("torch.Generator", "mindspore.Generator", rule="RNG003", sig=("device",), drop={"device": "RNG003"},
    returns="generator")


def _inplace_random(site):
    site.finding(
        "RNG004",
        f"Tensor.{site.original.func.attr.value} exists in MindSpore 2.10 but has no CPU kernel",
        comment=f".{site.original.func.attr.value}() is Ascend-only in MindSpore; fill the tensor another way",
    )


# normal_ and uniform_ are ported through copy_ (TNS008)
for _name in ("random_", "exponential_", "bernoulli_"):
    method(_name, "RNG004", receiver="tensor", unambiguous=True, handler=_inplace_random, returns="tensor")
