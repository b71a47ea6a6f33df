"""Class-index targets for cross_entropy / nll_loss must have the logits' shape without the class dimension: logits
(N, C, H, W) need targets (N, H, W). With 4-D logits torch takes the 2-D (spatial) NLL kernel, whose input check
check_inputs_nll_loss2d (aten/src/ATen/native/LossNLL2d.cpp) compares the batch and both spatial sizes and raises
RuntimeError "size mismatch (got input: [N, C, H, W] , target: [N, H', W']" when any differs. The trigger is the
usual segmentation case: a decoder's logits at half the resolution of the label masks. Solution 1 upsamples the
logits to the masks' size (bilinear) before the loss; solution 2 downsamples the masks with nearest-neighbour
sampling, which keeps class ids and the ignore value 255 (bilinear sampling would invent values between ids, shown).
The record's exampleFix (solution 1) and validationCode run from its text; the guard passes the target layouts
cross_entropy accepts (index masks with 255 ignored, class-probability targets, 1-D sequences, 3-D volumes, plain
(N, C) batches, a single unbatched sample with a scalar or, where the release accepts it, a 1-element target) and
generated shapes, each proven by calling F.cross_entropy.

Cold review (review2): the guard used to flag 1-D logits with a 1-element 1-D target, which torch 2.13.0 accepts
(F.cross_entropy(torch.randn(10), torch.tensor([3])) returns a loss; torch 2.5.1 refuses it with "size mismatch (got
input: [10], target: [1])"): the guard now allows () and (1,) for one unbatched sample, and valid_unbatched_one_element
proves the 1-element target where the running release accepts it (the scalar target otherwise).

Results: errkb reproduce loss-input-and-target-size-differ (torch 2.13.0+cpu) --with torch==2.5.1 --with
torch==2.15.0. The excerpt is the stored upstream copy of LossNLL2d.cpp at 0aafd810d15f, where the TORCH_CHECK is at
line 69; the 2.13.0 build reports line 73 (offset 4, lines added above the function in that release's file).

Drafted by `errkb draft` from seg.py on torch 2.13.0+cpu, Python 3.11.7:
  RuntimeError: size mismatch (got input: [2, 3, 4, 4] , target: [2, 8, 8]
  raised at aten/src/ATen/native/LossNLL2d.cpp:73 (check_inputs_nll_loss2d)
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version).
"""
NEEDS = {'packages': {'torch': '>=2.0', 'hypothesis': ''}, 'cuda_devices': 0, 'timeout_s': 90}
SOLUTIONS = {1: "upsample_logits", 2: "nearest_downsample_masks"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["logits", "masks", "F"], "validationCode": ["logits", "target"]}
VALID = {"masks-with-ignore-255": "valid_ignore_255", "class-probabilities": "valid_probabilities",
         "sequence-1d": "valid_sequence", "volume-3d": "valid_volume", "plain-batch": "valid_plain_batch",
         "unbatched-sample": "valid_unbatched", "unbatched-one-element-target": "valid_unbatched_one_element",
         "generated-shapes": "valid_generated"}
WORDINGS = [
    {'text': 'size mismatch (got input: [2, 3, 4, 4] , target: [2, 8, 8]', 'source': 'torch==2.13.0', 'match': 'pattern'},
    {'text': 'size mismatch (got input: [2, 3, 4, 4] , target: [2, 8, 8]', 'source': 'torch==2.5.1', 'match': 'pattern'},
    {'text': 'size mismatch (got input: [2, 3, 4, 4] , target: [2, 8, 8]', 'source': 'torch==2.15.0', 'match': 'pattern'},
    {'text': "input and target batch or spatial sizes don't match: target [2, 256, 256], input [2, 2, 68, 68]",
     'source': 'ugent-korea/pytorch-unet-segmentation#19', 'match': 'pattern'},
    {'text': "input and target batch or spatial sizes don't match: target [1 x 75 x 94], input [1 x 8 x 19 x 24]",
     'source': 'CSAILVision/semantic-segmentation-pytorch#66', 'match': 'pattern'},
    {'text': 'size mismatch (got input: [10], target: [256])', 'source': 'jeonsworld/MLP-Mixer-Pytorch#3',
     'match': 'pattern'},
]
PROVENANCE = {'checked': 'native-build', 'dist': 'torch', 'version': '2.13.0+cpu', 'excerpt': 'upstream-copy',
              'commit': '0aafd810d15fe1943f9badd40228f29e25a5014f', 'offset': 4}

import errkb_record as record


def trigger():
    import torch
    import torch.nn.functional as F
    logits = torch.randn(2, 3, 4, 4)            # a decoder's output at 1/2 resolution
    masks = torch.randint(0, 3, (2, 8, 8))      # the labels at full resolution
    loss = F.cross_entropy(logits, masks)


