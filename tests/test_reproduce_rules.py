"""The reproduction rules one by one, without subprocesses: the contract, class/message/site comparison, verdicts."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from errkb.model import Envelope
from errkb.reproduce import compare, runner
from errkb.reproduce.contract import ContractError, Needs, missing_hardware, missing_packages, read_contract, read_needs
from errkb.reproduce.libraries import LIBRARIES, Library, resolve
from reproduce_support import record_with

HANLP = Library("hankcs/HanLP", "hanlp", "hanlp", "/site-packages/hanlp", "2.1.5")
TORCH = Library("pytorch/pytorch", "torch", "torch", "/site-packages/torch", "2.13.0")
TAGGER = "/site-packages/hanlp/components/taggers/tagger.py"


def record(**changes):
    return Envelope.model_validate(record_with(changes)).record


SEED = record()
NATIVE = record(
    repo="pytorch/pytorch", filePath="aten/src/ATen/native/PackedSequence.cpp", lineNumber=22,
    errorClass="RuntimeError", errorMessage="`lengths` array must be sorted", messagePattern="array must be sorted",
    sourceCode="a\nb\nc", sourceCodeStart=21, sourceCodeEnd=23,
)


def exception(cls="ValueError", message="DataParallel not supported when CRF is used", frames=None, mro=None):
    frames = [["/repro/x.py", 3, "trigger"], [TAGGER, 37, "build_criterion"]] if frames is None else frames
    return {"class": cls, "mro": mro or [cls, "Exception", "BaseException"], "message": message, "frames": frames}


def warning(message, cls="UserWarning", frames=None):
    return {"class": cls, "mro": [cls, "Warning", "Exception", "BaseException"], "message": message,
            "filename": "/repro/x.py", "lineno": 3, "frames": frames or []}


# --- class, path ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "expected, mro, matches",
    [
        ("ValueError", ["ValueError", "Exception", "BaseException"], True),
        ("Exception", ["ValueError", "Exception", "BaseException"], True),  # a subclass of the record's class
        ("builtins.ValueError", ["ValueError", "Exception"], True),
        ("RuntimeError", ["ValueError", "Exception"], False),
        ("torch.OutOfMemoryError", ["torch.OutOfMemoryError", "RuntimeError"], True),
        ("torch.cuda.OutOfMemoryError", ["torch.OutOfMemoryError", "RuntimeError"], True),  # re-exported
        ("OutOfMemoryError", ["torch.OutOfMemoryError", "RuntimeError"], True),
        ("torch.OutOfMemoryError", ["jax.OutOfMemoryError", "RuntimeError"], False),
        ("hanlp.ValueError", ["ValueError", "Exception"], False),
        ("UserWarning", ["torch.jit.TracerWarning", "Warning"], False),
    ],
)
def test_class_matches(expected, mro, matches):
    assert compare.class_matches(expected, mro) is matches


@pytest.mark.parametrize(
    "found, file_path, matches",
    [
        ("hanlp/components/taggers/tagger.py", "hanlp/components/taggers/tagger.py", True),
        ("/__w/pytorch/pytorch/aten/src/ATen/native/PackedSequence.cpp", "aten/src/ATen/native/PackedSequence.cpp", True),
        ("torchcrf/__init__.py", "src/torchcrf/__init__.py", True),  # a repository's src/ layout
        ("hanlp/components/taggers/rnn_tagger.py", "hanlp/components/taggers/tagger.py", False),
        ("xaten/src/ATen/native/PackedSequence.cpp", "aten/src/ATen/native/PackedSequence.cpp", False),
    ],
)
def test_path_matches(found, file_path, matches):
    assert compare.path_matches(found, file_path) is matches


def test_library_table_knows_the_catalog_repos():
    assert {"hankcs/HanLP", "pytorch/pytorch", "kmkurn/pytorch-crf"} <= set(LIBRARIES)
    hanlp = resolve("hankcs/HanLP")
    assert hanlp.installed and hanlp.version == "2.1.5"
    assert hanlp.contains(str(Path(hanlp.location) / "components" / "taggers" / "tagger.py"))
    assert hanlp.relative(str(Path(hanlp.location) / "components" / "taggers" / "tagger.py")) == "hanlp/components/taggers/tagger.py"
    assert not hanlp.contains(hanlp.location + "_extra/x.py")  # a sibling folder that shares the prefix
    assert resolve("someone/unknown") is None


# --- the trigger ---------------------------------------------------------------------------------------------

def test_the_innermost_library_frame_is_the_raise_site():
    frames = [["/repro/x.py", 3, "trigger"], [TAGGER, 37, "build_criterion"], ["/site-packages/torch/x.py", 9, "f"]]
    judged = compare.judge_trigger({"exception": exception(frames=frames)}, SEED, HANLP)
    assert judged.ok and judged.observed.site == "hanlp/components/taggers/tagger.py:37"


def test_raise_outside_the_library_is_the_wrong_error():
    judged = compare.judge_trigger({"exception": exception(frames=[["/repro/x.py", 7, "trigger"]])}, SEED, HANLP)
    assert judged.verdict == compare.WRONG_ERROR
    assert judged.reason.endswith("got none inside hanlp (/repro/x.py:7)")


def test_every_difference_is_explained_at_once():
    judged = compare.judge_trigger({"exception": exception("KeyError", "'crf'", [["/site-packages/hanlp/a.py", 5, "f"]])}, SEED, HANLP)
    assert judged.reason == (
        "trigger() raised the wrong error: class: expected ValueError, got KeyError; "
        "message: expected a match for 'DataParallel not supported when CRF is used', got \"'crf'\"; "
        "raise site: expected hanlp/components/taggers/tagger.py, got hanlp/a.py:5"
    )


def test_nothing_raised_is_not_reproduced_and_names_the_warnings_seen():
    judged = compare.judge_trigger({"exception": None, "warnings": [warning("something else")]}, SEED, HANLP)
    assert judged.verdict == compare.NOT_REPRODUCED
    assert "returned without raising ValueError" in judged.reason
    assert "1 warning(s), first UserWarning: 'something else'" in judged.reason


def test_drift_is_reported_not_failed():
    frames = [[TAGGER, 40, "build_criterion"]]
    judged = compare.judge_trigger({"exception": exception(frames=frames)}, SEED, HANLP)
    assert judged.ok
    assert compare.drift(judged.observed, SEED, HANLP) == (
        "raise line 40 (build_criterion) in installed hanlp 2.1.5, record says hanlp/components/taggers/tagger.py:37"
    )


def test_no_drift_when_the_record_names_the_caller_of_a_raising_helper_in_the_same_file():
    # DDP decides at one line and raises in _log_and_throw further down the same file.
    frames = [[TAGGER, 37, "build_criterion"], [TAGGER, 120, "_log_and_throw"]]
    judged = compare.judge_trigger({"exception": exception(frames=frames)}, SEED, HANLP)
    assert judged.ok and judged.observed.site == "hanlp/components/taggers/tagger.py:120"
    assert compare.drift(judged.observed, SEED, HANLP) is None


CPP_MESSAGE = (
    "`lengths` array must be sorted in decreasing order\n"
    "Exception raised from _pack_padded_sequence at /__w/pytorch/pytorch/aten/src/ATen/native/PackedSequence.cpp:54"
    " (most recent call first):\nC++ CapturedTraceback:\n#4 ?? from libc10.so:700674\n"
)


def test_native_raise_site_comes_from_the_cpp_location():
    judged = compare.judge_trigger({"exception": exception("RuntimeError", CPP_MESSAGE, [["/repro/x.py", 3, "t"]])}, NATIVE, TORCH)
    assert judged.ok, judged.reason
    seen = judged.observed
    assert seen.message == "`lengths` array must be sorted in decreasing order"
    assert seen.site == "aten/src/ATen/native/PackedSequence.cpp:54"
    assert compare.drift(seen, NATIVE, TORCH).startswith("raise line 54 (_pack_padded_sequence) in installed torch")


def test_python_record_ignores_a_cpp_location_in_the_message():
    message = "DataParallel not supported when CRF is used\nException raised from f at /x/y.cpp:3 (most recent call first):\n#0 ..."
    judged = compare.judge_trigger({"exception": exception(message=message)}, SEED, HANLP)
    assert judged.ok and judged.observed.message == "DataParallel not supported when CRF is used"
    assert judged.observed.site == "hanlp/components/taggers/tagger.py:37"


def test_native_raise_in_another_cpp_file_is_the_wrong_error():
    message = CPP_MESSAGE.replace("native/PackedSequence.cpp", "ExpandUtils.cpp")
    judged = compare.judge_trigger({"exception": exception("RuntimeError", message)}, NATIVE, TORCH)
    assert judged.verdict == compare.WRONG_ERROR
    assert "expected aten/src/ATen/native/PackedSequence.cpp, got /__w/pytorch/pytorch/aten/src/ATen/ExpandUtils.cpp:54" in judged.reason


def test_native_record_without_a_cpp_location_is_the_wrong_error():
    judged = compare.judge_trigger({"exception": exception("RuntimeError", "`lengths` array must be sorted")}, NATIVE, TORCH)
    assert "found no 'Exception raised from' location" in judged.reason


def test_native_warning_site_comes_from_triggered_internally():
    native_warning = record(
        repo="pytorch/pytorch", filePath="aten/src/ATen/native/Resize.cpp", lineNumber=30, errorClass="UserWarning",
        errorMessage="An output with one or more elements was resized", messagePattern="output .* was resized",
        sourceCode="a\nb\nc", sourceCodeStart=29, sourceCodeEnd=31,
    )
    message = ("An output with one or more elements was resized since it had shape [3]. "
               "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/Resize.cpp:30.)")
    judged = compare.judge_trigger({"exception": None, "warnings": [warning(message)]}, native_warning, TORCH)
    assert judged.ok, judged.reason
    assert judged.observed.message.endswith("shape [3].")
    assert judged.observed.site == "aten/src/ATen/native/Resize.cpp:30"


def test_warning_of_another_class_with_the_message_is_the_wrong_error():
    warns = record(errorClass="FutureWarning")
    frames = [[TAGGER, 37, "build_criterion"]]
    judged = compare.judge_trigger(
        {"exception": None, "warnings": [warning("DataParallel not supported when CRF is used", frames=frames)]}, warns, HANLP
    )
    assert judged.verdict == compare.WRONG_ERROR
    assert "class: expected FutureWarning, got UserWarning" in judged.reason


# --- the fix -------------------------------------------------------------------------------------------------

def test_fix_that_raises_fails_and_says_where():
    documented = compare.judge_trigger({"exception": exception()}, SEED, HANLP).observed
    fixed = compare.judge_fix({"exception": exception("AssertionError", "", [["/repro/x.py", 12, "fix"]])}, SEED, HANLP, documented)
    assert fixed.verdict == compare.FIX_FAILED
    assert fixed.reason == "fix() raised AssertionError at /repro/x.py:12"


def test_fix_that_completes_verifies():
    documented = compare.judge_trigger({"exception": exception()}, SEED, HANLP).observed
    assert compare.judge_fix({"exception": None, "warnings": []}, SEED, HANLP, documented).verdict == compare.VERIFIED


# --- the contract --------------------------------------------------------------------------------------------

def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "repro.py"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_needs_is_read_without_importing(tmp_path):
    path = write(tmp_path, """
        NEEDS = {"packages": {"hanlp": "==2.1.5"}, "cuda_devices": 2, "timeout_s": 90}
        SOLUTIONS = {1: "single_device", 2: "crf_off"}
        CODE = {"validationCode": "guard"}
        raise SystemExit("importing this file would fail")
        def trigger(): pass
        def single_device(): pass
        def crf_off(): pass
        def guard(): pass
    """)
    assert read_needs(path) == Needs({"hanlp": "==2.1.5"}, 2, 90.0)
    contract = read_contract(path)
    assert [(c.label, c.function) for c in contract.claims] == [
        ("solution 1", "single_device"), ("solution 2", "crf_off"), ("validationCode", "guard")]


@pytest.mark.parametrize(
    "source, message",
    [
        ('NEEDS = {}\nSOLUTIONS = {1: "fix"}\ndef trigger(): pass\n', "no top-level def fix() (named in SOLUTIONS/CODE)"),
        ('NEEDS = {}\ndef trigger(): pass\n', "no top-level SOLUTIONS"),
        ('NEEDS = {}\nSOLUTIONS = {2: "fix"}\ndef trigger(): pass\ndef fix(): pass\n', "SOLUTIONS keys must be the solution numbers 1..1"),
        ('NEEDS = {}\nSOLUTIONS = {1: fix}\ndef trigger(): pass\ndef fix(): pass\n', "SOLUTIONS must be a literal dict"),
        ('NEEDS = {}\nSOLUTIONS = {1: "fix"}\nCODE = {"guard": "fix"}\ndef trigger(): pass\ndef fix(): pass\n', "CODE has unknown field(s) guard"),
        ('SOLUTIONS = {1: "fix"}\ndef trigger(): pass\ndef fix(): pass\n', "no top-level NEEDS"),
        ('NEEDS = [1]\nSOLUTIONS = {1: "fix"}\ndef trigger(): pass\ndef fix(): pass\n', "NEEDS is a list, expected a dict"),
        ('NEEDS = {"gpus": 1}\nSOLUTIONS = {1: "fix"}\ndef trigger(): pass\ndef fix(): pass\n', "unknown key(s) gpus"),
        ('NEEDS = {"packages": {"torch": "2.1"}}\nSOLUTIONS = {1: "fix"}\ndef trigger(): pass\ndef fix(): pass\n', "'2.1' is not a version specifier"),
        ('NEEDS = {"cuda_devices": True}\nSOLUTIONS = {1: "fix"}\ndef trigger(): pass\ndef fix(): pass\n', "expected a whole number >= 0"),
        ('NEEDS = {"timeout_s": 0}\nSOLUTIONS = {1: "fix"}\ndef trigger(): pass\ndef fix(): pass\n', "expected seconds > 0"),
        ('NEEDS = {"torch_build": "rocm"}\nSOLUTIONS = {1: "fix"}\ndef trigger(): pass\ndef fix(): pass\n', "expected one of 'cpu', 'cuda'"),
        ('NEEDS = {"nvidia_driver": 0}\nSOLUTIONS = {1: "fix"}\ndef trigger(): pass\ndef fix(): pass\n', "expected True or False"),
        ('NEEDS = {\ndef trigger(): pass\n', "cannot parse repro.py"),
    ],
)
def test_contract_errors_say_what_is_wrong(tmp_path, source, message):
    with pytest.raises(ContractError, match=None) as caught:
        read_needs(write(tmp_path, source))
    assert message in str(caught.value)


def test_missing_hardware_and_packages():
    cpu_build = {"torch": "2.13.0+cpu", "cuda_version": None, "cuda_device_count": 0, "nvidia_driver": False}
    cuda_build_no_driver = {"torch": "2.13.0", "cuda_version": "12.8", "cuda_device_count": 0, "nvidia_driver": False}
    gpu_machine = {"torch": "2.13.0", "cuda_version": "12.8", "cuda_device_count": 1, "nvidia_driver": True}
    assert missing_hardware(Needs(cuda_devices=2), cpu_build) == ["needs 2 CUDA devices, found 0"]
    assert missing_hardware(Needs(cuda_devices=1), cpu_build) == ["needs 1 CUDA device, found 0"]
    assert missing_hardware(Needs(cuda_devices=1), gpu_machine) == []
    assert missing_hardware(Needs(torch_build="cpu"), cpu_build) == []
    assert missing_hardware(Needs(torch_build="cpu"), gpu_machine) == ["needs a CPU build of torch, found a CUDA 12.8 build"]
    assert missing_hardware(Needs(torch_build="cuda"), cpu_build) == ["needs a CUDA build of torch, found a CPU build"]
    no_driver = Needs(torch_build="cuda", nvidia_driver=False)
    assert missing_hardware(no_driver, cuda_build_no_driver) == []
    assert missing_hardware(no_driver, gpu_machine) == ["needs a machine without an NVIDIA driver, a driver is loaded"]
    assert missing_hardware(no_driver, {**cuda_build_no_driver, "nvidia_driver": None}) == [
        "needs a machine without an NVIDIA driver, cannot tell"]
    installed = {"hanlp": "2.1.5", "torch": "2.13.0+cpu"}
    assert missing_packages(Needs({"hanlp": "==2.1.5", "torch": ">=2.1"}), installed) == []
    assert missing_packages(Needs({"hanlp": "<2"}), installed) == ["needs hanlp<2, found 2.1.5"]
    assert missing_packages(Needs({"pytorch-crf": "==0.7.2"}), installed) == ["needs pytorch-crf==0.7.2, not installed"]


# --- the runner, in this process ----------------------------------------------------------------------------

def test_runner_keeps_the_stack_that_emitted_a_warning(tmp_path):
    library = tmp_path / "lib_errkb_test.py"
    library.write_text("import warnings\ndef old():\n    warnings.warn('old api', DeprecationWarning, stacklevel=2)\n")
    path = write(tmp_path, f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import lib_errkb_test
        NEEDS = {{}}
        def trigger():
            lib_errkb_test.old()
            return "the variant"
        def fix():
            variant = "named before raising"
            raise KeyError("k")
    """)
    result = runner.run_stage(str(path), "trigger")
    assert (result["outcome"], result["variant"]) == ("returned", "the variant")
    (emitted,) = result["warnings"]
    assert emitted["class"] == "DeprecationWarning" and emitted["filename"] == str(path)  # stacklevel=2: the caller
    assert emitted["frames"][-1][:2] == [str(library), 3]  # but the stack reaches the warn call
    result = runner.run_stage(str(path), "fix")
    assert result["outcome"] == "raised" and result["variant"] == "named before raising"
    assert result["exception"]["mro"] == ["KeyError", "LookupError", "Exception", "BaseException"]
    assert result["exception"]["message"] == "'k'" and result["exception"]["frames"][-1][2] == "fix"


