"""Hydra 0.11 let config_path name the YAML file itself; since 1.0 config_path is the directory to search and
config_name the primary config in it. A script still written the old way, @hydra.main(config_path="conf/config.yaml")
(or a command line with --config-path pointing at a .yaml file), is refused before anything is composed:
_run_hydra calls validate_config_path (hydra/core/utils.py), which raises ValueError "Using config_path to specify
the config name is not supported, specify the config name via config_name." plus a link to the 0.11-to-1.0 upgrade
page. The error escapes @hydra.main directly (it is raised before Hydra's own error reporting wraps the run), so the
trigger calls a decorated task function in-process, with sys.argv set to a bare command line and the run directory
in a temporary folder. Solution 1 splits the path into config_path (the directory) and config_name (the stem) and
checks the task receives the file's values; solution 2 shows --config-path pointing at the file raises the same
error and --config-path DIR --config-name NAME runs. The record's exampleFix and validationCode run from its text.
Results: errkb reproduce hydra-config-path-names-a-file (hydra-core 1.3.7) --with hydra-core==1.3.0 --with
hydra-core==1.3.2 (hydra-core 1.2.0 does not import on Python 3.11; 1.3.8 names another repository in its metadata,
see hydra-missing-config). The excerpt is hydra/core/utils.py L283-293 at tag v1.3.5 (51647a218351) of
facebookresearch/hydra, where the raise is line 293 as in 1.3.0 and 1.3.2; the installed 1.3.7 has the same lines
three lines lower (raise at 296: reported as drift), and no stored commit has the installed file.

Drafted by `errkb draft` from hydra_path.py on hydra-core 1.3.7, Python 3.11.7:
  ValueError: Using config_path to specify the config name is not supported, specify the config name via config_name.
  raised at hydra/core/utils.py:296
The draft said the commit was unresolved (no VCS metadata in the wheel); the excerpt was taken from the stored tag.
"""
NEEDS = {'packages': {'hydra-core': '>=1.3,<1.3.8'}, 'cuda_devices': 0, 'timeout_s': 120}
SOLUTIONS = {1: "directory_and_name", 2: "command_line_directory_and_name"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["hydra"], "validationCode": ["config_path"]}
VALID = {"directory": "valid_directory", "dotted-directory": "valid_dotted_directory"}
WORDINGS = [
    {'text': 'Using config_path to specify the config name is not supported, specify the config name via config_name.',
     'source': 'hydra-core==1.3.7', 'match': 'pattern'},
    {'text': 'Using config_path to specify the config name is not supported, specify the config name via config_name.',
     'source': 'JunyaHayashida/MPM#7', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'upstream-copy', 'repo': 'facebookresearch/hydra',
              'commit': '51647a2183512bc4e5556842c494e7efdbd75375', 'path': 'hydra/core/utils.py', 'line': 293,
              'offset': 0}

import os
import sys
import tempfile

import errkb_record as record


def _project():
    """A project folder with conf/config.yaml, as 0.11-era scripts have it."""
    root = tempfile.mkdtemp(prefix="project-")
    os.makedirs(os.path.join(root, "conf"))
    with open(os.path.join(root, "conf", "config.yaml"), "w") as f:
        f.write("lr: 0.1\nepochs: 3\n")
    return root


def _command_line(*args):
    """A bare command line; outputs in a temporary folder (the working directory may be read-only)."""
    run_dir = tempfile.mkdtemp(prefix="run-")
    sys.argv = ["train.py", *args, f"hydra.run.dir={run_dir}", "hydra.output_subdir=null"]


def _app(seen, **main_kwargs):
    import hydra

    @hydra.main(version_base=None, **main_kwargs)
    def train(cfg):
        seen.append(dict(cfg))

    return train


def trigger():
    import hydra

    root = _project()

    @hydra.main(version_base=None, config_path=os.path.join(root, "conf", "config.yaml"))
    def train(cfg):
        print(cfg.lr)

    _command_line()
    train()


def directory_and_name():
    """Solution 1: config_path is the directory, config_name the file's stem."""
    root = _project()
    seen = []
    _command_line()
    _app(seen, config_path=os.path.join(root, "conf"), config_name="config")()
    assert seen == [{"lr": 0.1, "epochs": 3}], seen


def command_line_directory_and_name():
    """Solution 2: on the command line, --config-path names the directory and --config-name the file."""
    root = _project()
    seen = []
    _command_line("--config-path", os.path.join(root, "conf", "config.yaml"))
    try:
        _app(seen)()
    except ValueError as exc:
        assert "Using config_path to specify the config name is not supported" in str(exc), exc
    else:
        raise AssertionError("--config-path with a file was accepted")
    _command_line("--config-path", os.path.join(root, "conf"), "--config-name", "config")
    _app(seen)()
    assert seen == [{"lr": 0.1, "epochs": 3}], seen


def example_fix():
    import hydra

    root = _project()
    cwd = os.getcwd()
    os.chdir(root)  # a relative config_path is resolved from the script's folder; the snippet's code has no file, so from here
    try:
        _command_line()
        names = record.run("exampleFix", {"hydra": hydra}, section="after")
        names["train"]()
    finally:
        os.chdir(cwd)
    assert names["seen"] == [0.1], names["seen"]


def guard():
    root = _project()
    assert not record.check("validationCode", {"config_path": os.path.join(root, "conf", "config.yaml")})
    assert not record.check("validationCode", {"config_path": "conf/config.yml"})
    assert record.check("validationCode", {"config_path": os.path.join(root, "conf")})


def _valid(config_path, config_name="config"):
    seen = []
    _command_line()
    _app(seen, config_path=config_path, config_name=config_name)()
    assert seen and seen[0]["lr"] == 0.1  # Hydra accepts it and composes the config
    return {"config_path": config_path}


def valid_directory():
    return [_valid(os.path.join(_project(), "conf")), _valid(os.path.join(_project(), "conf") + os.sep)]


def valid_dotted_directory():
    root = _project()
    os.rename(os.path.join(root, "conf"), os.path.join(root, "conf.v2"))
    seen = []
    _command_line()
    _app(seen, config_path=os.path.join(root, "conf.v2"), config_name="config")()
    assert seen[0]["lr"] == 0.1
    return {"config_path": os.path.join(root, "conf.v2")}
