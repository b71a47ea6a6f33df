"""Planted: HanLP's CRF check, with every code field run from the record through errkb_record. The record's texts
decide: the good ones verify, a broken one (set by the test case) must fail its claim."""
NEEDS = {"packages": {"hanlp": ">=2.1"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "unwrapped"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard", "tryCatchPattern": "try_catch"}
VALID = {"unwrapped-model": "valid_unwrapped"}
CODE_NAMES = {"exampleFix": ["tagger", "model", "nn", "net"], "validationCode": ["tagger", "model", "nn"],
              "tryCatchPattern": ["tagger", "model", "nn"]}
KEEP = ["model"]

PROVENANCE = {"checked": "unverified", "why": "a planted record: its excerpt is not the point"}

import errkb_record as record
from hanlp.components.taggers.rnn_tagger import RNNTagger
from torch import nn


class WithCrf(nn.Module):
    def __init__(self):
        super().__init__()
        self.crf = nn.Identity()


def _situation():
    return {"tagger": RNNTagger(crf=True), "model": nn.DataParallel(WithCrf()), "nn": nn}


def trigger():
    names = _situation()
    names["tagger"].build_criterion(model=names["model"])


def unwrapped():
    names = _situation()
    assert isinstance(names["tagger"].build_criterion(model=names["model"].module), nn.Identity)


def example_fix():
    names = record.run("exampleFix", {**_situation(), "net": WithCrf()}, section="after")
    assert isinstance(names["criterion"], nn.Identity)


def guard():
    names = _situation()
    record.check("validationCode", names)
    record.check("validationCode", {**names, "model": names["model"].module})


def valid_unwrapped():
    return {**_situation(), "model": WithCrf()}


def try_catch():
    names = record.run("tryCatchPattern", _situation())
    assert isinstance(names["criterion"], nn.Identity)
