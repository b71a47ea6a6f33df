"""The messagePattern generaliser of `errkb draft`: real wordings of one error with other numbers, shapes, dtypes,
devices and names match the pattern drafted from one of them; other errors do not; the checks of errkb/patterns.py
hold; a corpus message of another error makes it fall back to a more literal pattern."""

from __future__ import annotations

import json

import pytest

from conftest import REPO
from errkb.draft.generalise import GeneraliseError, corpus, generalise, head, skeleton
from errkb.patterns import compile_pattern, pattern_matches

# (drafted from, another real wording of the same error): numbers, shapes, dtypes, devices, quoted names, paths.
SAME_ERROR = [
    ("mat1 and mat2 shapes cannot be multiplied (64x3136 and 784x10)", "mat1 and mat2 shapes cannot be multiplied (1x512 and 2048x1000)"),
    ("Given groups=1, weight of size [64, 3, 7, 7], expected input[1, 1, 224, 224] to have 3 channels, but got 1 channels instead",
     "Given groups=1, weight of size [32, 1, 3, 3], expected input[16, 3, 28, 28] to have 1 channels, but got 3 channels instead"),
    ("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
     "Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:1!"),
    ("expected scalar type Long but found Float", "expected scalar type Half but found Float"),
    ("cannot import name 'cached_download' from 'huggingface_hub' (/usr/local/lib/python3.10/dist-packages/huggingface_hub/__init__.py)",
     "cannot import name 'HfFolder' from 'huggingface_hub' (/opt/conda/lib/python3.11/site-packages/huggingface_hub/__init__.py)"),
    ("Trainer.__init__() got an unexpected keyword argument 'gpus'", "Trainer.__init__() got an unexpected keyword argument 'progress_bar_refresh_rate'"),
    ("module name can't contain \".\", got: encoder.layer", "module name can't contain \".\", got: a.b"),
    ("invalid number of tags: 0", "invalid number of tags: -3"),
    ('Module [Classifier] is missing the required "forward" function', 'Module [ResNet50] is missing the required "forward" function'),
    ("Invalid version: 'not a version'", "Invalid version: '1.0.0-final-beta'"),
    ("CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity; 6.85 GiB already allocated)",
     "CUDA out of memory. Tried to allocate 2.50 GiB (GPU 1; 23.65 GiB total capacity; 19.01 GiB already allocated)"),
]
DIFFERENT = [
    ("mat1 and mat2 shapes cannot be multiplied (64x3136 and 784x10)", "mat1 and mat2 must have the same dtype, but got Double and Float"),
    ("Trainer.__init__() got an unexpected keyword argument 'gpus'", "Trainer.__init__() missing 1 required positional argument: 'model'"),
    ("invalid number of tags: 0", "invalid literal for int() with base 10: 'abc'"),
    # The function a TypeError names is the error's identity: another function's unexpected keyword is another error.
    ("Trainer.__init__() got an unexpected keyword argument 'gpus'", "__init__() got an unexpected keyword argument 'size_average'"),
    ("cannot import name 'cached_download' from 'huggingface_hub' (/x/huggingface_hub/__init__.py)", "No module named 'huggingface_hub'"),
    ("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
     "Expected all tensors to be on the same device, but got index is on cpu, different from other tensors on cuda:0"),
]


def catalog_messages() -> list[str]:
    return [json.loads(p.read_text())["record"]["errorMessage"] for p in sorted((REPO / "records").glob("*.json"))]


@pytest.mark.parametrize("drafted, other", SAME_ERROR)
def test_other_wordings_of_the_same_error_match(drafted, other):
    found = generalise(drafted, corpus(catalog_messages()))
    assert pattern_matches(found.pattern, drafted)
    assert pattern_matches(found.pattern, other), (found.pattern, other)
    compile_pattern(found.pattern)  # the cost and match-anything checks


@pytest.mark.parametrize("drafted, other", DIFFERENT)
def test_other_errors_do_not_match(drafted, other):
    found = generalise(drafted, corpus(catalog_messages()))
    assert not pattern_matches(found.pattern, other), (found.pattern, other)


def test_no_catalog_or_negative_message_matches_a_drafted_pattern():
    negatives = corpus(catalog_messages())
    for drafted, _ in SAME_ERROR:
        found = generalise(drafted, negatives)
        others = [text for text in negatives if skeleton(text) != skeleton(drafted)]  # not the same error reworded
        assert not [text for text in others if pattern_matches(found.pattern, text)], found.pattern


def test_a_clashing_corpus_message_makes_the_pattern_more_literal():
    message = "widget 'left' is broken"
    assert generalise(message, []).level == 2
    clash = generalise(message, ["widget 'right' is broken beyond repair"])  # another error: its words differ
    assert clash.level == 1 and pattern_matches(clash.pattern, message)
    assert not pattern_matches(clash.pattern, "widget 'right' is broken beyond repair")
    assert "also matches an unrelated message" in clash.rejected[0]


def test_a_corpus_wording_of_the_same_error_is_not_a_clash():
    message = "shape '[4]' is invalid for input of size 6"
    found = generalise(message, corpus())  # the corpus holds "shape '[-1, 784]' is invalid for input of size 1000"
    assert found.level == 2 and pattern_matches(found.pattern, "shape '[-1, 784]' is invalid for input of size 1000")


def test_long_messages_are_cut_at_a_sentence_and_short_ones_refused():
    long = "Weights only load failed. " + "x " * 200
    assert head(long) == "Weights only load failed."
    with pytest.raises(GeneraliseError):
        generalise("x", [])