def _situation():
    import torch

    torch.manual_seed(0)
    head = torch.nn.Conv2d(4, 3, kernel_size=3, stride=2, padding=1)  # 8x8 features -> 4x4 logits
    features = torch.randn(2, 4, 8, 8)
    masks = torch.randint(0, 3, (2, 8, 8))
    masks[0, :2] = 255  # unlabelled pixels, ignored by ignore_index=255
    return head, features, masks


def upsample_logits():
    """Solution 1: bring the logits to the masks' size, then the loss; the head still gets gradients."""
    import torch
    import torch.nn.functional as F

    head, features, masks = _situation()
    logits = head(features)
    assert logits.shape[-2:] != masks.shape[-2:]
    logits = F.interpolate(logits, size=masks.shape[-2:], mode="bilinear", align_corners=False)
    loss = F.cross_entropy(logits, masks, ignore_index=255)
    assert torch.isfinite(loss), loss
    loss.backward()
    assert head.weight.grad is not None and head.weight.grad.abs().sum() > 0


def nearest_downsample_masks():
    """Solution 2: resize the masks to the logits' size with nearest sampling: ids (and 255) survive unchanged."""
    import torch
    import torch.nn.functional as F

    head, features, masks = _situation()
    logits = head(features)
    small = F.interpolate(masks[:, None].float(), size=logits.shape[-2:], mode="nearest").squeeze(1).long()
    assert set(small.unique().tolist()) <= set(masks.unique().tolist()), small.unique()
    loss = F.cross_entropy(logits, small, ignore_index=255)
    assert torch.isfinite(loss), loss
    loss.backward()
    assert head.weight.grad.abs().sum() > 0
    # bilinear sampling of the same masks invents values that are no class id
    blurred = F.interpolate(masks[:, None].float(), size=logits.shape[-2:], mode="bilinear", align_corners=False)
    assert not set(blurred.unique().tolist()) <= set(masks.unique().float().tolist())


def example_fix():
    import torch
    import torch.nn.functional as F

    head, features, masks = _situation()
    masks[masks == 255] = 0  # the exampleFix uses the default ignore_index
    logits = head(features)
    names = record.run("exampleFix", {"logits": logits, "masks": masks, "F": F}, section="after")
    assert torch.isfinite(names["loss"]), names["loss"]
    assert names["logits"].shape[-2:] == masks.shape[-2:]


def guard():
    import torch

    assert not record.check("validationCode", {"logits": torch.randn(2, 3, 4, 4), "target": torch.randint(0, 3, (2, 8, 8))})
    assert not record.check("validationCode", {"logits": torch.randn(10), "target": torch.randint(0, 10, (256,))})
    assert record.check("validationCode", {"logits": torch.randn(2, 3, 8, 8), "target": torch.randint(0, 3, (2, 8, 8))})
    assert not record.check("validationCode", {"logits": torch.randn(10), "target": torch.randint(0, 10, (2,))})


def _accepted(logits, target, **kw):
    import torch
    import torch.nn.functional as F

    loss = F.cross_entropy(logits, target, **kw)
    assert torch.isfinite(loss) or target.numel() == 0
    return {"logits": logits, "target": target}


def valid_ignore_255():
    import torch

    target = torch.randint(0, 3, (2, 8, 8))
    target[:, :3] = 255
    return _accepted(torch.randn(2, 3, 8, 8), target, ignore_index=255)


def valid_probabilities():
    import torch

    logits = torch.randn(2, 3, 8, 8)
    return _accepted(logits, torch.softmax(torch.randn(2, 3, 8, 8), dim=1))


def valid_sequence():
    import torch

    return _accepted(torch.randn(4, 5, 7), torch.randint(0, 5, (4, 7)))


def valid_volume():
    import torch

    return _accepted(torch.randn(1, 3, 4, 5, 6), torch.randint(0, 3, (1, 4, 5, 6)))


def valid_plain_batch():
    import torch

    return [_accepted(torch.randn(n, 10), torch.randint(0, 10, (n,))) for n in (1, 64)]


def valid_unbatched():
    import torch

    return _accepted(torch.randn(10), torch.tensor(3))


def valid_unbatched_one_element():
    import torch

    try:
        return _accepted(torch.randn(10), torch.tensor([3]))
    except RuntimeError as exc:  # a release that refuses a 1-element target for 1-D logits
        assert "size mismatch" in str(exc), exc
        return _accepted(torch.randn(10), torch.tensor(3))


def valid_generated():
    from hypothesis import strategies as st
    import torch

    def build(args):
        n, c, spatial = args
        return _accepted(torch.randn(n, c, *spatial), torch.randint(0, c, (n, *spatial)))

    return st.tuples(st.integers(1, 3), st.integers(2, 4), st.lists(st.integers(1, 5), min_size=0, max_size=3)).map(build)
