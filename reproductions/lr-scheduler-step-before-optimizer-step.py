"""A training loop in the pre-1.1.0 style steps its StepLR(step_size=1, gamma=0.5) scheduler at the start of each
epoch, before the epoch's optimizer.step(). The scheduler's first step() from the loop finds that the optimizer has
not stepped yet (LRScheduler.step in torch/optim/lr_scheduler.py) and warns "Detected call of `lr_scheduler.step()`
before `optimizer.step()`. ...". A UserWarning: the trigger runs its loop to the end and the harness takes the
warning. Demonstrations: (1) the same loop with optimizer.step() before scheduler.step(): no warning, and the first
update uses the initial lr 0.1 where the trigger's loop used 0.05 (the skipped first value the message speaks of);
the trigger's order warns only once in three epochs; a LinearLR warmup's first update uses its first warmup value
(0.1/3), which is what get_last_lr() reads right after the scheduler is built; a gradient-accumulation loop stepping
the scheduler on every micro-batch warns and runs the schedule four times too fast, stepping it after each
optimizer.step() does neither. (2) the mixed-precision case: a loop in the right order with
torch.amp.GradScaler("cpu") and fp16 autocast on CPU, whose first scaled gradients overflow fp16 at the initial
scale 65536, so scaler.step() skips optimizer.step() and the scheduler's first step warns; stepping the scheduler
only when scaler.update() did not lower the scale gives no warning and one scheduler step per real update; with AdamW(fused=True) the same overflowing first step is skipped
by the fused kernel without any warning, and the scale comparison still sees it. (3) an optimizer re-created after
the scheduler: the scheduler warns and the training optimizer's lr never moves; a scheduler built on the final
optimizer gives no warning and halves its lr. CPU only
(GradScaler("cpu"), fp16 autocast and fused AdamW on CPU exist in the releases run: 2.5.1, 2.13.0, 2.15.0).
The record's exampleFix runs from its text.
"""
NEEDS = {"packages": {"torch": ">=2.5"}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "optimizer_step_first", 2: "amp_step_scheduler_only_after_real_step",
             3: "scheduler_on_the_final_optimizer"}
CODE = {"exampleFix": "example_fix"}
CODE_NAMES = {"exampleFix": ["torch", "model", "optimizer", "scheduler", "batches"]}
KEEP = ["model", "optimizer", "scheduler"]
WORDINGS = [
    {"text": "Detected call of `lr_scheduler.step()` before `optimizer.step()`.", "source": "torch==2.13.0",
     "match": "pattern"},
    {"text": "Detected call of `lr_scheduler.step()` before `optimizer.step()`.", "source": "torch==2.5.1",
     "match": "pattern"},
    {"text": "Detected call of `lr_scheduler.step()` before `optimizer.step()`.", "source": "torch==2.15.0",
     "match": "pattern"},
    {"text": "UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, "
             "you should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do "
             "this will result in PyTorch skipping the first value of the learning rate schedule.",
     "source": "huggingface/transformers#11106", "match": "matcher"},
    {"text": "UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, "
             "you should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.",
     "source": "sithu31296/semantic-segmentation#28", "match": "matcher"},
    {"text": "UserWarning: Detected call of lr_scheduler.step() before optimizer.step(). In PyTorch 1.1.0 and later, you "
             "should call them in the opposite order: optimizer.step() before lr_scheduler.step().",
     "source": "pytorch/pytorch#55585", "match": "pattern"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import warnings

import errkb_record as record

import torch
import torch.nn.functional as F

WARNING_TEXT = "Detected call of `lr_scheduler.step()` before `optimizer.step()`"


def _setup():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    return model, optimizer, scheduler


def _batches(scale=1.0):
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(8, 4, generator=g) * scale, torch.randn(8, 2, generator=g)) for _ in range(3)]