def _mat1_record():
    from conftest import REPO

    from errkb.validate import load_envelope

    return load_envelope(REPO / "records" / "mat1-and-mat2-shapes-cannot-be-multiplied.json").record


def _addmm_error(where: str) -> dict:
    message = f"addmm: mat1 and mat2 shapes cannot be multiplied (64x3136 and 784x10)\nException raised from addmm at {where}"
    return {"class": "RuntimeError", "mro": ["RuntimeError", "Exception"], "message": message, "frames": []}


@pytest.mark.parametrize("commit, moved_is_drift", [
    ("0" * 40, True),  # another release than the record cites: a moved file is drift
    ("cf30153c4c131c8164ee7798e5022d810682e2cb", False),  # the cited commit itself: the file must match
    (None, False),  # a build that does not say its commit: the file must match
])
def test_a_raise_site_in_another_file_is_drift_only_in_another_release(commit, moved_is_drift):
    record = _mat1_record()
    torch = Library("pytorch/pytorch", "torch", "torch", "/site-packages/torch", "2.16.0", commit)
    moved = compare.observe_exception(_addmm_error("/__w/pytorch/pytorch/aten/src/ATen/native/LinearAlgebraUtils.h:47"), record, torch)
    assert (moved.problems == []) == moved_is_drift
    if moved_is_drift:
        assert compare.drift(moved, record, torch) == (
            "raise site moved to aten/src/ATen/native/LinearAlgebraUtils.h:47 (addmm) in installed torch 2.16.0, "
            "record says aten/src/ATen/native/LinearAlgebra.cpp:194")
    else:
        assert moved.problems == ["raise site: expected aten/src/ATen/native/LinearAlgebra.cpp, "
                                  "got /__w/pytorch/pytorch/aten/src/ATen/native/LinearAlgebraUtils.h:47"]
    same_file = compare.observe_exception(_addmm_error("/__w/pytorch/pytorch/aten/src/ATen/native/LinearAlgebra.cpp:194"), record, torch)
    assert same_file.problems == [] and compare.drift(same_file, record, torch) is None


