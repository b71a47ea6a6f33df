"""A training step feeds a batch that is too large for the GPU: the forward pass keeps every layer's input
for backward, the caching allocator cannot find or cudaMalloc the next activation even after returning its
cached blocks to the driver, and DeviceCachingAllocator::malloc (c10/cuda/CUDACachingAllocator.cpp) raises
torch.OutOfMemoryError "CUDA out of memory. Tried to allocate ... GPU 0 has a total capacity of ...". The
batch is sized from the free memory of the GPU it runs on (one activation is a sixth of it, and a 12-block
MLP keeps two per block), so it overflows any GPU in the same way. GPU-only: NEEDS one CUDA device, and
every stage is skipped without one. Not run on a GPU when written (no GPU was available): each stage was
run once on the CPU with DEVICE="cpu" in a scratch copy to catch Python errors only. Demonstrations: the
same batch in micro-batches with gradient accumulation (the step runs, the loss is finite, the parameters
change), and the same forward pass under torch.no_grad() for inference (the output is complete and
finite); the record's exampleFix and tryCatchPattern run from its text.
"""

NEEDS = {"packages": {"torch": ">=2.5"}, "cuda_devices": 1, "timeout_s": 120}
SOLUTIONS = {1: "micro_batches_with_accumulation", 2: "no_grad_for_inference"}
CODE = {"exampleFix": "example_fix", "tryCatchPattern": "try_catch"}
CODE_NAMES = {"exampleFix": ["model", "x", "optimizer", "micro_batch"], "tryCatchPattern": ["torch", "model", "x"]}
KEEP = ["model", "optimizer"]
WORDINGS = [
    {"text": "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.00 MiB. GPU 0 has a total capacity "
             "of 23.65 GiB of which 11.06 MiB is free.", "source": "pytorch/pytorch#16417", "match": "pattern"},
    {"text": "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 392.00 MiB. GPU 0 has a total capacty "
             "of 23.65 GiB of which 301.06 MiB is free.", "source": "carolchenyx/MGFN.#35", "match": "pattern"},
    {"text": "RuntimeError: CUDA out of memory. Tried to allocate 2.87 GiB (GPU 0; 14.76 GiB total capacity; 8.77 GiB "
             "already allocated; 19.75 MiB free; 13.71 GiB reserved in total by PyTorch)",
     "source": "rshaojimmy/MADDoG#11", "match": "pattern"},
]
PROVENANCE = {"checked": "unverified", "why": "no GPU and no CUDA 2.13.0 build here; the excerpt comes from a stored "
              "upstream copy whose commit the search index does not name"}

import math

import errkb_record as record

import torch
import torch.nn as nn

DEVICE = "cuda:0"
WIDTH = 64
DEPTH = 12
CHUNKS = 16


def _model():
    torch.manual_seed(0)
    layers = []
    for _ in range(DEPTH):
        layers += [nn.Linear(WIDTH, WIDTH), nn.GELU()]
    return nn.Sequential(*layers).to(DEVICE)


def _batch():
    """A batch whose input alone takes a sixth of the free GPU memory."""
    free = torch.cuda.mem_get_info(DEVICE)[0] if torch.device(DEVICE).type == "cuda" else 48 * 2**20
    rows = free // 6 // (WIDTH * 4)
    return torch.randn(rows, WIDTH, device=DEVICE, generator=torch.Generator(device=DEVICE).manual_seed(0))


def _changed(before, model):
    return any(not torch.equal(b, p.detach()) for b, p in zip(before, model.parameters()))


def trigger():
    model = _model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = _batch()
    loss = model(x).pow(2).mean()  # the whole batch in one forward pass
    loss.backward()
    optimizer.step()


def micro_batches_with_accumulation():
    model = _model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = _batch()
    before = [p.detach().clone() for p in model.parameters()]
    optimizer.zero_grad()
    total = 0.0
    for chunk in x.split(len(x) // CHUNKS):
        loss = model(chunk).pow(2).mean() * len(chunk) / len(x)  # weighted: the sum is the full-batch mean
        loss.backward()
        total += loss.item()
    optimizer.step()
    assert math.isfinite(total) and _changed(before, model)


def no_grad_for_inference():
    model = _model().eval()
    x = _batch()
    with torch.no_grad():
        out = model(x)  # each activation is freed as soon as the next layer has used it
    assert out.shape == x.shape and bool(torch.isfinite(out).all())


def example_fix():
    model = _model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = _batch()
    before = [p.detach().clone() for p in model.parameters()]
    names = record.run(
        "exampleFix", {"model": model, "x": x, "optimizer": optimizer, "micro_batch": len(x) // CHUNKS}, section="after"
    )
    assert math.isfinite(names["loss"].item()) and _changed(before, model)
    assert names["model"] is model and names["optimizer"] is optimizer


def try_catch():
    model = _model()
    x = _batch()
    names = record.run("tryCatchPattern", {"torch": torch, "model": model, "x": x})
    out = names["out"]
    assert names["oom"], "the forward pass did not run out of memory: the fallback was never exercised"
    assert out.shape == x.shape and bool(torch.isfinite(out).all())
    return "recovered by chunked inference"
