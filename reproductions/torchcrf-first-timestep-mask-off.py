"""pytorch-crf's CRF defaults to batch_first=False, so it reads emissions, tags and mask as
(seq_len, batch, ...). A tagger that feeds it (batch, seq_len, ...) tensors makes the CRF take
mask[0], the first *sequence* of the batch, for the first *time step*; as soon as that sequence is
shorter than the longest one (it has padding), CRF._validate refuses the batch with
"mask of the first timestep must all be on". Left-padded batches hit the same check even with
batch_first=True. The demonstrations: CRF(num_tags, batch_first=True) on the same batch (solution 1), the
default CRF fed transposed tensors, which agrees with it (solution 2), and a left-padded copy of the batch shifted
back to right padding, which gives the right-padded likelihoods while the mask[:, 0] = True shortcut does not
(solution 3). The record's exampleFix "after" part runs as the fix; its validationCode flags the trigger's
CRF and batch and passes the batch_first CRF. All on CPU; the error is a pure argument check."""
NEEDS = {"packages": {"torch": ">=1.13", "pytorch-crf": "==0.7.2", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "batch_first", 2: "transpose", 3: "shift_left_padding"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["CRF", "num_tags", "emissions", "tags", "attention_mask"],
              "validationCode": ["crf", "emissions", "tags", "mask"]}
VALID = {"right-padded-either-layout": "valid_right_padded", "decode-or-no-mask": "valid_decode_or_no_mask"}
WORDINGS = [{"text": "mask of the first timestep must all be on", "source": "pytorch-crf==0.7.2", "match": "pattern"}]
PROVENANCE = {"checked": "installed", "dist": "pytorch-crf", "version": "0.7.2"}

import errkb_record as record

import hypothesis.strategies as st
import torch
from torchcrf import CRF


def _batch_first_inputs(num_tags=4, lengths=(3, 5, 4)):
    """Emissions (batch, seq_len, tags), gold tags and a right-padded mask, as a tagger makes them.

    The lengths are not sorted, so the first sequence of the batch carries padding.
    """
    torch.manual_seed(0)
    batch, seq_len = len(lengths), max(lengths)
    emissions = torch.randn(batch, seq_len, num_tags)
    tags = torch.randint(num_tags, (batch, seq_len))
    mask = torch.arange(seq_len).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    return emissions, tags, mask


def trigger():
    emissions, tags, mask = _batch_first_inputs()
    crf = CRF(emissions.size(2))  # batch_first defaults to False
    crf(emissions, tags, mask=mask, reduction="mean")


def batch_first():
    """Solution 1: CRF(num_tags, batch_first=True) on the trigger's batch-first tensors."""
    emissions, tags, mask = _batch_first_inputs()
    num_tags, lengths = emissions.size(2), mask.sum(dim=1).tolist()
    crf = CRF(num_tags, batch_first=True)
    llh = crf(emissions, tags, mask=mask, reduction="none")
    assert llh.shape == (len(lengths),) and torch.isfinite(llh).all(), llh
    assert (llh < 0).all(), "the log-likelihood of one tag path must be negative"
    (-llh.mean()).backward()
    assert crf.transitions.grad is not None and torch.isfinite(crf.transitions.grad).all()
    paths = crf.decode(emissions, mask=mask)
    assert [len(p) for p in paths] == lengths, paths
    assert all(0 <= t < num_tags for p in paths for t in p), paths


def transpose():
    """Solution 2: the default (time-major) CRF fed transposed tensors agrees with batch_first=True."""
    emissions, tags, mask = _batch_first_inputs()
    num_tags, lengths = emissions.size(2), mask.sum(dim=1).tolist()
    time_major = CRF(num_tags)
    llh = time_major(emissions.transpose(0, 1), tags.transpose(0, 1), mask=mask.transpose(0, 1), reduction="none")
    paths = time_major.decode(emissions.transpose(0, 1), mask=mask.transpose(0, 1))
    reference = CRF(num_tags, batch_first=True)
    reference.load_state_dict(time_major.state_dict())
    assert torch.allclose(llh, reference(emissions, tags, mask=mask, reduction="none")), llh
    assert paths == reference.decode(emissions, mask=mask) and [len(p) for p in paths] == lengths, paths


def _shift_left(x, pads):
    """Roll each row of a batch-first tensor left by its number of padding positions."""
    return torch.stack([row.roll(-int(p), dims=0) for row, p in zip(x, pads)])


def shift_left_padding():
    """Solution 3: a left-padded copy of the batch, shifted to right padding, gives the right-padded likelihoods."""
    emissions, tags, mask = _batch_first_inputs()
    pads = (~mask).sum(dim=1)
    # The same sequences left-padded, as a padding_side='left' tokenizer lays them out.
    left = [torch.stack([row.roll(int(p), dims=0) for row, p in zip(x, pads)]) for x in (emissions, tags, mask)]
    crf = CRF(emissions.size(2), batch_first=True)
    try:
        crf(*left[:2], mask=left[2])
        raise AssertionError("a left-padded batch passed _validate")
    except ValueError as exc:
        assert "first timestep" in str(exc), exc
    shifted = [_shift_left(x, pads) for x in left]
    assert torch.equal(shifted[2], mask)
    llh = crf(shifted[0], shifted[1], mask=shifted[2], reduction="none")
    expected = crf(emissions, tags, mask=mask, reduction="none")
    assert torch.allclose(llh, expected), (llh, expected)
    hacked = left[2].clone()
    hacked[:, 0] = True  # the shortcut the solution warns against
    wrong = crf(left[0], left[1], mask=hacked, reduction="none")
    assert not torch.allclose(wrong, expected), "mask[:, 0] = True should not give the right likelihoods"


def example_fix():
    """The exampleFix's "after" part on the trigger's batch, as the model code would run it."""
    emissions, tags, mask = _batch_first_inputs()
    names = record.run("exampleFix", {"CRF": CRF, "num_tags": emissions.size(2), "emissions": emissions, "tags": tags,
                                      "attention_mask": mask.long()}, section="after")
    assert torch.isfinite(names["loss"]) and names["loss"] > 0, names["loss"]
    assert [len(p) for p in names["paths"]] == mask.sum(dim=1).tolist(), names["paths"]


def guard():
    """validationCode flags the default CRF with the trigger's batch and passes CRF(batch_first=True)."""
    emissions, tags, mask = _batch_first_inputs()
    situation = {"emissions": emissions, "tags": tags, "mask": mask}
    assert not record.check("validationCode", dict(situation, crf=CRF(emissions.size(2))))
    assert record.check("validationCode", dict(situation, crf=CRF(emissions.size(2), batch_first=True)))


def _accepted(crf, emissions, tags, mask):
    """The situation is valid: the CRF scores it (or decodes it, without tags) in its own layout."""
    if tags is None:
        assert len(crf.decode(emissions, mask=mask)) == emissions.size(0 if crf.batch_first else 1)
    else:
        assert torch.isfinite(crf(emissions, tags, mask=mask))
    return {"crf": crf, "emissions": emissions, "tags": tags, "mask": mask}


@st.composite
def _right_padded(draw):
    """Right-padded batches of any lengths (first sequence shorter or not), bool or uint8 mask, in the layout the
    CRF was built for."""
    num_tags, lengths = draw(st.integers(1, 4)), draw(st.lists(st.integers(1, 5), min_size=1, max_size=4))
    emissions, tags, mask = _batch_first_inputs(num_tags, tuple(lengths))
    if draw(st.booleans()):
        mask = mask.to(torch.uint8)
    crf = CRF(num_tags, batch_first=draw(st.booleans()))
    if not crf.batch_first:
        emissions, tags, mask = emissions.transpose(0, 1), tags.transpose(0, 1), mask.transpose(0, 1)
    return _accepted(crf, emissions, tags, mask)


def valid_right_padded():
    return _right_padded()


def valid_decode_or_no_mask():
    """decode() without tags, and a CRF call without a mask (every position counts)."""
    emissions, tags, mask = _batch_first_inputs()
    crf = CRF(emissions.size(2), batch_first=True)
    return [_accepted(crf, emissions, None, mask), _accepted(crf, emissions, tags, None)]
