"""A tagging dataset returns one LongTensor of token ids per sentence, and sentences have different
lengths (3, 5, 2 and 4 tokens). DataLoader's default collate_fn builds a batch by torch.stack-ing the
samples, which needs equal shapes: ATen's check_stack_inputs (aten/src/ATen/native/TensorShape.cpp)
raises RuntimeError "stack expects each tensor to be equal size, but got [3] at entry 0 and [5] at
entry 1" on the first batch. Demonstrations: a collate_fn that pads each batch to its longest sentence
and returns the lengths (the batch then packs and runs through an LSTM, and a CRF-style mask is built
from the lengths), and a dataset that pads or truncates every sample to one fixed length. The record's
exampleFix and validationCode run from its text. CPU only.
"""

NEEDS = {"packages": {"torch": ">=1.13", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "pad_in_collate", 2: "fixed_length_samples"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["torch", "pad_sequence", "DataLoader", "dataset", "PAD"], "validationCode": ["samples"]}
VALID = {
    "equal-shapes": "valid_equal_shapes",
    "tuple-and-dict-samples": "valid_nested_samples",
    "one-sample-batch": "valid_one_sample",
}
WORDINGS = [
    {"text": "stack expects each tensor to be equal size, but got [3] at entry 0 and [5] at entry 1",
     "source": "torch==2.13.0", "match": "pattern"},
    {"text": "stack expects each tensor to be equal size, but got [3] at entry 0 and [5] at entry 1",
     "source": "torch==1.13.1", "match": "pattern"},
    {"text": "RuntimeError: invalid argument 0: Sizes of tensors must match except in dimension 0. Got 35 and 34 in "
             "dimension 1 at /pytorch/aten/src/TH/generic/THTensorMath.c:3586",
     "source": "mojesty/professor_forcing#1", "match": "none",
     "why": "TH's torch.cat raised the same words for every concatenation, not only default_collate's stack"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import errkb_record as record

import hypothesis.strategies as st
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset, default_collate

PAD, VOCAB, LENGTHS = 0, 20, (3, 5, 2, 4)


class Sentences(Dataset):
    def __init__(self, max_len=None):
        g = torch.Generator().manual_seed(0)
        self.items = [torch.randint(1, VOCAB, (n,), generator=g) for n in LENGTHS]
        self.max_len = max_len

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        x = self.items[i]
        if self.max_len is not None:  # solution 2: every sample the same length
            x = x[: self.max_len]
            x = torch.cat([x, x.new_full((self.max_len - len(x),), PAD)])
        return x


def pad_collate(batch):
    lengths = torch.tensor([len(x) for x in batch])
    return pad_sequence(batch, batch_first=True, padding_value=PAD), lengths


def trigger():
    for batch in DataLoader(Sentences(), batch_size=2):  # default collate: torch.stack
        pass


def pad_in_collate():
    torch.manual_seed(0)
    embed, lstm = nn.Embedding(VOCAB, 8, padding_idx=PAD), nn.LSTM(8, 6, batch_first=True)
    seen = []
    for tokens, lengths in DataLoader(Sentences(), batch_size=2, collate_fn=pad_collate):
        assert tokens.shape == (2, int(lengths.max()))
        mask = torch.arange(tokens.size(1))[None, :] < lengths[:, None]  # what a CRF layer takes
        assert torch.equal(mask, tokens != PAD)
        packed = pack_padded_sequence(embed(tokens), lengths, batch_first=True, enforce_sorted=False)
        out, _ = pad_packed_sequence(lstm(packed)[0], batch_first=True)
        assert out.shape[:2] == tokens.shape
        seen.extend(lengths.tolist())
    assert tuple(seen) == LENGTHS


def fixed_length_samples():
    batches = list(DataLoader(Sentences(max_len=4), batch_size=2))
    assert [tuple(b.shape) for b in batches] == [(2, 4), (2, 4)]
    assert batches[0][1].tolist() == Sentences().items[1][:4].tolist()  # truncated
    assert batches[0][0, 3].item() == PAD  # padded


def example_fix():
    names = record.run("exampleFix", {"torch": torch, "pad_sequence": pad_sequence, "DataLoader": DataLoader,
                                      "dataset": Sentences(), "PAD": PAD}, section="after")
    batches = list(names["loader"])
    assert [tuple(t.shape) for t, _ in batches] == [(2, 5), (2, 4)]
    assert [l.tolist() for _, l in batches] == [[3, 5], [2, 4]]


def guard():
    ds = Sentences()
    assert not record.check("validationCode", {"samples": [ds[0], ds[1]]})
    fixed = Sentences(max_len=4)
    assert record.check("validationCode", {"samples": [fixed[0], fixed[1]]})


def _collated(samples):
    """The situation is valid: default_collate stacks these samples."""
    default_collate(samples)
    return {"samples": samples}


SHAPES = st.lists(st.integers(0, 4), max_size=3)


def valid_equal_shapes():
    """Any number of samples of one shape (0-d labels, vectors, images), whatever the shape."""
    return st.builds(lambda shape, n: _collated([torch.zeros(shape) for _ in range(n)]), SHAPES, st.integers(1, 4))


def valid_nested_samples():
    """(features, label) tuples with a plain int label and dicts like a padding tokenizer returns."""
    pairs = [(torch.zeros(3, 4), label) for label in (0, 1)]
    dicts = [{"input_ids": torch.tensor([5, 6, 0]), "attention_mask": torch.tensor([1, 1, 0]), "text": t} for t in "ab"]
    return [_collated(pairs), _collated(dicts)]


def valid_one_sample():
    """batch_size=1 with variable-length sentences: every batch holds one sample, so nothing has to match."""
    return [_collated([sample]) for sample in Sentences()]
