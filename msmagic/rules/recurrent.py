"""Recurrent layers: nn.LSTM/GRU/RNN and nn.LSTMCell/GRUCell/RNNCell (RNN)."""

from __future__ import annotations

import re

import libcst as cst

from msmagic.engine.build import STATEMENT_TYPES, descendants, parse_expression
from msmagic.engine.build import code as _code
from msmagic.engine.spec import MODULE_CALL, api, member, method, statement_hook
from msmagic.rules.cells import train_mode
from msmagic.rules.generic import picked_by_name
from msmagic.rules.layers import DEVICE_RULE
from msmagic.rules.registry import register

GROUP = "Recurrent layers"
SEED = "seeds/002 API Comparison › nn APIs"
DIFF = "r2.4.10/api_mapping/pytorch_diff/"
_NOT_LITERAL = object()

LAYERS = ("LSTM", "GRU", "RNN")
CELLS = ("LSTMCell", "GRUCell", "RNNCell")

register(
    "RNN001",
    "LSTM, GRU and RNN keep their arguments; bias becomes has_bias",
    group=GROUP,
    why="""
        ``torch.nn.LSTM/GRU/RNN`` become ``mindspore.nn.LSTM/GRU/RNN``. The arguments keep
        their names and positions (``input_size, hidden_size, num_layers, bias,
        batch_first, dropout, bidirectional``) except ``bias``, which is ``has_bias``. The
        layers compute the same thing: the parameters have PyTorch's names and shapes
        (``weight_ih_l0``, ``weight_hh_l0_reverse``, ``bias_ih_l1``, ...), the gates are
        stacked in PyTorch's order (i, f, g, o for LSTM, r, z, n for GRU, with the reset
        gate applied to ``W_hn h + b_hn``), and a call returns ``output, (h_n, c_n)`` for
        LSTM and ``output, h_n`` for GRU and RNN, with ``h0``/``(h0, c0)`` optional and
        zero by default. So weights copied from PyTorch give PyTorch's outputs for every
        combination of ``batch_first``, ``bidirectional``, ``num_layers`` and ``bias``.
        ``nonlinearity`` exists in MindSpore's RNN too but only by keyword (its constructor
        is ``RNN(*args, **kwargs)``, and the fourth positional parameter is ``has_bias``),
        so a positional ``nonlinearity`` is passed as ``nonlinearity=``. ``dropout``
        between stacked layers means the same in both (``nn.Dropout`` on the outputs of
        every layer but the last, only in training mode), but MindSpore rejects an int, so
        ``dropout=0`` is written ``0.0`` and a non-literal value is wrapped in
        ``float()``; a layer with a non-zero dropout built outside a Module gets
        ``.set_train()`` (MOD003) since PyTorch layers start in training mode. Both
        frameworks draw every weight and bias from U(-1/sqrt(hidden_size),
        1/sqrt(hidden_size)); MindSpore draws them with NumPy's global generator, which
        ``mindspore.set_seed`` seeds too. ``proj_size`` (LSTM with projections) has no
        MindSpore counterpart and is flagged, ``device`` is dropped (DEV003) and ``dtype``
        is passed on (MindSpore takes ``dtype=mindspore.float64`` as well). Two inputs
        PyTorch accepts raise in MindSpore and cannot be seen when porting the
        constructor: an unbatched 2-D input ``(L, input_size)`` (add a batch axis with
        ``x.unsqueeze(1)``, or ``unsqueeze(0)`` with ``batch_first``) and an initial LSTM
        state given as a list instead of a tuple. MindSpore's extra ``seq_length`` input
        plays the role of PyTorch's packed sequences.
    """,
    seed=SEED,
    reference=DIFF + "LSTM.md; " + DIFF + "GRU.md; " + DIFF + "RNN.md",
    installed_note="""
        Verified on 2.10 (CPU): parameter names, shapes and gate order equal PyTorch's, so
        copying by name reproduces PyTorch to 1e-6 for LSTM/GRU/RNN with batch_first,
        bidirectional, 2-3 layers, bias=False and nonlinearity='relu'. Not in the r2.4.10
        pages: ``nn.RNN(3, 4, 1, 'relu')`` raises TypeError (has_bias must be bool);
        ``dropout=0`` raises TypeError (must be float); ``proj_size`` raises TypeError;
        unbatched 2-D input raises ValueError ("x_shape.size() must be equal to 3" for
        LSTM, a MatMul rank error for GRU/RNN); ``hx`` as a list raises TypeError. A
        non-zero dropout acts only after ``set_train()`` (Cells start in inference mode).
        ``dtype=mindspore.float64`` builds and runs a float64 layer. Precision: on CPU,
        LSTM runs the fused ``ops.LSTM`` kernel and matches PyTorch to float rounding, but
        GRU, RNN and the cells run MindSpore's own float32 ``tanh``, which on 2.10 is off by
        up to 1e-4 for inputs of magnitude 4 to 5 (``tanh(5.0)`` gives 1.0000098); with
        pre-activations that large the outputs differ from PyTorch by up to about 1e-4.
    """,
    example="""
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        lstm = nn.LSTM(3, 4, 2, batch_first=True, bidirectional=True)
        x = torch.randn(2, 5, 3)
        output, (h_n, c_n) = lstm(x)
    """,
)

