"""Checkpoints (CKP, CEL006): torch.save/torch.load of state dicts become MindSpore checkpoints."""

from tests.fast.codemod import assert_ports


def test_save_state_dict_becomes_save_checkpoint():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 2)
            torch.save(model.state_dict(), path)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(3, 2)
            mindspore.save_checkpoint(model, path)
        """,
        edits={"CKP001", "IMP001", "LAY001"},
    )


def test_load_into_model_flags_strictness():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 2)
            model.load_state_dict(torch.load(path))
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(3, 2)
            mindspore.load_param_into_net(model, mindspore.load_checkpoint(path if path.endswith('.ckpt') else path + '.ckpt'), strict_load=True)  # msmagic: CEL006 mismatched keys are returned, not raised
        """,
        edits={"CEL006", "CKP002", "IMP001", "LAY001"},
        findings={"CEL006"},
    )


def test_load_non_strict_is_not_flagged():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(3, 2)
            result = model.load_state_dict(torch.load(path), strict=False)
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(3, 2)
            result = mindspore.load_param_into_net(model, mindspore.load_checkpoint(path if path.endswith('.ckpt') else path + '.ckpt'), strict_load=True)
        """,
        edits={"CEL006", "CKP002", "IMP001", "LAY001"},
    )


def test_literal_paths_get_the_ckpt_suffix():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            a = nn.Linear(2, 2)
            torch.save(a.state_dict(), 'weights.pth')
            state = torch.load('weights.pth')
        """,
        """
            import mindspore
            import mindspore.nn as nn
            a = nn.Dense(2, 2)
            mindspore.save_checkpoint(a, 'weights.pth.ckpt')
            state = mindspore.load_checkpoint('weights.pth.ckpt')
        """,
        edits={"CKP001", "CKP002", "IMP001", "LAY001"},
    )


def test_literal_ckpt_path_unchanged():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            kept = nn.Linear(2, 2)
            torch.save(kept.state_dict(), "kept.ckpt")
        """,
        """
            import mindspore
            import mindspore.nn as nn
            kept = nn.Dense(2, 2)
            mindspore.save_checkpoint(kept, "kept.ckpt")
        """,
        edits={"CKP001", "IMP001", "LAY001"},
    )


def test_load_map_location_dropped():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(2, 2)
            w = torch.load(path, map_location='cpu', weights_only=True)['weight']
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(2, 2)
            w = mindspore.load_checkpoint(path if path.endswith('.ckpt') else path + '.ckpt')['weight']
        """,
        edits={"CKP002", "IMP001", "LAY001"},
    )


def test_optimizer_state_saved_as_a_cell():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(2, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            torch.save(optimizer.state_dict(), path)
            optimizer.load_state_dict(torch.load(path))
            sd = optimizer.state_dict()
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(2, 1)
            optimizer = mindspore.nn.SGD(model.trainable_params(), learning_rate=0.01, momentum=0.9)
            mindspore.save_checkpoint(optimizer, path)
            mindspore.load_param_into_net(optimizer, mindspore.load_checkpoint(path if path.endswith('.ckpt') else path + '.ckpt'))
            sd = optimizer.parameters_dict()
        """,
        edits={"CKP002", "CKP003", "IMP001", "LAY001", "OPT001", "OPT002"},
    )


def test_experimental_optimizer_state_load_flags_its_rates():
    assert_ports(
        """
            import torch
            import torch.nn as nn
            model = nn.Linear(2, 1)
            optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
            optimizer.load_state_dict(torch.load(path))
        """,
        """
            import mindspore
            import mindspore.nn as nn
            model = nn.Dense(2, 1)
            optimizer = mindspore.experimental.optim.AdamW(model.trainable_params(), lr=0.01, weight_decay=0.0)
            mindspore.load_param_into_net(optimizer, mindspore.load_checkpoint(path if path.endswith('.ckpt') else path + '.ckpt'))  # msmagic: CKP003 learning rates are not restored; see rule CKP003
        """,
        edits={"CKP002", "CKP003", "IMP001", "LAY001", "OPT002", "OPT003"},
        findings={"CKP003"},
    )


def test_load_of_a_pickled_object_is_flagged():
    """``weights_only=False`` is what loading a whole module (``torch.save(model, f)``)
    needs since PyTorch 2.6: a MindSpore Cell cannot be pickled and a checkpoint holds
    parameters only, so the load is flagged whether it reads a path or an open file."""
    assert_ports(
        """
            import torch
            net2 = torch.load('net.pkl', weights_only=False)
            with open(path, 'rb') as f:
                model = torch.load(f, weights_only=False)
        """,
        """
            import mindspore
            import pickle
            net2 = mindspore.load_checkpoint('net.pkl.ckpt')  # msmagic: CKP001 weights_only=False: a whole module cannot be loaded in MindSpore
            with open(path, 'rb') as f:
                model = pickle.load(f)  # msmagic: CKP001 weights_only=False: a whole module cannot be loaded in MindSpore
        """,
        edits={"CKP002", "CKP004", "IMP001"},
        findings={"CKP001"},
    )
