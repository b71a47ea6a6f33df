"""Planted: HanLP's own check raises the seed's error (the shortest way there); fix() trains nothing."""
NEEDS = {"packages": {"hanlp": ">=2.1"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "fix"}

from hanlp.components.taggers.rnn_tagger import RNNTagger
from torch import nn


def trigger():
    variant = "planted: build_criterion(DataParallel)"  # a raising trigger names its variant in a local
    RNNTagger(crf=True).build_criterion(model=nn.DataParallel(nn.Linear(1, 1)))
    return variant


def fix():
    assert isinstance(RNNTagger(crf=True).build_criterion(model=_WithCrf()), nn.Identity)
    return "planted fix"


class _WithCrf(nn.Module):
    def __init__(self):
        super().__init__()
        self.crf = nn.Identity()
