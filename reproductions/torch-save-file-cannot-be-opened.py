"""torch.save(model.state_dict(), "checkpoints/model.pt") in a working directory that has no checkpoints/ folder.
torch.save hands a path to the C++ PyTorchStreamWriter (caffe2/serialize/inline_container.cc), whose setup() checks
that the path's parent directory exists and raises RuntimeError "Parent directory checkpoints does not exist." (the
parent as it is written in the path, relative paths unresolved). The same check fires when the "parent" exists but
is a file. setup() has a second wording, "File X cannot be opened.", for a target whose folder exists but which
cannot be opened for writing; which builds raise it depends on where that check sits (see the record). Demonstrations,
each on the trigger's model and path: creating the folder first with os.makedirs(..., exist_ok=True) makes the save
work and the checkpoint load back into an equal model (solution 1); the stage also shows what that fix does not cover
(a file named like the folder). Building the path from a known base (the script's folder) instead of the working
directory makes the same save work from any working directory (solution 2); that stage also shows what solution 1
does there (a second checkpoints folder under the working directory). Solution 3 is the second case: the path names
the existing checkpoints folder itself, so the folder exists and the file cannot be opened; the stage asserts that
makedirs changes nothing there, that the save fails with "File checkpoints cannot be opened." (torch 2.5.1) or with the
enforce failure "open file failed with strerror: Is a directory" (2.13.0, 2.15.0), and that saving to a file inside the
folder works and loads back; it returns the wording it saw, so each committed result records it.
The exampleFix and validationCode run from the record's text; the guard is checked against a bare file name, a
"./" name, an existing nested folder, a pathlib.Path and an in-memory buffer, each saved to by torch.save first; its
stage also shows its limit (a path naming the existing folder passes it, and torch.save still fails there).

Drafted by `errkb draft` from a snippet on torch 2.13.0+cpu, Python 3.11.7: raised at
caffe2/serialize/inline_container.cc:728 (setup), commit cf30153c4c131c8164ee7798e5022d810682e2cb
(torch.version.git_version). The line, 728, is the one the 2.13.0 build reports (TORCH_SHOW_CPP_STACKTRACES=1). No
stored copy of inline_container.cc at that commit was available; the excerpt's text is from the stored copy
cyyever/pytorch@09ecec1f421c2e7bfb1b74236aa5a60bffcd7f2b (a fork), whose setup() has this check followed, 19 lines
below the TORCH_CHECK, by the CAFFE_THROW "open file failed with strerror"; the 2.13.0 build reports those two raises
at 728 and 747 (19 apart), so the excerpt is numbered to the build's lines. It was not compared with the file at the
build's commit, hence "excerpt": "unverified". Other builds report other lines: 654 (2.5.1), 727 (2.15.0).
Earlier layouts of setup(), read in stored copies (forks; not compared with a pytorch/pytorch release tag):
salilsdesai/pytorch@132989906670c944d57b75d6a8cc5ae469453e26 opens the file and then checks only
TORCH_CHECK(file_stream_, "File ", file_name, " cannot be opened.") (no parent-directory check, so a missing folder
gets that wording; pytorch/pytorch#75177 shows it for C++ torch::save in April 2022, pytorch/pytorch#48415 for
torch.jit.save on a December 2020 source build);
shmuller/pytorch@337e5ea29487f09592b28bd32f20501ad73e3470 opens the file, then checks the parent directory, then
file_stream_ (the order torch 2.5.1's results fit: with TORCH_SHOW_CPP_STACKTRACES=1, 2.5.1 reports the parent check
at inline_container.cc:654 and the stream check, for a path naming a folder, at 656). The parent-directory check was
proposed in pytorch/pytorch#75681 (April 2022, fixing #75177); not compared with that pull request's diff.
"""
NEEDS = {"packages": {"torch": ">=2.0"}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "create_parent_first", 2: "path_from_known_base", 3: "file_path_not_folder"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["model", "path"], "validationCode": ["path"]}
KEEP = ["model"]
VALID = {
    "bare-file-name": "valid_bare_name",
    "dot-slash-name": "valid_dot_slash",
    "existing-nested-folder": "valid_existing_folder",
    "pathlib-path": "valid_pathlib",
    "in-memory-buffer": "valid_buffer",
}
WORDINGS = [
    {"text": "Parent directory checkpoints does not exist.", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "Parent directory checkpoints does not exist.", "source": "torch==2.5.1", "match": "pattern"},
    {"text": "Parent directory checkpoints does not exist.", "source": "torch==2.15.0", "match": "pattern"},
    {"text": "RuntimeError: Parent directory ckpts does not exist.", "source": "thunlp/KnowledgeablePromptTuning#24",
     "match": "matcher"},
    {"text": "RuntimeError: Parent directory models does not exist.", "source": "twjiang/graphSAGE-pytorch#35",
     "match": "matcher"},
    {"text": "RuntimeError: Parent directory C: does not exist.", "source": "bmaltais/kohya_ss#1611", "match": "matcher"},
    {"text": "RuntimeError: Parent directory logs/徐大夫第二次/4-cnhubert does not exist.", "source": "RVC-Boss/GPT-SoVITS#498",
     "match": "matcher"},
    {"text": "File my_out/checkpoints/checkpoint_0.pt cannot be opened.", "source": "Sachini/ronin#51",
     "match": "pattern"},
    {"text": "RuntimeError: File my_out/checkpoints/checkpoint_0.pt cannot be opened.", "source": "Sachini/ronin#51",
     "match": "matcher"},
    {"text": "RuntimeError: File ./chkpt/EIDER_bert_eider_test_best.pt cannot be opened.", "source": "yiqingxyq/Eider#9",
     "match": "matcher"},
    {"text": "RuntimeError: File ./checkpoints\\testrun_29_05_2024_09:51:10 cannot be opened.",
     "source": "malllabiisc/CompGCN#45", "match": "matcher"},
    {"text": "RuntimeError: File non/existent/path/model.pth cannot be opened.", "source": "pytorch/pytorch#48415",
     "match": "matcher"},
    {"text": "File ./aaa/bbb.pt cannot be opened.", "source": "pytorch/pytorch#75177", "match": "pattern"},
    {"text": "RuntimeError: File D:/kohya_ss/outputs cannot be opened.", "source": "bmaltais/kohya_ss#2211",
     "match": "matcher"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "unverified"}

import errkb_record as record

import os
import pathlib
import tempfile

import torch

PATH = "checkpoints/model.pt"  # relative: resolved against the working directory


def _setup():
    """A fresh, empty working directory and a small model."""
    os.chdir(tempfile.mkdtemp())
    torch.manual_seed(0)
    return torch.nn.Linear(4, 2)


def _loads_back(model, path):
    restored = torch.nn.Linear(4, 2)
    restored.load_state_dict(torch.load(path))
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), restored.state_dict().values()))


