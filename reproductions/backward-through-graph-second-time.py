"""A small RNN is trained on consecutive chunks of a sequence and carries its hidden state from one batch to the
next (out, h = rnn(x, h)). The first loss.backward() frees the saved tensors of the first chunk's graph; the second
batch's loss reaches that graph through h, and backward() fails in SavedVariable::unpack
(torch/csrc/autograd/saved_variable.cpp) with "Trying to backward through the graph a second time (or directly access
saved tensors after they have already been freed)...". Demonstrations: detaching the carried state (three batches
train, parameters change, the graph of each step stays one chunk long); two losses that share a forward pass
summed into one backward (the gradients equal those of two retained passes); and retain_graph=True where a second
pass over the same graph is intended (shown to raise without it, from torch). The record's exampleFix and
validationCode run from its text.
"""

NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "detach_state", 2: "sum_losses", 3: "retain_graph_for_second_pass"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {
    "no-state-yet": "valid_no_state",
    "detached-rnn-state": "valid_detached_state",
    "lstm-state-tuple": "valid_lstm_state",
    "zeros-initial-state": "valid_zeros_state",
}
CODE_NAMES = {"exampleFix": ["rnn", "head", "h", "batches"], "validationCode": ["h"]}
KEEP = ["rnn", "head"]
WORDINGS = [
    {"text": "Trying to backward through the graph a second time (or directly access saved tensors after they have "
             "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
             "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
             "if you need to access saved tensors after calling backward.", "source": "torch==1.13.1", "match": "pattern"},
    {"text": "Trying to backward through the graph a second time, but the saved intermediate results have already "
             "been freed. Specify retain_graph=True when calling backward the first time.",
     "source": "3d-hand-shape/hand-graph-cnn#55", "match": "pattern"},
    {"text": "RuntimeError: Trying to backward through the graph a second time, but the buffers have already been "
             "freed. Specify retain_graph=True when calling backward the first time.",
     "source": "GBLin5566/toward-controlled-generation-of-text-pytorch#8", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "upstream-copy",
              "commit": "42bb714738bbd8ed3aaa0f0c61606b7a366ba934", "offset": 0}

import math

import errkb_record as record

import torch
import torch.nn as nn

MESSAGE = "Trying to backward through the graph a second time"


def _model():
    torch.manual_seed(0)
    rnn = nn.RNN(4, 8, batch_first=True)
    head = nn.Linear(8, 1)
    opt = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.1)
    return rnn, head, opt


def _batches(n=3):
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(2, 5, 4, generator=g), torch.randn(2, 5, 1, generator=g)) for _ in range(n)]


def trigger():
    rnn, head, opt = _model()
    h = torch.zeros(1, 2, 8)
    for x, y in _batches():
        out, h = rnn(x, h)  # h carries the previous batch's graph
        loss = ((head(out) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()  # second batch: RuntimeError from SavedVariable::unpack
        opt.step()


def _train(rnn, head, opt, detach):
    before = [p.detach().clone() for p in rnn.parameters()]
    h = torch.zeros(1, 2, 8)
    for x, y in _batches():
        if detach:
            h = h.detach()
        out, h = rnn(x, h)
        loss = ((head(out) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        assert math.isfinite(loss.item())
    assert any(not torch.equal(a, b) for a, b in zip(before, rnn.parameters())), "no parameter changed"


def detach_state():
    """Solution 1: h = h.detach() before each batch; three batches train."""
    _train(*_model(), detach=True)


def sum_losses():
    """Solution 2: two losses on one forward pass, one backward of their sum; same gradients as two retained passes."""
    rnn, head, _ = _model()
    x, y = _batches(1)[0]
    out, _ = rnn(x)
    loss_a = ((head(out) - y) ** 2).mean()
    loss_b = out.abs().mean()
    (loss_a + loss_b).backward()
    summed = [p.grad.clone() for p in rnn.parameters()]
    rnn.zero_grad()
    out, _ = rnn(x)
    ((head(out) - y) ** 2).mean().backward(retain_graph=True)
    out.abs().mean().backward()
    assert all(torch.allclose(a, p.grad, atol=1e-6) for a, p in zip(summed, rnn.parameters()))


def retain_graph_for_second_pass():
    """Solution 3: a deliberate second pass (two losses, two optimizers) needs retain_graph=True on the first call."""
    def run(retain):
        rnn, head, _ = _model()
        opt_rnn = torch.optim.SGD(rnn.parameters(), lr=0.1)
        opt_head = torch.optim.SGD(head.parameters(), lr=0.1)
        x, y = _batches(1)[0]
        out, _ = rnn(x)
        pred = head(out)
        loss_head = ((pred - y) ** 2).mean()
        loss_rnn = loss_head + 0.1 * out.pow(2).mean()
        opt_head.zero_grad()
        loss_head.backward(retain_graph=retain)
        head_grads = [p.grad.clone() for p in head.parameters()]
        opt_rnn.zero_grad()
        loss_rnn.backward()  # reaches the shared part of the graph again
        for p, g in zip(head.parameters(), head_grads):
            p.grad = g
        opt_head.step()
        opt_rnn.step()
        assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in rnn.parameters())

    try:
        run(retain=False)
    except RuntimeError as e:
        assert MESSAGE in str(e), e
    else:
        raise AssertionError("the second pass did not fail without retain_graph")
    run(retain=True)


def example_fix():
    """The "after" part on the three situations users carry state in: a zeros start, h=None, an LSTM's (h, c)."""
    rnn, head, opt = _model()
    names = record.run("exampleFix", {"rnn": rnn, "head": head, "h": torch.zeros(1, 2, 8), "batches": _batches()},
                       section="after")
    assert names["h"].shape == (1, 2, 8) and math.isfinite(names["loss"].item())
    assert names["rnn"] is rnn and names["head"] is head
    assert all(p.grad is not None for p in rnn.parameters())
    names = record.run("exampleFix", {"rnn": rnn, "head": head, "h": None, "batches": _batches()}, section="after")
    assert names["h"].shape == (1, 2, 8)
    torch.manual_seed(0)
    lstm = nn.LSTM(4, 8, batch_first=True)
    names = record.run("exampleFix", {"rnn": lstm, "head": head, "h": None, "batches": _batches()}, section="after")
    h, c = names["h"]
    assert h.shape == c.shape == (1, 2, 8) and all(p.grad is not None for p in lstm.parameters())


def guard():
    rnn, _, _ = _model()
    x, _ = _batches(1)[0]
    _, h = rnn(x, torch.zeros(1, 2, 8))
    assert not record.check("validationCode", {"h": h})  # the trigger's carried state
    assert record.check("validationCode", {"h": h.detach()})
    torch.manual_seed(0)
    _, state = nn.LSTM(4, 8, batch_first=True)(x)
    assert not record.check("validationCode", {"h": state})  # an LSTM's attached (h, c)


def valid_no_state():
    """Before the first batch there is no state: rnn(x, None) starts from zeros."""
    rnn, _, _ = _model()
    rnn(_batches(1)[0][0], None)
    return {"h": None}


def valid_detached_state():
    rnn, _, _ = _model()
    _, h = rnn(_batches(1)[0][0])
    return {"h": h.detach()}


def valid_lstm_state():
    torch.manual_seed(0)
    lstm = nn.LSTM(4, 8, batch_first=True)
    _, (h, c) = lstm(_batches(1)[0][0])
    state = (h.detach(), c.detach())
    lstm(_batches(1)[0][0], state)
    return {"h": state}


def valid_zeros_state():
    return {"h": torch.zeros(1, 2, 8)}
