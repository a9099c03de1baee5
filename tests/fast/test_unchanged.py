"""Code with nothing to port -- MindSpore already, or plain Python -- comes back byte for
byte, with no edits and no findings."""

import pytest

from tests.fast.codemod import assert_unchanged

MINDSPORE_CELLS = {
    "cell_class": '''
        import mindspore
        import mindspore.nn as nn
        import mindspore.ops as ops

        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.fc = nn.Dense(4, 2)
                self.drop = nn.Dropout(p=0.5)

            def construct(self, x):
                return self.drop(ops.relu(self.fc(x)))

        net = Net()
        x = mindspore.Tensor([[1.0, 2.0, 3.0, 4.0]])
        y = net(x).asnumpy()
    ''',
    "value_and_grad_loop": '''
        import mindspore
        from mindspore import nn, ops

        model = nn.Dense(3, 1)
        loss_fn = nn.MSELoss()
        optimizer = nn.SGD(model.trainable_params(), learning_rate=0.1)

        def forward_fn(x, y):
            return loss_fn(model(x), y)

        grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
        for step in range(3):
            loss, grads = grad_fn(X, Y)
            optimizer(grads)
    ''',
    "ops_calls": '''
        import mindspore
        from mindspore import ops
        a = ops.ones((2, 3), mindspore.float32)
        b = ops.cat([a, a], axis=1)
        c = ops.softmax(b, axis=-1)
        d = b.shape[0]
        mindspore.set_seed(0)
    ''',
    "dataset": '''
        import numpy as np
        import mindspore.dataset as ds
        data = ds.NumpySlicesDataset((np.arange(6.0),), shuffle=False).batch(2)
    ''',
    "grad": '''
        import mindspore
        x = mindspore.Tensor(2.0)
        def f(x):
            return x ** 3
        g = mindspore.grad(f)(x)
    ''',
    "checkpoint": '''
        import mindspore
        from mindspore import nn
        net = nn.Dense(2, 2)
        mindspore.save_checkpoint(net, "net.ckpt")
        params = mindspore.load_checkpoint("net.ckpt")
        mindspore.load_param_into_net(net, params)
    ''',
}

PLAIN_CELLS = {
    "numpy": '''
        import numpy as np
        def f(x):
            return np.tanh(x).sum()
        values = [f(np.ones(3) * i) for i in range(4)]
        print(values)
    ''',
    "pandas_values_attribute": '''
        import pandas as pd
        df = pd.DataFrame()
        v = df.values
    ''',
    "assignments": "x = 1\ny = x + 1\n",
    "only_a_comment": "# nothing here\n",
    "empty": "",
}


@pytest.mark.parametrize("source", MINDSPORE_CELLS.values(), ids=MINDSPORE_CELLS.keys())
def test_mindspore_code_is_left_alone(source):
    assert_unchanged(source)


@pytest.mark.parametrize("source", PLAIN_CELLS.values(), ids=PLAIN_CELLS.keys())
def test_plain_python_is_left_alone(source):
    result = assert_unchanged(source)
    assert not result.changed


@pytest.mark.parametrize("source", MINDSPORE_CELLS.values(), ids=MINDSPORE_CELLS.keys())
def test_a_cell_without_torch_gets_a_note(source):
    result = assert_unchanged(source)
    assert result.notes == ["No PyTorch found in this cell: nothing to port."]