register(
    "RNN002",
    "LSTM/GRU/RNN attributes: bias is has_bias, input_size is read from a weight",
    group=GROUP,
    why="""
        MindSpore's recurrent layers keep ``hidden_size``, ``num_layers``, ``batch_first``,
        ``bidirectional`` and ``dropout`` under PyTorch's names and expose the parameters
        as attributes of the same names (``lstm.weight_ih_l0``), but the bias flag is
        ``has_bias``, and ``nn.LSTM/GRU/RNN`` do not store ``input_size`` at all: it is
        read from the first input-to-hidden weight, ``w_ih_list[0].shape[1]`` (the cells,
        ``nn.LSTMCell`` etc., do store ``input_size``). ``proj_size`` does not exist in
        MindSpore (RNN001); reading it is flagged.
    """,
    seed=SEED,
    reference=DIFF + "LSTM.md",
    installed_note="""
        Verified on 2.10: ``nn.LSTM(3, 4)`` has no ``input_size``, ``bias`` or
        ``proj_size`` attribute; ``has_bias``, ``hidden_size``, ``num_layers``,
        ``batch_first``, ``bidirectional``, ``dropout`` and ``weight_hh_l1_reverse`` are
        readable.
    """,
    example="""
        import torch.nn as nn
        gru = nn.GRU(6, 4, bias=False)
        n_in = gru.input_size
        has_bias = gru.bias
        w = gru.weight_ih_l0
    """,
)

register(
    "RNN003",
    "LSTMCell, GRUCell and RNNCell keep their arguments; hx must be passed",
    group=GROUP,
    why="""
        ``torch.nn.LSTMCell/GRUCell/RNNCell`` become ``mindspore.nn.LSTMCell/GRUCell/
        RNNCell`` with ``bias`` renamed ``has_bias`` (``nonlinearity`` stays the fourth
        parameter of RNNCell, as in PyTorch). The parameters are ``weight_ih``,
        ``weight_hh``, ``bias_ih`` and ``bias_hh`` with PyTorch's shapes and gate order, and
        the initial values come from the same U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))
        (drawn with MindSpore's initializer). Two call forms PyTorch accepts raise in
        MindSpore and are not visible when porting the constructor: leaving out the state
        (``cell(x)``, which PyTorch starts from zeros; pass ``hx`` explicitly, e.g.
        ``ops.zeros((batch, hidden_size))``) and unbatched 1-D input.
    """,
    seed=SEED,
    reference=DIFF + "LSTMCell.md; " + DIFF + "GRUCell.md; " + DIFF + "RNNCell.md",
    installed_note="""
        Verified on 2.10: ``construct(x, hx)`` has no default for ``hx`` (TypeError when
        left out); 1-D input raises a MatMul rank error; with copied weights the outputs
        equal PyTorch's to 1e-6.
    """,
    example="""
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        cell = nn.LSTMCell(3, 4)
        x = torch.randn(2, 3)
        h0 = torch.zeros(2, 4)
        c0 = torch.zeros(2, 4)
        h1, c1 = cell(x, (h0, c0))
    """,
)

register(
    "RNN004",
    "flatten_parameters() is removed",
    group=GROUP,
    why="""
        ``lstm.flatten_parameters()`` compacts the weights into one cuDNN buffer and is
        often called at the start of ``forward``. MindSpore's recurrent layers have no such
        method (they pass the weights to the kernel on every call), so a call made as a
        statement is removed (``pass`` where it was the only statement of a block). A call
        whose value is used is flagged.
    """,
    seed=SEED,
    reference=DIFF + "LSTM.md",
    installed_note="Verified on 2.10: nn.LSTM/GRU/RNN have no flatten_parameters attribute.",
    example="""
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        gru = nn.GRU(3, 4)
        gru.flatten_parameters()
        out, h_n = gru(torch.randn(5, 2, 3))
    """,
)