def _warned(fn):
    """Run fn, return (its value, the scheduler-order warnings it issued)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = fn()
    return value, [w for w in caught if WARNING_TEXT in str(w.message)]


def _epoch(model, optimizer, x, y, used):
    loss = F.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    used.append(optimizer.param_groups[0]["lr"])  # the lr this update uses
    optimizer.step()


def trigger():
    model, optimizer, scheduler = _setup()
    used = []
    for x, y in _batches():  # one batch per epoch
        scheduler.step()  # at the start of the epoch: before the optimizer has stepped
        _epoch(model, optimizer, x, y, used)


def optimizer_step_first():
    """Solution 1: optimizer.step() before scheduler.step(): no warning, the schedule starts at its first value."""
    def loop(scheduler_first):
        model, optimizer, scheduler = _setup()
        before = model.weight.detach().clone()
        used = []
        for x, y in _batches():
            if scheduler_first:
                scheduler.step()
            _epoch(model, optimizer, x, y, used)
            if not scheduler_first:
                scheduler.step()
        assert not torch.equal(before, model.weight)
        return used

    wrong, warned = _warned(lambda: loop(True))
    assert len(warned) == 1, len(warned)  # three epochs, one warning: only the scheduler's first step checks
    assert wrong == [0.05, 0.025, 0.0125], wrong  # the first value of the schedule (0.1) was never used
    right, warned = _warned(lambda: loop(False))
    assert not warned
    assert right == [0.1, 0.05, 0.025], right

    # a warmup schedule: the first update uses the schedule's first value, as get_last_lr() reads it after building
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.LinearLR(optimizer)  # start_factor 1/3 by default
    first = scheduler.get_last_lr()[0]
    used = []
    for x, y in _batches():
        _epoch(model, optimizer, x, y, used)
        scheduler.step()
    assert abs(used[0] - first) < 1e-12 and abs(first - 0.1 / 3) < 1e-12, (used, first)

    # gradient accumulation (4 micro-batches per update): step the scheduler where the optimizer steps
    def accumulate(scheduler_every_micro_batch):
        model, optimizer, scheduler = _setup()
        used = []
        for i in range(8):
            g = torch.Generator().manual_seed(20 + i)
            x, y = torch.randn(8, 4, generator=g), torch.randn(8, 2, generator=g)
            (F.mse_loss(model(x), y) / 4).backward()
            if (i + 1) % 4 == 0:
                used.append(optimizer.param_groups[0]["lr"])
                optimizer.step()
                optimizer.zero_grad()
                if not scheduler_every_micro_batch:
                    scheduler.step()
            if scheduler_every_micro_batch:
                scheduler.step()
        return used, scheduler.last_epoch

    (used, steps), warned = _warned(lambda: accumulate(True))
    assert len(warned) == 1 and steps == 8 and used == [0.1 * 0.5 ** 3, 0.1 * 0.5 ** 7], (len(warned), steps, used)
    (used, steps), warned = _warned(lambda: accumulate(False))
    assert not warned and steps == 2 and used == [0.1, 0.05], (steps, used)


def _amp_loop(check_skip):
    """A right-order mixed-precision loop; the first scaled gradients overflow fp16 at the initial scale."""
    model, optimizer, scheduler = _setup()
    scaler = torch.amp.GradScaler("cpu")
    assert scaler.get_scale() == 65536.0
    before = model.weight.detach().clone()
    ran = skipped = 0
    for step in range(8):
        g = torch.Generator().manual_seed(10 + step)
        x, y = torch.randn(8, 4, generator=g) * 3, torch.randn(8, 2, generator=g)
        with torch.autocast("cpu", dtype=torch.float16):
            out = model(x)
        loss = F.mse_loss(out.float(), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scale = scaler.get_scale()
        scaler.step(optimizer)  # skips optimizer.step() when the unscaled gradients hold inf or NaN
        scaler.update()  # and then halves the scale
        stepped = scaler.get_scale() >= scale
        ran, skipped = ran + stepped, skipped + (not stepped)
        if stepped or not check_skip:
            scheduler.step()
    assert skipped >= 1 and ran >= 1, (skipped, ran)
    assert not torch.equal(before, model.weight)  # once the scale fits, the updates run
    return ran, skipped, scheduler


def amp_step_scheduler_only_after_real_step():
    """Solution 2: with GradScaler the order is right; the warning comes from a skipped first step."""
    (ran, skipped, scheduler), warned = _warned(lambda: _amp_loop(check_skip=False))
    assert len(warned) == 1  # the right order still warns: the first optimizer step was skipped
    assert scheduler.last_epoch == ran + skipped  # the schedule also advanced on the skipped steps
    (ran, skipped, scheduler), warned = _warned(lambda: _amp_loop(check_skip=True))
    assert not warned
    assert scheduler.last_epoch == ran  # one scheduler step per real update
    assert abs(scheduler.get_last_lr()[0] - 0.1 * 0.5 ** ran) < 1e-12

    # a fused optimizer: the scaler calls its step() anyway and the kernel skips the update, without a warning
    def fused_first_step():
        model = torch.nn.Linear(4, 2)
        optimizer = torch.optim.AdamW(model.parameters(), lr=0.1, fused=True)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
        scaler = torch.amp.GradScaler("cpu")
        before = model.weight.detach().clone()
        g = torch.Generator().manual_seed(10)
        x, y = torch.randn(8, 4, generator=g) * 3, torch.randn(8, 2, generator=g)
        with torch.autocast("cpu", dtype=torch.float16):
            out = model(x)
        optimizer.zero_grad()
        scaler.scale(F.mse_loss(out.float(), y) * 1000).backward()
        scale = scaler.get_scale()
        scaler.step(optimizer)
        scaler.update()
        stepped = scaler.get_scale() >= scale
        scheduler.step()
        return torch.equal(before, model.weight), stepped

    (unchanged, stepped), warned = _warned(fused_first_step)
    assert unchanged and not warned and not stepped, (unchanged, warned, stepped)


def scheduler_on_the_final_optimizer():
    """Solution 3: the scheduler must be built on the optimizer the loop steps, not on one replaced afterwards."""
    def loop(rebuild_after_scheduler):
        model = torch.nn.Linear(4, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # e.g. rebuilt when resuming
        if not rebuild_after_scheduler:
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)  # built on the final one
        used = []
        for x, y in _batches():
            _epoch(model, optimizer, x, y, used)
            scheduler.step()
        return used

    used, warned = _warned(lambda: loop(True))
    assert len(warned) == 1 and used == [0.1, 0.1, 0.1], (len(warned), used)  # the schedule never reached it
    used, warned = _warned(lambda: loop(False))
    assert not warned and used == [0.1, 0.05, 0.025], used


def example_fix():
    """The record's exampleFix ("after"): the loop with optimizer.step() before scheduler.step()."""
    model, optimizer, scheduler = _setup()
    before = model.weight.detach().clone()
    names, warned = _warned(lambda: record.run(
        "exampleFix", {"torch": torch, "model": model, "optimizer": optimizer, "scheduler": scheduler,
                       "batches": _batches()}, section="after"))
    assert not warned
    assert not torch.equal(before, model.weight)
    assert scheduler.last_epoch == 3 and abs(optimizer.param_groups[0]["lr"] - 0.0125) < 1e-12
