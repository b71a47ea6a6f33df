"""A convolution needs its input and its weight to be the same kind of tensor: same dtype, same device. Before it
picks a kernel, torch's convolution (aten/src/ATen/native/Convolution.cpp, check_input_same_type_as_parameters)
compares the two tensors' types and raises RuntimeError "Input type (X) and weight type (Y) should be the same"; on
the CPU, where the oneDNN (MKLDNN) backend is chosen, the message goes on "or input should be a MKLDNN tensor and
weight is a dense tensor". The trigger is the CPU case: a Conv2d (bias=False, as before a BatchNorm) whose weights
were cast to float16 with model.half(), fed a float32 batch. With a GPU the same check produces the wordings users
paste most (weights on CUDA, batch on the CPU, or the reverse); they are cited from issues, this CPU-only matrix
cannot show them. Solution 1 casts and moves the batch to the parameters' dtype and device (next(model.parameters()));
solution 2 casts the model back to float32 instead. The record's exampleFix (solution 1) and validationCode run from
its text; the guard passes a float32 model and batch, a float16 model with a float16 batch, an MKLDNN-layout batch
for a dense float32 model (the case the message itself allows) and an embedding model fed integer token ids; the
guard stage also shows a bfloat16 batch for float32 weights passing under torch.autocast (and flagged without it).

Cold review (review2): the exampleFix's after part no longer wraps the forward in torch.no_grad() (its before part has
none, and a user pasting it into a training loop would have lost every gradient); its stage now also runs backward
through it. The guard crashed with StopIteration on a model without parameters (next() without a default) and
flagged a CPU batch for a model wrapped in nn.DataParallel, whose forward scatters the batch to its GPUs
(valid_dataparallel_cpu_batch runs that real case when CUDA is present, the CPU wrapper otherwise); both fixed. The
guard still flags a model whose forward casts its input to its weights' dtype itself (as Hugging Face vision
embeddings do): model_casting_its_input in the guard stage shows torch running it and the guard flagging it, and the
record says so. The pattern did not accept the bias wording of conv1d/conv2d/conv3d's own dtype check
("Input type (float) and bias type (c10::Half) should be the same", Convolution.cpp:1012 conv2d_symint in
2.13.0), which is what a default (biased) nn.Conv2d cast with .half() gives for a float32 batch on the CPU; it now
does, and both solutions are also applied to a biased convolution (_biased_case).

Results: errkb reproduce input-type-and-weight-type-differ (torch 2.13.0+cpu) --with torch==2.5.1 --with
torch==2.15.0. The excerpt is the function as stored at commit 954cecd17071 of pytorch/pytorch (an older commit: the
stored copies hold no later one); the installed 2.13.0 build reports the raise at Convolution.cpp:863, and whether
that build's lines read the same was not checked (PROVENANCE says unverified).

Drafted by `errkb draft` from wtype.py on torch 2.13.0+cpu, Python 3.11.7:
  RuntimeError: Input type (torch.FloatTensor) and weight type (torch.HalfTensor) should be the same or input should be a MKLDNN tensor and weight is a dense tensor
  raised at aten/src/ATen/native/Convolution.cpp:863
Commit: cf30153c4c131c8164ee7798e5022d810682e2cb (torch.version.git_version).
"""
NEEDS = {'packages': {'torch': '>=2.5'}, 'cuda_devices': 0, 'timeout_s': 67}
SOLUTIONS = {1: "input_to_parameters", 2: "model_to_float32"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["model", "images"], "validationCode": ["model", "x"]}
KEEP = ["model"]
VALID = {"float32-model-and-batch": "valid_float32", "float16-model-and-batch": "valid_float16",
         "mkldnn-batch-dense-weights": "valid_mkldnn_batch", "embedding-token-ids": "valid_token_ids",
         "dataparallel-cpu-batch": "valid_dataparallel_cpu_batch", "no-parameters": "valid_no_parameters"}
