"""Time a linear-chain CRF's log-likelihood three ways (a benchmark, not a test).

- loop: forward algorithm in Python, one sequence at a time, one time step at a time;
- pytorch-crf: torchcrf.CRF(batch_first=True), batched over the sequences, a Python loop over time;
- vectorised: the fix from reproductions/crf-forward-size-mismatch.py, the same batched recursion.

All three get the same parameters and the same right-padded batch (and are checked to agree), and
report the median milliseconds per call of the forward pass and of forward + backward.

    python benchmarks/crf_forward.py [--batch 32] [--length 128] [--tags 20] [--repeats 7] [--threads 1]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from pathlib import Path

import torch
from torchcrf import CRF

REPRODUCTION = Path(__file__).resolve().parent.parent / "reproductions" / "crf-forward-size-mismatch.py"


def load_vectorised_crf():
    spec = importlib.util.spec_from_file_location("crf_forward_size_mismatch", REPRODUCTION)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.VectorisedCRF


def loop_log_likelihood(crf, emissions, tags, mask):
    """The per-sequence, per-time-step forward algorithm."""
    out = []
    for b in range(emissions.size(0)):
        length = int(mask[b].sum())
        em, tg = emissions[b], tags[b]
        score = crf.start_trans[tg[0]] + em[0, tg[0]]
        alpha = crf.start_trans + em[0]
        for t in range(1, length):
            score = score + crf.transitions[tg[t - 1], tg[t]] + em[t, tg[t]]
            alpha = torch.logsumexp(alpha.unsqueeze(1) + crf.transitions, dim=0) + em[t]
        score = score + crf.end_trans[tg[length - 1]]
        out.append(score - torch.logsumexp(alpha + crf.end_trans, dim=0))
    return torch.stack(out)


def median_ms(fn, repeats):
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--tags", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    torch.manual_seed(0)
    ours = load_vectorised_crf()(args.tags)
    library = CRF(args.tags, batch_first=True)
    with torch.no_grad():
        library.transitions.copy_(ours.transitions)
        library.start_transitions.copy_(ours.start_trans)
        library.end_transitions.copy_(ours.end_trans)

    lengths = torch.randint(args.length // 2, args.length + 1, (args.batch,))
    lengths[0] = args.length
    mask = torch.arange(args.length).unsqueeze(0) < lengths.unsqueeze(1)
    emissions = torch.randn(args.batch, args.length, args.tags, requires_grad=True)
    tags = torch.randint(args.tags, (args.batch, args.length)) * mask

    variants = {
        "loop (per sequence, per step)": lambda: loop_log_likelihood(ours, emissions, tags, mask),
        "pytorch-crf 0.7.2": lambda: library(emissions, tags, mask=mask, reduction="none"),
        "vectorised fix": lambda: ours.log_likelihood(emissions, tags, mask),
    }
    with torch.no_grad():
        results = [fn() for fn in variants.values()]
    for other in results[1:]:
        assert torch.allclose(results[0], other, rtol=1e-4, atol=1e-3), (results[0], other)

    def forward_only(fn):
        def run():
            with torch.no_grad():
                fn()
        return run

    def forward_backward(fn):
        def run():
            fn().sum().neg().backward()
        return run

    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} thread(s); batch {args.batch}, "
        f"length {args.length}, {args.tags} tags, lengths {int(lengths.min())}..{int(lengths.max())}; "
        f"median of {args.repeats} runs"
    )
    print(f"{'variant':32} {'forward ms':>11} {'fwd+bwd ms':>11}")
    for name, fn in variants.items():
        fwd = median_ms(forward_only(fn), args.repeats)
        both = median_ms(forward_backward(fn), args.repeats)
        print(f"{name:32} {fwd:11.2f} {both:11.2f}")


if __name__ == "__main__":
    main()
