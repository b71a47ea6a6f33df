"""A project folder holds the user's own script tensorboard.py. With that folder first on sys.path, as when a script in
it runs, 'from torch.utils.tensorboard import SummaryWriter' makes torch import that file as 'tensorboard'; it has no
__version__, and torch/utils/tensorboard/__init__.py raises "TensorBoard logging requires TensorBoard version 1.15 or
above" although a current TensorBoard is installed. The demonstrations: the local file renamed, after which the
import reaches the installed package and a SummaryWriter writes an event file that TensorBoard's own reader reads
back; and, for a missing TensorBoard, a log folder named 'tensorboard' beside a script in an environment without the
TensorBoard distribution raises the same error, which the installed TensorBoard (1.15 or newer) ends. The record's exampleFix and validationCode run from
its own text; the guard's VALID situations include a log folder named 'tensorboard' beside the script, which does not
shadow an installed TensorBoard (a regular package wins over a folder without __init__.py).
"""
NEEDS = {"packages": {"torch": ">=2.1", "tensorboard": ">=2.14"}, "cuda_devices": 0, "timeout_s": 240}
SOLUTIONS = {1: "rename_local_module", 2: "current_tensorboard_installed"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["project_dir", "log_dir"], "validationCode": ["search_path"]}
VALID = {
    "installed-only": "valid_installed_only",
    "log-folder-named-tensorboard": "valid_log_folder_named_tensorboard",
    "project-without-shadow": "valid_project_without_shadow",
}
WORDINGS = [
    {"text": "TensorBoard logging requires TensorBoard version 1.15 or above", "source": "torch==2.13.0",
     "match": "pattern"},
    {"text": "TensorBoard logging requires TensorBoard with Python summary writer installed. This should be available "
             "in 1.14 or above", "source": "pytorch/pytorch#20140", "match": "pattern"},
    {"text": "TensorBoard logging requires TensorBoard with Python summary writer installed. This should be available "
             "in 1.14 or above", "source": "bshall/VectorQuantizedCPC#1", "match": "pattern"},
    {"text": "No module named 'tensorboard'", "source": "pytorch/pytorch#42861", "match": "none",
     "why": "Python's own error when nothing named tensorboard can be imported; the record says it does not match it"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import glob
import os
import sys
import tempfile

import errkb_record as record


def _project(with_shadow=True):
    """A project folder, first on sys.path like a running script's folder, holding the user's own tensorboard.py."""
    project_dir = tempfile.mkdtemp(prefix="project-")
    if with_shadow:
        with open(os.path.join(project_dir, "tensorboard.py"), "w") as f:
            f.write("# the user's own notes on TensorBoard, saved as tensorboard.py\nLOGDIR = 'runs'\n")
    sys.path.insert(0, project_dir)
    return project_dir


def _writes_events(SummaryWriter, log_dir):
    """A scalar written by SummaryWriter is read back by TensorBoard's event reader."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    writer = SummaryWriter(log_dir)
    writer.add_scalar("loss", 0.5, 1)
    writer.close()
    events = EventAccumulator(log_dir)
    events.Reload()
    assert [e.value for e in events.Scalars("loss")] == [0.5]


def trigger():
    _project()
    from torch.utils.tensorboard import SummaryWriter  # noqa: F401


def rename_local_module():
    """Solution 1: the user's file renamed; 'tensorboard' is the installed package again and logging works."""
    project_dir = _project()
    os.rename(os.path.join(project_dir, "tensorboard.py"), os.path.join(project_dir, "tb_logging.py"))
    import tensorboard

    assert "site-packages" in tensorboard.__file__, tensorboard.__file__
    from torch.utils.tensorboard import SummaryWriter

    _writes_events(SummaryWriter, tempfile.mkdtemp(prefix="runs-"))


def _site_without_tensorboard():
    """A copy of this environment without the TensorBoard distribution: every entry of torch's site-packages
    linked into a folder, except tensorboard*; run with `python -S` and that folder on PYTHONPATH."""
    import torch

    site = os.path.dirname(os.path.dirname(torch.__file__))
    folder = tempfile.mkdtemp(prefix="site-no-tb-")
    for entry in os.listdir(site):
        if not entry.lower().startswith("tensorboard"):
            os.symlink(os.path.join(site, entry), os.path.join(folder, entry))
    return folder


def current_tensorboard_installed():
    """Solution 2: with no TensorBoard installed, a script whose folder holds a log folder named 'tensorboard'
    imports that folder as a namespace package (no __version__) and torch raises this error; with the installed
    TensorBoard (1.15 or newer) on the path, the same script in the same folder logs a scalar that TensorBoard reads."""
    import subprocess
    from importlib import metadata

    from torch._vendor.packaging.version import Version

    assert Version(metadata.version("tensorboard")) >= Version("1.15")
    project_dir = tempfile.mkdtemp(prefix="project-")
    os.makedirs(os.path.join(project_dir, "tensorboard", "run1"))
    script = os.path.join(project_dir, "train.py")
    with open(script, "w") as f:
        f.write("from torch.utils.tensorboard import SummaryWriter\n")
    env = dict(os.environ, PYTHONPATH=_site_without_tensorboard())
    missing = subprocess.run([sys.executable, "-S", script], env=env, capture_output=True, text=True)
    assert missing.returncode != 0 and (
        "ImportError: TensorBoard logging requires TensorBoard version 1.15 or above" in missing.stderr
    ), missing.stderr[-2000:]
    sys.path.insert(0, project_dir)
    from torch.utils.tensorboard import SummaryWriter

    _writes_events(SummaryWriter, tempfile.mkdtemp(prefix="runs-"))


def example_fix():
    """The exampleFix's '# after' part in the trigger's folder: it renames the file and the writer is made."""
    project_dir = _project()
    log_dir = tempfile.mkdtemp(prefix="runs-")
    names = record.run("exampleFix", {"project_dir": project_dir, "log_dir": log_dir}, section="after")
    names["writer"].add_scalar("loss", 1.0, 0)
    names["writer"].close()
    assert glob.glob(os.path.join(log_dir, "events.out.tfevents.*"))
    assert os.path.exists(os.path.join(project_dir, "tb_logging.py"))


def guard():
    """validationCode flags the search path with the user's tensorboard.py first, and passes it once renamed."""
    project_dir = _project()
    assert not record.check("validationCode", {"search_path": list(sys.path)})
    os.rename(os.path.join(project_dir, "tensorboard.py"), os.path.join(project_dir, "tb_logging.py"))
    assert record.check("validationCode", {"search_path": list(sys.path)})


def _imports_real_tensorboard(first):
    """Proof that a situation is valid: a fresh interpreter with the folders `first` ahead of its own sys.path, as
    when a script in the first of them runs, imports torch.utils.tensorboard."""
    import subprocess

    code = f"import sys; sys.path[:0] = {first!r}; from torch.utils.tensorboard import SummaryWriter"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tempfile.gettempdir())


def valid_installed_only():
    _imports_real_tensorboard([])
    return {"search_path": list(sys.path)}


def valid_log_folder_named_tensorboard():
    """A log folder called 'tensorboard' beside the script (no __init__.py): the installed package still wins."""
    project_dir = tempfile.mkdtemp(prefix="project-")
    os.makedirs(os.path.join(project_dir, "tensorboard", "run1"))
    _imports_real_tensorboard([project_dir])
    return {"search_path": [project_dir] + list(sys.path)}


def valid_project_without_shadow():
    project_dir = tempfile.mkdtemp(prefix="project-")
    with open(os.path.join(project_dir, "train.py"), "w") as f:
        f.write("from torch.utils.tensorboard import SummaryWriter\n")
    _imports_real_tensorboard([project_dir])
    return {"search_path": [project_dir] + list(sys.path)}