WORDINGS = [
    {'text': 'Input type (torch.FloatTensor) and weight type (torch.HalfTensor) should be the same or input should be '
             'a MKLDNN tensor and weight is a dense tensor', 'source': 'torch==2.13.0', 'match': 'pattern'},
    {'text': 'Input type (torch.FloatTensor) and weight type (torch.HalfTensor) should be the same or input should be '
             'a MKLDNN tensor and weight is a dense tensor', 'source': 'torch==2.5.1', 'match': 'pattern'},
    {'text': 'Input type (torch.FloatTensor) and weight type (torch.HalfTensor) should be the same or input should be '
             'a MKLDNN tensor and weight is a dense tensor', 'source': 'torch==2.15.0', 'match': 'pattern'},
    {'text': 'Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same or input '
             'should be a MKLDNN tensor and weight is a dense tensor', 'source': 'jsczzzk/R-MSFM#14', 'match': 'pattern'},
    {'text': 'Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same',
     'source': 'yuanyuanli85/Fast_Human_Pose_Estimation_Pytorch#7', 'match': 'pattern'},
    {'text': 'Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same',
     'source': 'ANYMS-A/Skeleton_Aware_Networks_for_Deep_Motion_Retargeting#1', 'match': 'pattern'},
    {'text': 'Input type (torch.FloatTensor) and weight type (torch.HalfTensor) should be the same or input should be '
             'a MKLDNN tensor and weight is a dense tensor',
     'source': 'AUTOMATIC1111/stable-diffusion-webui-feature-showcase#24', 'match': 'pattern'},
    {'text': 'Input type (float) and bias type (c10::Half) should be the same',
     'source': 'shunk031/training-free-structured-diffusion-guidance#10', 'match': 'pattern'},
    {'text': 'Input type (float) and bias type (struct c10::Half) should be the same',
     'source': 'lshqqytiger/stable-diffusion-webui-amdgpu#168', 'match': 'pattern'},
    {'text': 'Input type (struct c10::Half) and bias type (float) should be the same',
     'source': 'open-mmlab/mmdetection#11653', 'match': 'pattern'},
    {'text': 'Input type (c10::Half) and bias type (float) should be the same',
     'source': 'eckertzhang/HumanRef#3', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'native-build', 'dist': 'torch', 'version': '2.13.0+cpu', 'excerpt': 'unverified'}

import errkb_record as record


def trigger():
    import torch
    from torch import nn

    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
    model = model.half().eval()   # float16 weights (a checkpoint saved in half precision)
    images = torch.randn(2, 3, 32, 32)        # the batch is still float32
    with torch.no_grad():
        out = model(images)


def _situation():
    import torch
    from torch import nn

    torch.manual_seed(0)
    reference = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU()).eval()
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
    model.load_state_dict(reference.state_dict())
    model = model.half().eval()
    images = torch.randn(2, 3, 32, 32)
    return reference, model, images


def _biased_case(fix):
    """A default Conv2d (with a bias) in float16 and a float32 batch: the bias check's wording; then the fix."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    reference = nn.Conv2d(3, 4, 3).eval()
    model = nn.Conv2d(3, 4, 3)
    model.load_state_dict(reference.state_dict())
    model = model.half().eval()
    images = torch.randn(1, 3, 8, 8)
    try:
        with torch.no_grad():
            model(images)
    except RuntimeError as exc:
        assert "Input type (float) and bias type (c10::Half) should be the same" in str(exc), exc
    else:
        raise AssertionError("a float16 convolution with a bias accepted a float32 batch")
    with torch.no_grad():
        out = fix(model, images)
        assert torch.allclose(out.float(), reference(images), atol=2e-2), (out.float() - reference(images)).abs().max()


def input_to_parameters():
    """Solution 1: the batch takes the dtype and device of the model's parameters; the model is untouched."""
    import torch

    reference, model, images = _situation()
    param = next(model.parameters())
    with torch.no_grad():
        out = model(images.to(device=param.device, dtype=param.dtype))
        expected = reference(images)
    assert out.dtype == torch.float16 and out.shape == (2, 8, 32, 32)
    assert next(model.parameters()).dtype == torch.float16  # the model stayed in half precision
    assert torch.allclose(out.float(), expected, atol=2e-2), (out.float() - expected).abs().max()

    def batch_to_parameters(model, images):
        param = next(model.parameters())
        return model(images.to(device=param.device, dtype=param.dtype))

    _biased_case(batch_to_parameters)