def _expect_error(path, *fragments):
    try:
        torch.save({"w": torch.zeros(1)}, path)
    except RuntimeError as exc:
        message = str(exc).splitlines()[0]
        assert any(f in message for f in fragments), message
        return message
    raise AssertionError(f"torch.save({path!r}) did not fail")


def trigger():
    model = _setup()
    torch.save(model.state_dict(), PATH)


def create_parent_first():
    """Solution 1: os.makedirs(os.path.dirname(path), exist_ok=True) before torch.save."""
    model = _setup()
    _expect_error(PATH, "Parent directory checkpoints does not exist.")
    os.makedirs(os.path.dirname(PATH), exist_ok=True)
    torch.save(model.state_dict(), PATH)
    _loads_back(model, PATH)
    os.makedirs(os.path.dirname(PATH), exist_ok=True)  # exist_ok: safe to call before every save
    torch.save(model.state_dict(), PATH)
    # Not covered: a *file* named like the folder. torch gives the same message, and makedirs cannot help.
    pathlib.Path("runs").write_text("a log file, not a folder")
    _expect_error("runs/model.pt", "Parent directory runs does not exist.")
    try:
        os.makedirs("runs", exist_ok=True)
    except FileExistsError:
        pass
    else:
        raise AssertionError("makedirs accepted a file as the folder")


