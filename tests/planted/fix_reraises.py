"""Planted defect: fix() runs the same failing code again, so the documented error re-raises."""
NEEDS = {"packages": {"hanlp": ">=2.1"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "fix"}

from hanlp.components.taggers.rnn_tagger import RNNTagger
from torch import nn


def trigger():
    RNNTagger(crf=True).build_criterion(model=nn.DataParallel(nn.Linear(1, 1)))


def fix():
    trigger()
