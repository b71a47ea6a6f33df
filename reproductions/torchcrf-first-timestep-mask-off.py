"""pytorch-crf's CRF defaults to batch_first=False, so it reads emissions, tags and mask as
(seq_len, batch, ...). A tagger that feeds it (batch, seq_len, ...) tensors makes the CRF take
mask[0], the first *sequence* of the batch, for the first *time step*; as soon as that sequence is
shorter than the longest one (it has padding), CRF._validate refuses the batch with
"mask of the first timestep must all be on". Left-padded batches hit the same check even with
batch_first=True. Both stages run on CPU; the error is a pure argument check."""
NEEDS = {"packages": {"torch": ">=1.2", "pytorch-crf": "==0.7.2"}, "cuda_devices": 0, "timeout_s": 60}

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


def fix():
    emissions, tags, mask = _batch_first_inputs()
    num_tags, lengths = emissions.size(2), mask.sum(dim=1).tolist()
    crf = CRF(num_tags, batch_first=True)
    llh = crf(emissions, tags, mask=mask, reduction="none")
    assert llh.shape == (len(lengths),) and torch.isfinite(llh).all(), llh
    assert (llh < 0).all(), "the log-likelihood of one tag path must be negative"

    # The same CRF in its default time-major layout, fed transposed tensors, agrees exactly.
    time_major = CRF(num_tags)
    time_major.load_state_dict(crf.state_dict())
    llh_tm = time_major(emissions.transpose(0, 1), tags.transpose(0, 1), mask=mask.transpose(0, 1), reduction="none")
    assert torch.allclose(llh, llh_tm), (llh, llh_tm)

    loss = -llh.mean()
    loss.backward()
    assert crf.transitions.grad is not None and torch.isfinite(crf.transitions.grad).all()

    paths = crf.decode(emissions, mask=mask)
    assert len(paths) == len(lengths), paths
    assert [len(p) for p in paths] == lengths, paths
    assert all(0 <= t < num_tags for p in paths for t in p), paths