register(
    "RNN005",
    "An LSTM's (h, c) state given as a list becomes a tuple",
    group=GROUP,
    why="""
        PyTorch's LSTM unpacks its state ``hx`` as any pair, so code that detaches the
        state for truncated backpropagation often hands it back as a list
        (``[s.detach() for s in states]``). MindSpore's ``nn.LSTM`` checks the type and
        raises a TypeError for anything but a tuple. A list written in the call becomes a
        tuple; any other state expression is converted with ``tuple(...)`` (a name that may
        be None stays None: ``None if h is None else tuple(h)``). GRU and RNN take one
        tensor and are left as they are.
    """,
    seed=SEED,
    reference=DIFF + "LSTM.md",
    installed_note="""
        Verified on 2.10: nn.LSTM(x, [h, c]) raises "For 'LSTM', the 'hx' must be Tuple, but
        got List".
    """,
    example="""
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        lstm = nn.LSTM(3, 4, batch_first=True)
        x = torch.randn(2, 5, 3)
        states = (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))
        for step in range(2):
            states = [s.detach() for s in states]
            out, states = lstm(x, states)
        h, c = states
    """,
)


# ----------------------------------------------------------------------------- RNN001


def _dropout(site, arg):
    """MindSpore's recurrent layers accept a float dropout only."""
    value = site.literal(arg.value, _NOT_LITERAL)
    text = site.code(arg.value).strip()
    if isinstance(value, bool) or value is _NOT_LITERAL or not isinstance(value, (int, float)):
        if isinstance(arg.value, cst.Call) and site.code(arg.value.func).strip() == "float":
            return arg.value
        site.changes.append(f"dropout {text} -> float({text})")
        return parse_expression(f"float({text})")
    if isinstance(value, int):
        site.changes.append(f"dropout {text} -> {float(value)!r}")
        return parse_expression(repr(float(value)))
    return arg.value


def _not_zero(site, arg) -> bool:
    return site.literal(arg.value, default=_NOT_LITERAL) not in (0, None)


def _dropout_active(site) -> bool:
    arg = site.arg("dropout")
    if arg is None:
        return False
    value = site.literal(arg.value, _NOT_LITERAL)
    if isinstance(arg.value, cst.Call) and site.code(arg.value.func).strip() == "float":
        value = site.literal(arg.value.args[0].value, _NOT_LITERAL) if arg.value.args else _NOT_LITERAL
    return value is _NOT_LITERAL or bool(value)


def _layer(site):
    target = site.entry.target
    active = _dropout_active(site)
    if active and _between_layers(site):
        _remember_dropout(site)
    new = site.apply(func=site.ref(target))
    site.edit("RNN001", new, detail=site.describe(f"{site.api} -> {target}"))
    if active:  # dropout between layers only acts in training mode, where PyTorch starts
        return train_mode(site, new)
    return new


_LAYER_SIG = ("input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
              "bidirectional", "proj_size", "device", "dtype")
_LAYER_MS_SIG = ("input_size", "hidden_size", "num_layers", "has_bias", "batch_first",
                 "dropout", "bidirectional", "dtype")
_PROJ = (_not_zero, "MindSpore's LSTM has no projection (proj_size); h_n and the output "
         "would have hidden_size features instead of proj_size")

for _name in LAYERS:
    _sig = _LAYER_SIG
    if _name == "RNN":  # nonlinearity is RNN's fourth positional parameter in PyTorch
        _sig = _sig[:3] + ("nonlinearity",) + _sig[3:7] + _sig[8:]
    # parameter names are PyTorch's on both sides (weight_ih_l0, bias_hh_l1_reverse...):
    # no ``params`` map is needed
    api(f"torch.nn.{_name}", f"mindspore.nn.{_name}", rule="RNN001", sig=_sig,
        ms_sig=_LAYER_MS_SIG, rename={"bias": "has_bias"}, values={"dropout": _dropout},
        drop={"device": DEVICE_RULE},
        unsupported={"proj_size": _PROJ} if _name == "LSTM" else {},
        handler=_layer, returns=f"module:torch.nn.{_name}")


# ----------------------------------------------------------------------------- RNN003


def _cell(site):
    target = site.entry.target
    new = site.apply(func=site.ref(target))
    site.edit("RNN003", new, detail=site.describe(f"{site.api} -> {target}"))
    return new


for _name in CELLS:
    _sig = ("input_size", "hidden_size", "bias") + (("nonlinearity",) if _name == "RNNCell" else ()) + (
        "device", "dtype")
    _ms_sig = ("input_size", "hidden_size", "has_bias") + (
        ("nonlinearity",) if _name == "RNNCell" else ()) + ("dtype",)
    api(f"torch.nn.{_name}", f"mindspore.nn.{_name}", rule="RNN003", sig=_sig, ms_sig=_ms_sig,
        rename={"bias": "has_bias"}, drop={"device": DEVICE_RULE}, handler=_cell,
        returns=f"module:torch.nn.{_name}")


