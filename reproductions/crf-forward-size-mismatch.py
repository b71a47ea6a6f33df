"""A hand-written "simplified" linear-chain CRF, offered as a faster drop-in for a library CRF, runs
its forward (log-partition) recursion as
    alpha[mask_i].unsqueeze(1) + transitions + emissions[mask_i, i].unsqueeze(0)
and then takes logsumexp over dim 0. The last term is laid out (1, batch, tags) while the first is
(batch, 1, tags), so PyTorch's broadcasting lines the batch axis up against a tag axis: with any batch
size different from the number of tags, the addition fails in ATen's infer_size
(aten/src/ATen/ExpandUtils.cpp) with "The size of tensor a (tags) must match the size of tensor b
(batch) at non-singleton dimension 1". (When batch == tags it runs silently and returns a wrong
value, reducing over the batch instead of the previous tag.) The fix uses a recursion vectorised over
the right axes, (batch, prev, 1) + (prev, next) + (batch, 1, next) with logsumexp over the previous
tag and a masked update, or pytorch-crf; fix() checks it against brute-force enumeration of every tag
path, padded sequences included, and against pytorch-crf. CPU only."""
NEEDS = {"packages": {"torch": ">=1.13", "pytorch-crf": "==0.7.2"}, "cuda_devices": 0, "timeout_s": 60}

import itertools

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


def trigger():
    torch.manual_seed(0)
    batch, seq_len, num_tags = 8, 12, 5  # any batch size other than the number of tags
    crf = SimplifiedCRF(num_tags)
    emissions = torch.randn(batch, seq_len, num_tags)
    tags = torch.randint(num_tags, (batch, seq_len))
    crf(emissions, tags)


def _brute_force_log_likelihood(crf, emissions, tags, mask):
    """log p(gold path) by scoring every tag path of each sequence's true length."""
    out = []
    for b in range(emissions.size(0)):
        length = int(mask[b].sum())
        em = emissions[b, :length]

        def path_score(path):
            s = crf.start_trans[path[0]] + em[0, path[0]] + crf.end_trans[path[-1]]
            for t in range(1, length):
                s = s + crf.transitions[path[t - 1], path[t]] + em[t, path[t]]
            return s

        all_paths = itertools.product(range(em.size(1)), repeat=length)
        log_z = torch.logsumexp(torch.stack([path_score(p) for p in all_paths]), dim=0)
        out.append(path_score(tags[b, :length].tolist()) - log_z)
    return torch.stack(out)


def fix():
    torch.manual_seed(0)
    num_tags, lengths = 3, [4, 2, 3, 1]  # padded sequences, the first one unpadded
    batch, seq_len = len(lengths), max(lengths)
    mask = torch.arange(seq_len).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    emissions = torch.randn(batch, seq_len, num_tags, dtype=torch.float64)
    tags = torch.randint(num_tags, (batch, seq_len)) * mask  # padding positions hold tag 0

    crf = VectorisedCRF(num_tags).double()
    with torch.no_grad():
        llh = crf.log_likelihood(emissions, tags, mask)
        expected = _brute_force_log_likelihood(crf, emissions, tags, mask)
    assert llh.shape == (batch,)
    assert torch.allclose(llh, expected, atol=1e-10), (llh, expected)

    # pytorch-crf with the same parameters gives the same per-sequence log-likelihoods.
    library = CRF(num_tags, batch_first=True).double()
    with torch.no_grad():
        library.transitions.copy_(crf.transitions)
        library.start_transitions.copy_(crf.start_trans)
        library.end_transitions.copy_(crf.end_trans)
        from_library = library(emissions, tags, mask=mask, reduction="none")
    assert torch.allclose(from_library, expected, atol=1e-10), (from_library, expected)

    # The shapes that broke the simplified CRF now give a finite loss with gradients.
    torch.manual_seed(0)
    crf = VectorisedCRF(5)
    emissions = torch.randn(8, 12, 5, requires_grad=True)
    tags = torch.randint(5, (8, 12))
    loss = -crf.log_likelihood(emissions, tags, torch.ones(8, 12, dtype=torch.bool)).mean()
    loss.backward()
    assert torch.isfinite(loss) and loss > 0
    assert torch.isfinite(crf.transitions.grad).all() and torch.isfinite(emissions.grad).all()