# --- a name the library lacks, looked up in the caller's own code ----------------------------------------------

@pytest.fixture
def fresh_names_package():
    """The runner runs stages in this process: each test imports its own copy of the package."""
    import sys

    def forget():
        for name in [m for m in sys.modules if m.startswith("pkg_errkb_names")]:
            del sys.modules[name]
    forget()
    yield
    forget()


def _names_package(tmp_path: Path) -> Path:
    package = tmp_path / "pkg_errkb_names"
    package.mkdir()
    (package / "__init__.py").write_text("kept = 1\n")
    (package / "loader.py").write_text("class Iter:\n    def __next__(self):\n        return 1\n")
    return package


def _names_stages(tmp_path: Path) -> Path:
    return write(tmp_path, f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        NEEDS = {{}}
        def submodule():
            from pkg_errkb_names.runner import init_dist
        def exported():
            from pkg_errkb_names import gone
        def attribute():
            from pkg_errkb_names.loader import Iter
            Iter().next()
        def not_installed():
            import pkg_errkb_absent.runner
        def forged():
            import pkg_errkb_names
            raise ModuleNotFoundError("No module named 'pkg_errkb_names.runner'", name="pkg_errkb_names.runner")
    """)


@pytest.mark.parametrize("stage, name, owner", [
    ("submodule", "pkg_errkb_names.runner", "__init__.py"),
    ("exported", "pkg_errkb_names.gone", "__init__.py"),
    ("attribute", "pkg_errkb_names.loader.Iter.next", "loader.py"),
])
def test_the_runner_names_what_python_could_not_find_and_where_it_should_be(tmp_path, stage, name, owner,
                                                                           fresh_names_package):
    package = _names_package(tmp_path)
    result = runner.run_stage(str(_names_stages(tmp_path)), stage)
    exc = result["exception"]
    assert exc["missing"] == {"name": name, "owner_file": str(package / owner)}
    assert exc["raised_how"] == "call"


def test_a_library_that_is_not_installed_lacks_no_name(tmp_path, fresh_names_package):
    _names_package(tmp_path)
    result = runner.run_stage(str(_names_stages(tmp_path)), "not_installed")
    assert result["exception"]["class"] == "ModuleNotFoundError" and result["exception"]["missing"] is None


RUNNER = "No module named 'pkg_errkb_names.runner'"


def _names_record(file_path: str, pattern: str, message: str, cls: str = "ModuleNotFoundError"):
    return record(repo="open-mmlab/mmcv", filePath=file_path, errorClass=cls, errorMessage=message,
                  messagePattern=pattern, lineNumber=1, sourceCode="a\nb\nc", sourceCodeStart=1, sourceCodeEnd=3,
                  githubUrl=f"https://github.com/open-mmlab/mmcv/blob/{SEED.analyzedSha}/{file_path}#L1-L3")


def test_a_missing_name_is_raised_at_the_library_module_that_lacks_it(tmp_path, fresh_names_package):
    package = _names_package(tmp_path)
    library = Library("open-mmlab/mmcv", "pkg_errkb_names", "pkg-errkb-names", str(package), "2.0.0")
    stages = _names_stages(tmp_path)
    at_init = _names_record("pkg_errkb_names/__init__.py", r"No module named 'pkg_errkb_names\.runner'", RUNNER)
    judged = compare.judge_trigger(runner.run_stage(str(stages), "submodule"), at_init, library)
    assert judged.ok and judged.observed.site == "pkg_errkb_names/__init__.py (lacks pkg_errkb_names.runner)"
    # a `raise` statement in the stage is not Python's lookup: no raise site inside the library
    judged = compare.judge_trigger(runner.run_stage(str(stages), "forged"), at_init, library)
    assert judged.verdict == compare.WRONG_ERROR and "got none inside pkg_errkb_names" in judged.reason
    # the record must name the module that lacks the name
    at_loader = _names_record("pkg_errkb_names/loader.py", r"No module named 'pkg_errkb_names\.runner'", RUNNER)
    judged = compare.judge_trigger(runner.run_stage(str(stages), "submodule"), at_loader, library)
    assert judged.verdict == compare.WRONG_ERROR and "expected pkg_errkb_names/loader.py" in judged.reason
    attribute = _names_record("pkg_errkb_names/loader.py", r"object has no attribute 'next'",
                              "'Iter' object has no attribute 'next'", cls="AttributeError")
    judged = compare.judge_trigger(runner.run_stage(str(stages), "attribute"), attribute, library)
    assert judged.ok and judged.observed.site_func == "lacks pkg_errkb_names.loader.Iter.next"