# ----------------------------------------------------------------------------- RNN002

_RECURRENT_KINDS = tuple(f"module:torch.nn.{n}" for n in LAYERS + CELLS)


def _is_layer(site) -> bool:
    """A multi-layer LSTM/GRU/RNN (not one of the cells)."""
    kind = site.kind_of(site.receiver_original) or ""
    return kind in tuple(f"module:torch.nn.{n}" for n in LAYERS)


def _input_size(site):
    if not _is_layer(site):
        return None  # the cells store input_size
    new = cst.Subscript(
        value=cst.Attribute(
            value=cst.Subscript(value=cst.Attribute(value=site.receiver, attr=cst.Name("w_ih_list")),
                                slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))]),
            attr=cst.Name("shape")),
        slice=[cst.SubscriptElement(cst.Index(cst.Integer("1")))])
    site.edit("RNN002", new, detail=".input_size -> .w_ih_list[0].shape[1] (not stored by MindSpore)")
    return new


def _proj_size(site):
    site.finding("RNN002", "MindSpore's LSTM has no proj_size (no projections); it is 0 for "
                 "every ported layer", comment="proj_size does not exist in MindSpore")


for _kind in _RECURRENT_KINDS:
    member("bias", "RNN002", receiver=_kind, target="has_bias")
    member("input_size", "RNN002", receiver=_kind, handler=_input_size)
member("proj_size", "RNN002", receiver="module:torch.nn.LSTM", handler=_proj_size)


# ----------------------------------------------------------------------------- RNN004


def _flatten_parameters(site):
    if not site.is_statement:
        site.finding("RNN004", "MindSpore's recurrent layers have no flatten_parameters(); "
                     "PyTorch's returns None", comment="flatten_parameters() does not exist in MindSpore")
        return None
    alone = len(site.blocks[-1][0]) == 1 if site.blocks else True

    def drop(line):
        if len(line.body) > 1:
            body = [s for s in line.body if not (isinstance(s, cst.Expr) and _is_flatten_call(s.value))]
            if body:
                return line.with_changes(body=body)
        if alone:
            return line.with_changes(body=[cst.Pass()])
        return cst.RemovalSentinel.REMOVE

    if not site.replace_line(drop):
        return None
    site.edit("RNN004", None, detail=".flatten_parameters() removed")
    return site.updated


def _is_flatten_call(node) -> bool:
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "flatten_parameters" and not node.args)


# no other PyTorch object has this method: any module receiver (self.rnn in forward, whose
# kind may be unknown) is a recurrent layer
method("flatten_parameters", "RNN004", receiver="module", unambiguous=True,
       handler=_flatten_parameters, returns=None)


# ----------------------------------------------------------------------------- RNN005


