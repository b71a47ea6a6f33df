"""An RNN tagger configured with crf=True is trained on two devices: HanLP's TorchComponent.fit moves the
model with to(devices), which wraps it in nn.DataParallel (parallelize) when given several devices, and then
asks Tagger.build_criterion for the loss. With crf=True the loss is the model's CRF, which DataParallel would
split across replicas, so build_criterion refuses: ValueError('DataParallel not supported when CRF is used')
at hanlp/components/taggers/tagger.py:37.

trigger() calls the real RNNTagger.fit on a tiny in-memory data set (a vocabulary built from it, an 8-wide
embedding trained from scratch: nothing is downloaded). With 2+ CUDA devices it trains on devices=[0, 1]; with
one, devices=[0, 0]; on a CPU build it passes devices=[cpu, cpu]: fit takes the same multi-device branch and
wraps the model in nn.DataParallel, which is a pass-through on CPU but still a DataParallel, so the same check
fires. fix() trains on a single device (the documented fix), then runs one more step through HanLP's loss path
(build_criterion returns the CRF, compute_loss takes its negative log-likelihood) and asserts the loss is finite
and the parameters moved.
"""

NEEDS = {"packages": {"hanlp": "==2.1.5", "torch": ">=2.1"}, "cuda_devices": 0, "timeout_s": 120}

import math
import tempfile

import torch
from hanlp.components.taggers.rnn_tagger import RNNTagger

SENTENCES = [
    {"token": ["HanLP", "tags", "words"], "tag": ["B-ORG", "O", "O"]},
    {"token": ["CRF", "layers", "decode", "tag", "paths"], "tag": ["B-MISC", "O", "O", "O", "O"]},
    {"token": ["tiny", "data"], "tag": ["O", "O"]},
]
HPARAMS = dict(batch_size=2, epochs=1, embed=8, rnn_hidden=8, drop=0.0, crf=True, anneal_factor=None, seed=1)


def trigger():
    count = torch.cuda.device_count()
    if count >= 2:
        devices, variant = [0, 1], "cuda: fit(devices=[0, 1])"
    elif count == 1:
        devices, variant = [0, 0], "1 cuda device: fit(devices=[0, 0])"
    else:
        devices, variant = [torch.device("cpu")] * 2, "cpu: fit(devices=[cpu, cpu]), DataParallel pass-through"
    with tempfile.TemporaryDirectory() as save_dir:
        RNNTagger().fit(SENTENCES, SENTENCES, save_dir, devices=devices, **HPARAMS)
    return variant


def fix():
    devices, variant = ([0], "cuda: fit(devices=[0])") if torch.cuda.is_available() else (-1, "cpu: fit(devices=-1)")
    tagger = RNNTagger()
    with tempfile.TemporaryDirectory() as save_dir:
        tagger.fit(SENTENCES, SENTENCES, save_dir, devices=devices, **HPARAMS)
    assert not isinstance(tagger.model, torch.nn.DataParallel)

    criterion = tagger.build_criterion(**tagger.config)
    assert criterion is tagger.model.crf, "with crf=True the criterion is the model's CRF"
    optimizer = tagger.build_optimizer(**tagger.config)
    batch = next(iter(tagger.build_dataloader(SENTENCES, batch_size=len(SENTENCES), shuffle=False, device=tagger.device)))
    before = [p.detach().clone() for p in tagger.model.parameters()]
    tagger.model.train()
    optimizer.zero_grad()
    out, mask = tagger.feed_batch(batch)
    loss = tagger.compute_loss(criterion, out, batch["tag_id"], mask)
    loss.backward()
    optimizer.step()
    assert math.isfinite(loss.item()) and loss.item() > 0, loss
    changed = sum(not torch.equal(old, new) for old, new in zip(before, tagger.model.parameters()))
    assert changed, "no parameter changed after a training step"
    return f"{variant}, then one CRF training step (loss {loss.item():.2f}, {changed} tensors updated)"