def model_to_float32():
    """Solution 2: cast the model to the batch's dtype (float32 on the CPU) instead."""
    import torch

    reference, model, images = _situation()
    model = model.float()
    with torch.no_grad():
        out = model(images)
        expected = reference(images)
    assert out.dtype == torch.float32
    assert torch.allclose(out, expected, atol=1e-2), (out - expected).abs().max()
    _biased_case(lambda model, images: model.float()(images))


def example_fix():
    import torch

    reference, model, images = _situation()
    names = record.run("exampleFix", {"model": model, "images": images}, section="after")
    out = names["out"]
    assert out.dtype == torch.float16 and out.shape == (2, 8, 32, 32)
    with torch.no_grad():
        assert torch.allclose(out.float(), reference(images), atol=2e-2)
    # the fix keeps the graph: a training step can backpropagate through it
    out.float().sum().backward()
    assert model[0].weight.grad is not None


def guard():
    import torch

    reference, model, images = _situation()
    assert not record.check("validationCode", {"model": model, "x": images})
    assert record.check("validationCode", {"model": model, "x": images.half()})
    assert record.check("validationCode", {"model": reference, "x": images})
    # under autocast a bfloat16 batch for float32 weights is accepted by the model and passes the guard
    with torch.autocast("cpu", dtype=torch.bfloat16), torch.no_grad():
        assert reference(images.bfloat16()).dtype == torch.bfloat16
        assert record.check("validationCode", {"model": reference, "x": images.bfloat16()})
    assert not record.check("validationCode", {"model": reference, "x": images.bfloat16()})  # without autocast
    model_casting_its_input()


def model_casting_its_input():
    """What the guard leaves out: a model whose forward casts its input itself runs, and the guard still flags it."""
    import torch
    from torch import nn

    class CastsInput(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, bias=False)

        def forward(self, x):
            return self.conv(x.to(self.conv.weight.dtype))

    model = CastsInput().half().eval()
    images = torch.randn(1, 3, 8, 8)
    with torch.no_grad():
        assert model(images).dtype == torch.float16
    assert not record.check("validationCode", {"model": model, "x": images})


def _runs(model, x):
    import torch

    with torch.no_grad():
        model(x)
    return {"model": model, "x": x}


def valid_float32():
    import torch
    from torch import nn

    return _runs(nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU()).eval(), torch.randn(1, 3, 8, 8))


def valid_float16():
    import torch
    from torch import nn

    return _runs(nn.Sequential(nn.Conv2d(3, 4, 3, bias=False)).half().eval(), torch.randn(1, 3, 8, 8).half())


def valid_mkldnn_batch():
    import torch
    from torch import nn

    return _runs(nn.Sequential(nn.Conv2d(3, 4, 3, bias=False)).eval(), torch.randn(1, 3, 8, 8).to_mkldnn())


def valid_token_ids():
    import torch
    from torch import nn

    return _runs(nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 2)), torch.tensor([[1, 2, 3]]))


def valid_dataparallel_cpu_batch():
    import torch
    from torch import nn

    model = nn.Sequential(nn.Conv2d(3, 4, 3, bias=False)).eval()
    if torch.cuda.is_available():
        model = nn.DataParallel(model.cuda())  # the batch stays on the CPU: DataParallel scatters it
    else:
        model = nn.DataParallel(model)  # no GPU: the wrapper calls the module as it is
    return _runs(model, torch.randn(2, 3, 8, 8))


def valid_no_parameters():
    import torch
    from torch import nn

    return _runs(nn.Sequential(nn.Upsample(scale_factor=2), nn.ReLU()), torch.randn(1, 3, 8, 8))