def path_from_known_base():
    """Solution 2: anchor the path to a known base (the script's folder), not to the working directory."""
    model = _setup()
    project = pathlib.Path.cwd() / "project"
    (project / "checkpoints").mkdir(parents=True)  # the folder exists, next to the script
    script_dir = project  # in a script: pathlib.Path(__file__).resolve().parent
    os.chdir(tempfile.mkdtemp())  # the script is started from somewhere else
    _expect_error(PATH, "Parent directory checkpoints does not exist.")
    target = script_dir / "checkpoints" / "model.pt"
    torch.save(model.state_dict(), target)
    _loads_back(model, target)
    # Why solution 1 is not enough here: makedirs on the relative path makes a second folder under the working
    # directory, and the save lands there, not in the script's checkpoints folder.
    os.makedirs(os.path.dirname(PATH), exist_ok=True)
    torch.save(model.state_dict(), PATH)
    assert os.path.isfile(os.path.join(os.getcwd(), PATH))
    assert os.path.realpath(os.path.join(os.getcwd(), "checkpoints")) != os.path.realpath(script_dir / "checkpoints")
    assert sorted(os.listdir(script_dir / "checkpoints")) == ["model.pt"]


def file_path_not_folder():
    """Solution 3: the folder exists but the target cannot be opened (here: the path names the folder itself);
    creating folders changes nothing, saving to a file inside the folder works."""
    model = _setup()
    os.makedirs("checkpoints")
    target = "checkpoints"  # e.g. a save_dir passed where a file path is expected
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)  # solution 1 on this path: nothing to create
    message = _expect_error(target, "File checkpoints cannot be opened.", "open file failed")
    assert os.path.isdir(target) and os.listdir(target) == []  # nothing written, the folder untouched
    fixed = os.path.join(target, "model.pt") if os.path.isdir(target) else target
    torch.save(model.state_dict(), fixed)
    _loads_back(model, fixed)
    return f"torch {torch.__version__}, path naming a directory: {message}"


def example_fix():
    model = _setup()
    names = record.run("exampleFix", {"model": model, "path": PATH}, section="after")
    assert os.path.isfile(PATH)
    _loads_back(names["model"], PATH)


def guard():
    _setup()
    assert not record.check("validationCode", {"path": PATH})
    assert not record.check("validationCode", {"path": pathlib.Path(PATH)})
    os.makedirs("checkpoints")
    assert record.check("validationCode", {"path": PATH})
    # Its limit: a path naming the existing folder itself passes the guard, and torch.save still fails (solution 3).
    assert record.check("validationCode", {"path": "checkpoints"})
    _expect_error("checkpoints", "File checkpoints cannot be opened.", "open file failed")


def _saved(path):
    """A valid situation is a target torch.save writes to."""
    torch.save({"w": torch.zeros(1)}, path)
    return {"path": path}


def valid_bare_name():
    os.chdir(tempfile.mkdtemp())
    return _saved("model.pt")


def valid_dot_slash():
    os.chdir(tempfile.mkdtemp())
    return _saved("./model.pt")


def valid_existing_folder():
    folder = os.path.join(tempfile.mkdtemp(), "runs", "exp1")
    os.makedirs(folder)
    return [_saved(os.path.join(folder, "model.pt")), _saved(os.path.join(folder, "..", "model.pt"))]


def valid_pathlib():
    return _saved(pathlib.Path(tempfile.mkdtemp()) / "model.pt")


def valid_buffer():
    import io
    return _saved(io.BytesIO())