def _state_as_tuple(site):
    """``lstm(x, states)`` -> ``lstm(x, None if states is None else tuple(states))``."""
    args = list(site.updated.args)
    at = next((k for k, a in enumerate(args) if a.keyword is not None and a.keyword.value == "hx"),
              1 if len(args) > 1 and args[1].keyword is None else None)
    if at is None or any(a.star for a in args):
        return None
    value = args[at].value
    if isinstance(value, cst.Tuple) or (isinstance(value, cst.Name) and value.value == "None"):
        return None
    if isinstance(value, cst.List):
        new_value = cst.Tuple(elements=value.elements, lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    else:
        text = site.code(value).strip()
        simple = isinstance(value, (cst.Name, cst.Attribute))
        new_value = parse_expression(f"None if {text} is None else tuple({text})" if simple else f"tuple({text})")
    args[at] = args[at].with_changes(value=new_value)
    new = site.updated.with_changes(args=args)
    site.edit("RNN005", new, detail=f"hx {site.code(value).strip()} -> {site.code(new_value).strip()}")
    return new


method(MODULE_CALL, "RNN005", receiver="module:torch.nn.LSTM", handler=_state_as_tuple, returns=None)


# ----------------------------------------------------------------------------- RNN006

register(
    "RNN006",
    "Dropout between recurrent layers draws masks parity cannot give MindSpore",
    group=GROUP,
    finding_only=True,
    why="""
        ``nn.LSTM(..., num_layers=2, dropout=0.5)`` drops part of each layer's output
        before the next layer, in training mode. Both frameworks do it, with the same
        probability, so the port is right; but PyTorch draws those masks inside its fused
        RNN kernel, where ``%%ms_parity`` cannot see them (it replays the masks of
        ``nn.Dropout`` and ``F.dropout``), so the MindSpore side drops other elements: the
        losses, outputs and gradients of every training step differ, by as much as the
        dropout changes them. Each statement that trains such a model (a loop calling
        ``backward()``, or a call of a function that does) is flagged, so the difference
        parity shows there is not taken for a porting error. To compare the training
        itself, build the model with ``dropout=0`` for the parity run. Parity still
        steps the MindSpore optimizer with PyTorch's gradients, so the weights stay
        together.
    """,
    seed=SEED,
    reference=DIFF + "LSTM.md",
    example="""
        import torch
        import torch.nn as nn
        class Tagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(3, 4, num_layers=2, dropout=0.5, batch_first=True)
                self.fc = nn.Linear(4, 2)
            def forward(self, x):
                out, _ = self.lstm(x)
                return self.fc(out[:, -1])
        model = Tagger()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(2, 5, 3), torch.tensor([0, 1])
        for step in range(2):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
    """,
)


def _between_layers(site) -> bool:
    """Has the layer more than one layer (else PyTorch's dropout does nothing)?"""
    arg = site.arg("num_layers")
    if arg is None:
        return False
    value = site.literal(arg.value, _NOT_LITERAL)
    return value is _NOT_LITERAL or (isinstance(value, int) and value > 1)


def _dropout_owners(site) -> set:
    """Names (classes, and names bound to them or to the layer) whose recurrent layers
    drop between layers, for this cell and the later ones."""
    return site.session_memory("rnn_dropout").setdefault("owners", set())


def _remember_dropout(site) -> None:
    owners = _dropout_owners(site)
    if site.classes:
        owners.add(site.classes[-1].name)
        return
    stmt = site.statement
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if isinstance(small, cst.Assign):
                owners.update(t.target.value for t in small.targets if isinstance(t.target, cst.Name))


@statement_hook("RNN006", cst.SimpleStatementLine)
def _recurrent_picked_by_name(ctx, original, updated):
    """``getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)``: an LSTM, GRU or RNN
    chosen at run time (flagged GEN005) that may drop between layers: remembered as such
    (num_layers and dropout not literally 1 and 0)."""
    if "getattr(" not in _code(original):
        return updated
    for n in descendants(original):
        if not (type(n) is cst.Call and picked_by_name(ctx, n.func)
                and ctx.resolve(n.func.args[0].value) == "torch.nn"):
            continue
        args = {a.keyword.value if a.keyword else k: a.value for k, a in enumerate(n.args)}
        drop, layers = args.get("dropout"), args.get("num_layers", args.get(2))
        if drop is None or ctx.literal(drop, _NOT_LITERAL) in (0, 0.0) or layers is None \
                or ctx.literal(layers, _NOT_LITERAL) in (0, 1):
            continue
        _remember_dropout(ctx)
    return updated


def _words(node) -> set:
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", _code(node)))


@statement_hook("RNN006", *STATEMENT_TYPES)
def _trains_with_rnn_dropout(ctx, original, updated):
    """Flag each top-level statement that trains a model whose recurrent layer drops
    between layers; remember the names bound to such models."""
    if not ctx.torch_in_scope or ctx.depth != 0 or isinstance(original, (cst.FunctionDef, cst.ClassDef)):
        return updated
    owners = _dropout_owners(ctx)
    if not owners:
        return updated
    # net = CharRNN(...): net has it too (also in a branch: ``if args.model == ...: ... else:
    # model = RNNModel(...)``)
    for small in (descendants(original) if not isinstance(original, cst.SimpleStatementLine) else original.body):
        if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call) and (
                _words(small.value.func) & owners):
            owners.update(t.target.value for t in small.targets if isinstance(t.target, cst.Name))
    code = _code(original)
    trains = ".backward(" in code
    read = _words(original)
    for n in descendants(original):
        if type(n) is cst.Call and type(n.func) is cst.Name:
            fdef = ctx.function_definition(n.func.value)
            if fdef is not None and ".backward(" in _code(fdef):
                trains = True
                read |= _words(fdef)
    if not trains or not read & owners:
        return updated
    which = ", ".join(sorted(read & owners))
    ctx.finding("RNN006", f"trains {which}, whose recurrent layer drops between layers (dropout with "
                "num_layers > 1): PyTorch draws those masks inside its RNN kernel, out of parity's reach, so "
                "MindSpore drops other elements and this statement's losses and gradients differ; build it "
                "with dropout=0 to compare the training", node=original, api="torch.nn.LSTM",
                comment="recurrent dropout masks differ from PyTorch's")
    return updated
