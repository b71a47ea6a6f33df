"""A hand-written "simplified" linear-chain CRF, offered as a faster drop-in for a library CRF, runs
its forward (log-partition) recursion as
    alpha[mask_i].unsqueeze(1) + transitions + emissions[mask_i, i].unsqueeze(0)
and then takes logsumexp over dim 0. The last term is laid out (1, n, tags) while the first is (n, 1, tags),
n being the number of sequences still running at step i, so PyTorch's broadcasting lines the batch axis up
against a tag axis: whenever n is neither 1 nor the number of tags the addition fails in ATen's infer_size
(aten/src/ATen/ExpandUtils.cpp) with "The size of tensor a (tags) must match the size of tensor b (n) at
non-singleton dimension 1". trigger() runs an unpadded batch of 8 with 5 tags. The demonstrations: pytorch-crf
(solution 1) and a CRF written with the right axes and a gathered gold-path score (solution 2) give the
per-sequence log-likelihoods of brute-force enumeration of every tag path, padded sequences included; the
record's exampleFix "after" recursion runs as the fix and gives the brute-force log-partition; the record's
validationCode flags the simplified CRF on the trigger's batch and passes the fixed one. CPU only."""
NEEDS = {"packages": {"torch": ">=1.13", "pytorch-crf": "==0.7.2", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "pytorch_crf", 2: "hand_written_fixed"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["self", "emissions", "mask", "torch"],
              "validationCode": ["num_tags", "emissions", "tags", "mask", "my_crf"]}
VALID = {"correct-crf-any-batch": "valid_correct_crf"}
WORDINGS = [
    {"text": "The size of tensor a (5) must match the size of tensor b (8) at non-singleton dimension 1",
     "source": "torch==2.13.0", "match": "pattern"},
    {"text": "The size of tensor a (5) must match the size of tensor b (8) at non-singleton dimension 1",
     "source": "torch==1.13.1", "match": "pattern"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import itertools

import errkb_record as record

import hypothesis.strategies as st
import torch
import torch.nn as nn
from torchcrf import CRF


class SimplifiedCRF(nn.Module):
    """The shape of the seed's CRF: per-step masked updates, with the broadcast as written there."""

    def __init__(self, num_tags):
        super().__init__()
        self.num_tags = num_tags
        self.transitions = nn.Parameter(torch.randn(num_tags, num_tags))
        self.start_trans = nn.Parameter(torch.randn(num_tags))
        self.end_trans = nn.Parameter(torch.randn(num_tags))

    def forward(self, emissions, tags, mask=None):
        if mask is None:
            mask = torch.ones(emissions.shape[:2], dtype=torch.bool)
        return -(self._gold_score(emissions, tags, mask) - self._log_partition(emissions, mask))

    def _gold_score(self, emissions, tags, mask):
        batch, seq_len = emissions.shape[:2]
        score = self.start_trans[tags[:, 0]] + emissions[:, 0, tags[:, 0]]
        for i in range(1, seq_len):
            on = mask[:, i]
            if on.any():
                score[on] += self.transitions[tags[on, i - 1], tags[on, i]] + emissions[on, i, tags[on, i]]
        last = tags[torch.arange(batch), mask.sum(dim=1) - 1]
        return score + self.end_trans[last]

    def _log_partition(self, emissions, mask):
        alpha = self.start_trans + emissions[:, 0]
        for i in range(1, emissions.size(1)):
            on = mask[:, i]
            if on.any():
                # (n, 1, tags) + (tags, tags) + (1, n, tags): the batch axis meets a tag axis
                scores = alpha[on].unsqueeze(1) + self.transitions + emissions[on, i].unsqueeze(0)
                alpha[on] = torch.logsumexp(scores, dim=0)
        return torch.logsumexp(alpha + self.end_trans, dim=1).sum()


class VectorisedCRF(nn.Module):
    """The fix: the same model with the recursion broadcast over (batch, previous tag, next tag)."""

    def __init__(self, num_tags):
        super().__init__()
        self.transitions = nn.Parameter(torch.randn(num_tags, num_tags))  # [previous, next]
        self.start_trans = nn.Parameter(torch.randn(num_tags))
        self.end_trans = nn.Parameter(torch.randn(num_tags))

    def forward(self, emissions, tags, mask):
        """Per-sequence negative log-likelihood, the simplified CRF's forward(emissions, tags, mask) interface."""
        return -self.log_likelihood(emissions, tags, mask)

    def log_likelihood(self, emissions, tags, mask):
        """Per-sequence log p(tags | emissions) for right-padded, batch-first inputs; shape (batch,)."""
        return self.gold_score(emissions, tags, mask) - self.log_partition(emissions, mask)

    def gold_score(self, emissions, tags, mask):
        mask = mask.to(emissions.dtype)
        emitted = emissions.gather(2, tags.unsqueeze(2)).squeeze(2)  # (batch, seq_len)
        moved = self.transitions[tags[:, :-1], tags[:, 1:]]  # (batch, seq_len - 1)
        score = self.start_trans[tags[:, 0]] + emitted[:, 0]
        score = score + ((emitted[:, 1:] + moved) * mask[:, 1:]).sum(dim=1)
        last = tags.gather(1, (mask.sum(dim=1).long() - 1).unsqueeze(1)).squeeze(1)
        return score + self.end_trans[last]

    def log_partition(self, emissions, mask):
        alpha = self.start_trans + emissions[:, 0]  # (batch, tags)
        for i in range(1, emissions.size(1)):
            # (batch, prev, 1) + (prev, next) + (batch, 1, next), reduced over prev
            step = torch.logsumexp(
                alpha.unsqueeze(2) + self.transitions + emissions[:, i].unsqueeze(1), dim=1
            )
            alpha = torch.where(mask[:, i].unsqueeze(1), step, alpha)  # padded positions keep alpha
        return torch.logsumexp(alpha + self.end_trans, dim=1)


def _trigger_batch():
    """The trigger's situation: an unpadded batch of 8 sequences of length 12 with 5 tags."""
    torch.manual_seed(0)
    batch, seq_len, num_tags = 8, 12, 5
    emissions = torch.randn(batch, seq_len, num_tags)
    tags = torch.randint(num_tags, (batch, seq_len))
    return emissions, tags, torch.ones(batch, seq_len, dtype=torch.bool), num_tags


def _padded_batch():
    """A tiny padded batch for brute force: 3 tags, lengths 4, 2, 3, 1 (the number running changes every step)."""
    torch.manual_seed(0)
    num_tags, lengths = 3, [4, 2, 3, 1]
    mask = torch.arange(max(lengths)).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    emissions = torch.randn(len(lengths), max(lengths), num_tags, dtype=torch.float64)
    tags = torch.randint(num_tags, (len(lengths), max(lengths))) * mask  # padding positions hold tag 0
    return emissions, tags, mask, num_tags


def _brute_force(start, end, transitions, emissions, tags, mask):
    """(log p(gold path), log Z) per sequence, by scoring every tag path of each sequence's true length."""
    llh, log_z = [], []
    for b in range(emissions.size(0)):
        length = int(mask[b].sum())
        em = emissions[b, :length]

        def path_score(path):
            s = start[path[0]] + em[0, path[0]] + end[path[-1]]
            for t in range(1, length):
                s = s + transitions[path[t - 1], path[t]] + em[t, path[t]]
            return s

        paths = itertools.product(range(em.size(1)), repeat=length)
        log_z.append(torch.logsumexp(torch.stack([path_score(p) for p in paths]), dim=0))
        llh.append(path_score(tags[b, :length].tolist()) - log_z[-1])
    return torch.stack(llh), torch.stack(log_z)


def trigger():
    emissions, tags, _, num_tags = _trigger_batch()  # 8 running sequences, 5 tags
    SimplifiedCRF(num_tags)(emissions, tags)


def pytorch_crf():
    """Solution 1: pytorch-crf gives one log-likelihood per sequence, equal to brute force on a padded batch."""
    emissions, tags, mask, num_tags = _padded_batch()
    crf = CRF(num_tags, batch_first=True).double()
    with torch.no_grad():
        llh = crf(emissions, tags, mask=mask, reduction="none")
        expected, _ = _brute_force(crf.start_transitions, crf.end_transitions, crf.transitions, emissions, tags, mask)
    assert llh.shape == (len(tags),) and torch.allclose(llh, expected, atol=1e-10), (llh, expected)

    emissions, tags, mask, num_tags = _trigger_batch()  # the trigger's shapes train
    emissions.requires_grad_(True)
    crf = CRF(num_tags, batch_first=True)
    loss = -crf(emissions, tags, mask=mask, reduction="mean")
    loss.backward()
    assert torch.isfinite(loss) and loss > 0 and torch.isfinite(crf.transitions.grad).all()


def hand_written_fixed():
    """Solution 2: right axes in the recursion, gathered gold path: brute force and pytorch-crf agree with it."""
    emissions, tags, mask, num_tags = _padded_batch()
    crf = VectorisedCRF(num_tags).double()
    with torch.no_grad():
        llh = crf.log_likelihood(emissions, tags, mask)
        expected, _ = _brute_force(crf.start_trans, crf.end_trans, crf.transitions, emissions, tags, mask)
    assert llh.shape == (len(tags),)
    assert torch.allclose(llh, expected, atol=1e-10), (llh, expected)

    emissions, tags, mask, num_tags = _trigger_batch()  # the shapes that broke the simplified CRF
    emissions.requires_grad_(True)
    crf = VectorisedCRF(num_tags)
    loss = crf(emissions, tags, mask).mean()
    loss.backward()
    assert torch.isfinite(loss) and loss > 0
    assert torch.isfinite(crf.transitions.grad).all() and torch.isfinite(emissions.grad).all()


def example_fix():
    """The exampleFix's "after" recursion, run as the CRF's log-partition: it equals brute force, padding included."""
    emissions, tags, mask, num_tags = _padded_batch()
    crf = VectorisedCRF(num_tags).double()
    with torch.no_grad():
        names = record.run("exampleFix", {"self": crf, "emissions": emissions, "mask": mask, "torch": torch}, section="after")
        _, expected = _brute_force(crf.start_trans, crf.end_trans, crf.transitions, emissions, tags, mask)
    assert names["log_partition"].shape == (len(tags),)
    assert torch.allclose(names["log_partition"], expected, atol=1e-10), (names["log_partition"], expected)


def guard():
    """validationCode flags the simplified CRF on the trigger's batch and passes the fixed CRF on it."""
    emissions, tags, mask, num_tags = _trigger_batch()
    situation = {"num_tags": num_tags, "emissions": emissions, "tags": tags, "mask": mask}
    assert not record.check("validationCode", dict(situation, my_crf=SimplifiedCRF(num_tags)))
    assert record.check("validationCode", dict(situation, my_crf=VectorisedCRF(num_tags)))




@st.composite
def _correct_crf_batch(draw):
    """A correct CRF on any batch: size 1, equal to the number of tags, or neither; padded (right) or not."""
    num_tags = draw(st.integers(2, 5))
    lengths = draw(st.lists(st.integers(1, 5), min_size=1, max_size=6))
    torch.manual_seed(draw(st.integers(0, 2**16)))
    mask = torch.arange(max(lengths)).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    tags = torch.randint(num_tags, mask.shape) * mask
    return {"num_tags": num_tags, "emissions": torch.randn(*mask.shape, num_tags), "tags": tags, "mask": mask,
            "my_crf": VectorisedCRF(num_tags)}


def valid_correct_crf():
    return _correct_crf_batch()
