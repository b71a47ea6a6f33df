"""An RNN tagger configured with crf=True is trained on two devices: HanLP's TorchComponent.fit moves the
model with to(devices), which wraps it in nn.DataParallel (parallelize) when given several devices, and then
asks Tagger.build_criterion for the loss (torch_component.py:281). With crf=True the loss is the model's CRF,
which build_criterion cannot reach through the wrapper, so it refuses: ValueError('DataParallel not supported
when CRF is used') at hanlp/components/taggers/tagger.py:37.

trigger() calls the real RNNTagger.fit on a tiny in-memory data set (a vocabulary built from it, an 8-wide
embedding trained from scratch: nothing is downloaded) with the record's exampleFix "before" configuration,
{"crf": true, "devices": [0, 1]}. With 2+ CUDA devices the ids are used as they are; otherwise each id is mapped
to the CPU device: fit takes the same multi-device branch and wraps the model in nn.DataParallel, which is a
pass-through without CUDA but still a DataParallel, so the same check fires. The demonstrations train on one
device (solution 1: the default devices=None; exampleFix: its "after" configuration) and with crf=False on the
two devices (solution 2), each asserting what training means here: the model is (or is not) a DataParallel,
the loss comes from the CRF (or CrossEntropyLoss), it is finite and a step moves the parameters. The record's
validationCode flags the "before" configuration and passes the "after" one.
"""

NEEDS = {"packages": {"hanlp": "==2.1.5", "torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 120}
SOLUTIONS = {1: "single_device", 2: "crf_off"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"validationCode": ["config"]}
VALID = {"one-device-crf": "valid_one_device", "several-devices-no-crf": "valid_no_crf"}
WORDINGS = [{"text": "DataParallel not supported when CRF is used", "source": "hanlp==2.1.5", "match": "pattern"}]
PROVENANCE = {"checked": "installed", "dist": "hanlp", "version": "2.1.5"}

import math
import tempfile

import errkb_record as record

import torch
from hanlp.components.taggers.rnn_tagger import RNNTagger

SENTENCES = [
    {"token": ["HanLP", "tags", "words"], "tag": ["B-ORG", "O", "O"]},
    {"token": ["CRF", "layers", "decode", "tag", "paths"], "tag": ["B-MISC", "O", "O", "O", "O"]},
    {"token": ["tiny", "data"], "tag": ["O", "O"]},
]
# RNNTagger pads each DataParallel replica's output only to that replica's longest sentence: on real GPUs the
# gather needs equal lengths (solution 2's caveat), so the crf=False demonstration on GPUs uses these.
SAME_LENGTH = [
    {"token": ["HanLP", "tags", "words"], "tag": ["B-ORG", "O", "O"]},
    {"token": ["CRF", "decodes", "paths"], "tag": ["B-MISC", "O", "O"]},
    {"token": ["tiny", "data", "set"], "tag": ["O", "O", "O"]},
    {"token": ["two", "devices", "here"], "tag": ["O", "O", "O"]},
]
HPARAMS = dict(batch_size=2, epochs=1, embed=8, rnn_hidden=8, drop=0.0, anneal_factor=None, seed=1)


def _devices(ids):
    """The config's device ids on this machine: real CUDA ids when they exist, else one CPU device per id."""
    if torch.cuda.device_count() > max(ids):
        return list(ids), f"cuda: devices={ids}"
    return [torch.device("cpu")] * len(ids), f"cpu: devices {ids} mapped to {['cpu'] * len(ids)}"


def _fit(devices, crf, data=SENTENCES):
    tagger = RNNTagger()
    with tempfile.TemporaryDirectory() as save_dir:
        tagger.fit(data, data, save_dir, devices=devices, crf=crf, **HPARAMS)
    return tagger


def _one_step(tagger, data=SENTENCES):
    """One more training step through HanLP's own loss path; returns (criterion, loss, tensors changed)."""
    criterion = tagger.build_criterion(**tagger.config)
    optimizer = tagger.build_optimizer(**tagger.config)
    batch = next(iter(tagger.build_dataloader(data, batch_size=len(data), shuffle=False, device=next(tagger.model.parameters()).device)))
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
    return criterion, loss.item(), changed


def trigger():
    config = record.config("exampleFix", "before")
    devices, variant = _devices(config["devices"])
    _fit(devices, crf=config["crf"])  # ValueError from Tagger.build_criterion
    return variant


def single_device():
    """Solution 1: the default devices=None gives one device (one GPU, or the CPU without one): no DataParallel."""
    tagger = _fit(None, crf=True)
    assert not isinstance(tagger.model, torch.nn.DataParallel)
    assert len(tagger.devices) == 1, tagger.devices
    criterion, loss, changed = _one_step(tagger)
    assert criterion is tagger.model.crf, "with crf=True the criterion is the model's CRF"
    return f"devices=None chose {tagger.devices[0]}; one CRF training step (loss {loss:.2f}, {changed} tensors updated)"


def crf_off():
    """Solution 2: crf=False on the same two devices: the DataParallel model trains with CrossEntropyLoss."""
    devices, variant = _devices([0, 1])
    data = SAME_LENGTH if devices[0] != torch.device("cpu") else SENTENCES
    tagger = _fit(devices, crf=False, data=data)
    assert isinstance(tagger.model, torch.nn.DataParallel)
    criterion, loss, changed = _one_step(tagger, data)
    assert isinstance(criterion, torch.nn.CrossEntropyLoss)
    return f"{variant}, crf=False: DataParallel model trained (loss {loss:.2f}, {changed} tensors updated)"


def example_fix():
    """The exampleFix's "after" configuration, trained as fit() is given it."""
    config = record.config("exampleFix", "after")
    devices, variant = _devices(config["devices"])
    tagger = _fit(devices, crf=config["crf"])
    assert not isinstance(tagger.model, torch.nn.DataParallel)
    criterion, loss, changed = _one_step(tagger)
    assert criterion is tagger.model.crf
    return f"{variant}: one CRF training step (loss {loss:.2f}, {changed} tensors updated)"


def guard():
    """validationCode flags the trigger's configuration and passes the fixed one."""
    before, after = record.config("exampleFix", "before"), record.config("exampleFix", "after")
    assert not record.check("validationCode", {"config": dict(HPARAMS, **before)})
    assert record.check("validationCode", {"config": dict(HPARAMS, **after)})


def valid_one_device():
    """A CRF on one device, in every form fit accepts: one id in a list, a bare id, the CPU (-1), the default None.
    (Solution 1's demonstration trains devices=[0] and the exampleFix its after configuration.)"""
    return [{"config": dict(HPARAMS, crf=True, devices=devices)} for devices in ([0], 0, -1, None)]


def valid_no_crf():
    """Several devices without a CRF (solution 2's demonstration trains it under DataParallel)."""
    return {"config": dict(HPARAMS, crf=False, devices=[0, 1])}
