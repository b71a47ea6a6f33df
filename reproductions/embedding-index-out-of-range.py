"""A text classifier builds its nn.Embedding from a 50-word vocabulary; the tokenizer then gets two special tokens,
<pad> and <unk>, with the ids 50 and 51, but the embedding keeps 50 rows. The first padded batch looks up row 50,
and index_select (which nn.Embedding calls on the CPU, in aten/src/ATen/native/TensorAdvancedIndexing.cpp) raises
"IndexError: index out of range in self". On CUDA the same lookup is a device-side assert instead (not run here).
The demonstrations: the embedding resized to the tokenizer's size keeping the trained rows (what Hugging Face's
resize_token_embeddings does); sequences longer than a learned position table truncated to its size; and ids the
model has no row for (unknown words, -1 padding) mapped to the <unk> and <pad> rows, with padding_idx. The record's
exampleFix and validationCode run from its own text. CPU only.
"""

NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "resize_embedding", 2: "truncate_to_positions", 3: "map_to_unk_and_pad"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {"ids-in-range": "valid_ids_in_range", "empty-batch": "valid_empty_batch", "int32-ids": "valid_int32_ids"}
CODE_NAMES = {"exampleFix": ["torch", "nn", "model", "vocab_size"], "validationCode": ["ids", "embedding"]}
KEEP = ["model"]
WORDINGS = [
    {"text": "index out of range in self", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "RuntimeError: index out of range: Tried to access index 32730 out of table with 28995 rows. at "
             "/tmp/pip-req-build-ufslq_a9/aten/src/TH/generic/THTensorEvenMoreMath.cpp:418",
     "source": "ramzan1990/sequence2vec#2", "match": "pattern"},
    {"text": "RuntimeError: index out of range at /pytorch/aten/src/TH/generic/THTensorEvenMoreMath.cpp:191",
     "source": "mozilla/TTS#179", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import math

import errkb_record as record

import torch
import torch.nn as nn
import torch.nn.functional as F

WORDS = 50
PAD, UNK = WORDS, WORDS + 1  # added to the tokenizer after the model was built


class TextClassifier(nn.Module):
    def __init__(self, num_embeddings=WORDS, padding_idx=None, max_len=None):
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(num_embeddings, 16, padding_idx=padding_idx)
        self.pos = nn.Embedding(max_len, 16) if max_len else None
        self.head = nn.Linear(16, 2)

    def forward(self, ids):
        h = self.embed(ids)
        if self.pos is not None:
            h = h + self.pos(torch.arange(ids.shape[1]))
        return self.head(h.mean(1))


def _batch(length=12):
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, WORDS, (8, length), generator=g)
    ids[:, -3:] = PAD  # padded to the batch's longest sequence
    ids[0, 2] = UNK
    return ids, torch.randint(0, 2, (8,), generator=g)


def _train(model, ids, y, steps=15):
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(model(ids), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(math.isfinite(v) for v in losses), losses
    assert losses[-1] < losses[0], losses
    return losses


def trigger():
    ids, _ = _batch()
    TextClassifier()(ids)  # row 50 of a 50-row embedding


def resize_embedding():
    """Solution 1: give the embedding one row per token id, keeping the rows that were already trained."""
    ids, y = _batch()
    model = TextClassifier()
    old = model.embed.weight.detach().clone()
    new = nn.Embedding(UNK + 1, old.shape[1])
    with torch.no_grad():
        new.weight[: old.shape[0]] = old  # the trained rows stay; the new tokens get fresh rows
    model.embed = new
    assert model.embed.num_embeddings == int(ids.max()) + 1
    assert torch.equal(model.embed.weight[:WORDS].detach(), old)
    _train(model, ids, y)


def truncate_to_positions():
    """Solution 2: a sequence longer than the position table is truncated to max_len (tokenizer truncation)."""
    ids, y = _batch(length=20)
    ids = ids.clamp(max=WORDS - 1)  # word ids are fine here: only the positions overflow
    model = TextClassifier(max_len=16)
    truncated = ids[:, :16]  # = tokenizer(..., truncation=True, max_length=16)
    assert model.pos.num_embeddings >= truncated.shape[1]
    _train(model, truncated, y)


def map_to_unk_and_pad():
    """Solution 3: ids the model has no row for go to <unk>; padding uses a real row declared as padding_idx."""
    ids, y = _batch()
    pad_id, unk_id = 0, 1  # rows the model already has, reserved for padding and unknown words
    raw = ids.clone()
    raw[raw == PAD] = -1  # a collate function that pads with -1 is the same mistake
    mapped = torch.where(raw == -1, torch.full_like(raw, pad_id), raw)
    mapped = torch.where(mapped >= WORDS, torch.full_like(mapped, unk_id), mapped)
    assert int(mapped.min()) >= 0 and int(mapped.max()) < WORDS
    model = TextClassifier(padding_idx=pad_id)
    _train(model, mapped, y)
    assert torch.count_nonzero(model.embed.weight[pad_id]) == 0  # the padding row is never trained


def example_fix():
    """The record's exampleFix, its "after" part, on the trigger's model and ids; then on a double-precision model
    with a padding row, whose settings the resized table must keep for the next forward pass to work."""
    ids, y = _batch()
    model = TextClassifier()
    vocab_size = UNK + 1
    record.run("exampleFix", {"torch": torch, "nn": nn, "model": model, "vocab_size": vocab_size}, section="after")
    assert model.embed.num_embeddings == vocab_size
    _train(model, ids, y)
    model = TextClassifier(padding_idx=0).double()
    trained_rows = model.embed.weight.detach().clone()
    record.run("exampleFix", {"torch": torch, "nn": nn, "model": model, "vocab_size": vocab_size}, section="after")
    embed = model.embed
    assert embed.padding_idx == 0 and embed.weight.dtype == torch.float64
    assert torch.equal(embed.weight[:WORDS], trained_rows)
    assert model(ids).dtype == torch.float64  # the next forward works on the double model


def guard():
    """validationCode flags the ids 50 and 51 for the 50-row embedding and passes ids inside it."""
    ids, _ = _batch()
    embedding = TextClassifier().embed
    assert not record.check("validationCode", {"ids": ids, "embedding": embedding})
    assert record.check("validationCode", {"ids": ids.clamp(max=WORDS - 1), "embedding": embedding})


def _looked_up(ids, embedding):
    """A valid situation is one nn.Embedding itself accepts."""
    embedding(ids)
    return {"ids": ids, "embedding": embedding}


def valid_ids_in_range():
    ids, _ = _batch()
    return _looked_up(ids.clamp(max=WORDS - 1), TextClassifier().embed)


def valid_empty_batch():
    """An empty batch (no tokens at all, e.g. the last shard of a split) looks nothing up."""
    return _looked_up(torch.empty(0, 12, dtype=torch.long), TextClassifier().embed)


def valid_int32_ids():
    ids, _ = _batch()
    return _looked_up(ids.clamp(max=WORDS - 1).int(), TextClassifier(padding_idx=0).embed)
