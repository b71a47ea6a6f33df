"""Hydra composes a job's configuration from a primary config: config_name looked up in the config directory
(config_path of @hydra.main, or config_dir of initialize_config_dir) and the ConfigStore. When no `<name>.yaml` is
there, building the defaults tree fails in config_not_found_error (hydra/_internal/defaults_list.py) with
MissingConfigException "Cannot find primary config '<name>'. Check that it's in your config search path." followed
by the search path. The trigger composes config_name="config" from a directory that holds only train.yaml.
Solution 1 names the file that is there (stem or stem.yaml), and shows that Hydra reads only .yaml files (a
config.yml is not found until renamed) and that config_name is relative to the config directory (a
"configs/train.yaml" path is not found). Solution 2 runs a real @hydra.main script as a subprocess: without the file
it exits 1 printing the message and "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.";
with HYDRA_FULL_ERROR=1 the traceback reaches defaults_list.py; with --config-name train it runs, and
--config-path names another directory: absolute, or relative to the script's directory (a path relative to the working
directory is not found there and gives "Primary config directory not found." instead). The record's
exampleFix and validationCode run from its text.
Results: errkb reproduce hydra-missing-config (hydra-core 1.3.7) --with hydra-core==1.3.0 --with
hydra-core==1.3.2 (all verified; hydra-core 1.2.0 does not import on Python 3.11: a dataclass mutable default). The excerpt (L791-803 of the installed 1.3.7 file) is byte-identical (git hash-object) to
hydra/_internal/defaults_list.py at tag v1.3.5 (51647a218351) of facebookresearch/hydra, the repository every
release up to 1.3.7 names in its metadata; the stored mirror has no v1.3.6/v1.3.7 tags. The raise is at line 799 in
1.3.2 too, 800 in 1.3.0. hydra-core 1.3.8 (same file, same raise) names the moved repository hydra-ecosystem/hydra
instead, so the harness cannot resolve this record's repo there and it is not in the matrix.

Drafted by `errkb draft` from hydra_missing.py on hydra-core 1.3.8 (then moved to 1.3.7 as above), Python 3.11.7:
  hydra.errors.MissingConfigException: Cannot find primary config 'config'. Check that it's in your config search path.
  raised at hydra/_internal/defaults_list.py:799
The draft said the commit was unresolved (no VCS metadata in the wheel); found and checked by hand as above.
"""
NEEDS = {'packages': {'hydra-core': '>=1.3,<1.3.8'}, 'cuda_devices': 0, 'timeout_s': 120}
SOLUTIONS = {1: "name_an_existing_yaml", 2: "command_line_config_name"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["config_dir"], "validationCode": ["config_dir", "config_name"]}
VALID = {"stem": "valid_stem", "with-extension": "valid_with_extension", "group-path": "valid_group_path",
         "config-store": "valid_config_store", "no-primary-config": "valid_no_primary_config",
         "leading-slash": "valid_leading_slash", "package-source": "valid_package_source",
         "structured-only": "valid_structured_only"}
WORDINGS = [
    {'text': "Cannot find primary config 'config'. Check that it's in your config search path.",
     'source': 'hydra-core==1.3.7', 'match': 'pattern'},
    {'text': "Cannot find primary config 'config.yaml'. Check that it's in your config search path.",
     'source': 'vturrisi/solo-learn#363', 'match': 'pattern'},
    {'text': "Cannot find primary config 'configs/config.yaml'. Check that it's in your config search path.",
     'source': 'IGNF/myria3d#60', 'match': 'pattern'},
    {'text': "Primary config directory not found.", 'source': 'OliBomby/Mapperatorinator#48', 'match': 'none',
     'why': "the config directory itself is missing: raised by ConfigLoaderImpl.ensure_main_config_source_available "
            "(hydra/_internal/config_loader_impl.py), another raise site; the record says so"},
    {'text': "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.",
     'source': 'zju3dv/OnePose#12', 'match': 'none',
     'why': "hydra.main prints this line after any exception; alone it does not name this error"},
    {'text': "Cannot find primary config ''configs/sam2.1_training/custom.yaml''. Check that it's in your config search "
             "path.", 'source': 'facebookresearch/sam2#703', 'match': 'pattern'},
]
PROVENANCE = {'checked': 'installed', 'dist': 'hydra-core', 'version': '1.3.7'}

import os
import subprocess
import sys
import tempfile

import errkb_record as record

APP = '''import hydra


@hydra.main(version_base=None, config_path="conf", config_name="config")
def main(cfg):
    print("lr =", cfg.lr)


if __name__ == "__main__":
    main()
'''


def _config_dir():
    """A config directory like a project's conf/: train.yaml is there, config.yaml is not."""
    config_dir = tempfile.mkdtemp(prefix="conf-")
    with open(os.path.join(config_dir, "train.yaml"), "w") as f:
        f.write("lr: 0.1\nepochs: 3\n")
    return config_dir


def _compose(config_dir, config_name):
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(version_base=None, config_dir=config_dir):
        return compose(config_name=config_name)


def _missing(config_dir, config_name):
    from hydra.errors import MissingConfigException

    try:
        _compose(config_dir, config_name)
    except MissingConfigException as exc:
        assert f"Cannot find primary config '{config_name}'" in str(exc), exc
    else:
        raise AssertionError(f"{config_name!r} was found")


def trigger():
    from hydra import compose, initialize_config_dir

    config_dir = _config_dir()
    with initialize_config_dir(version_base=None, config_dir=config_dir):
        cfg = compose(config_name="config")


def name_an_existing_yaml():
    """Solution 1: config_name is a .yaml file in the config directory, given by stem or with .yaml."""
    config_dir = _config_dir()
    for name in ("train", "train.yaml"):
        cfg = _compose(config_dir, name)
        assert cfg.lr == 0.1 and cfg.epochs == 3, cfg
    _missing(config_dir, "configs/train.yaml")  # relative to the config directory, not to the project root
    with open(os.path.join(config_dir, "config.yml"), "w") as f:
        f.write("lr: 0.5\n")
    _missing(config_dir, "config")  # a .yml file is not read
    os.rename(os.path.join(config_dir, "config.yml"), os.path.join(config_dir, "config.yaml"))
    assert _compose(config_dir, "config").lr == 0.5


def command_line_config_name():
    """Solution 2: a @hydra.main app fails without the file and runs with --config-name naming the one there."""
    project = tempfile.mkdtemp(prefix="project-")
    os.makedirs(os.path.join(project, "conf"))
    with open(os.path.join(project, "conf", "train.yaml"), "w") as f:
        f.write("lr: 0.1\n")
    app = os.path.join(project, "app.py")
    with open(app, "w") as f:
        f.write(APP)
    elsewhere = tempfile.mkdtemp(prefix="cwd-")  # config_path is relative to app.py, not to the working directory
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}

    def run(*args, **extra):
        return subprocess.run([sys.executable, app, *args], cwd=elsewhere, env={**env, **extra},
                              capture_output=True, text=True, timeout=60)

    failed = run()
    assert failed.returncode == 1, (failed.returncode, failed.stderr)
    assert "Cannot find primary config 'config'" in failed.stderr, failed.stderr
    assert "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace." in failed.stderr
    assert "Traceback" not in failed.stderr, failed.stderr  # the summary hides where it came from
    full = run(HYDRA_FULL_ERROR="1")
    assert full.returncode == 1 and "Traceback" in full.stderr and "defaults_list.py" in full.stderr, full.stderr
    fixed = run("--config-name", "train")
    assert fixed.returncode == 0 and "lr = 0.1" in fixed.stdout, (fixed.returncode, fixed.stdout, fixed.stderr)
    other = tempfile.mkdtemp(prefix="other-conf-")
    with open(os.path.join(other, "train.yaml"), "w") as f:
        f.write("lr: 0.7\n")
    moved = run("--config-path", other, "--config-name", "train")
    assert moved.returncode == 0 and "lr = 0.7" in moved.stdout, (moved.returncode, moved.stdout, moved.stderr)
    os.makedirs(os.path.join(project, "alt"))
    with open(os.path.join(project, "alt", "train.yaml"), "w") as f:
        f.write("lr: 0.9\n")
    relative = run("--config-path", "alt", "--config-name", "train")  # relative to app.py's directory
    assert relative.returncode == 0 and "lr = 0.9" in relative.stdout, (relative.stdout, relative.stderr)
    os.makedirs(os.path.join(elsewhere, "cwd-conf"))
    with open(os.path.join(elsewhere, "cwd-conf", "train.yaml"), "w") as f:
        f.write("lr: 0.2\n")
    from_cwd = run("--config-path", "cwd-conf", "--config-name", "train")  # not relative to the working directory
    assert from_cwd.returncode == 1 and "Primary config directory not found." in from_cwd.stderr, from_cwd.stderr


def example_fix():
    config_dir = _config_dir()
    names = record.run("exampleFix", {"config_dir": config_dir}, section="after")
    assert names["cfg"].lr == 0.1


def guard():
    config_dir = _config_dir()
    assert not record.check("validationCode", {"config_dir": config_dir, "config_name": "config"})
    with open(os.path.join(config_dir, "config.yml"), "w") as f:
        f.write("lr: 0.5\n")
    assert not record.check("validationCode", {"config_dir": config_dir, "config_name": "config"})
    assert not record.check("validationCode", {"config_dir": config_dir, "config_name": "configs/train.yaml"})
    assert record.check("validationCode", {"config_dir": config_dir, "config_name": "train"})
    package = _package()
    assert not record.check("validationCode", {"config_dir": package, "config_name": "config"})
    assert record.check("validationCode", {"config_dir": package, "config_name": "model"})


def _valid(config_dir, config_name):
    _compose(config_dir, config_name)  # Hydra composes it
    return {"config_dir": config_dir, "config_name": config_name}


def valid_stem():
    return _valid(_config_dir(), "train")


def valid_with_extension():
    return _valid(_config_dir(), "train.yaml")


def valid_group_path():
    config_dir = _config_dir()
    os.makedirs(os.path.join(config_dir, "experiment"))
    with open(os.path.join(config_dir, "experiment", "small.yaml"), "w") as f:
        f.write("lr: 0.3\n")
    return [_valid(config_dir, "experiment/small"), _valid(config_dir, "experiment/small.yaml")]


def valid_config_store():
    """A structured config registered in the ConfigStore, with no file on disk."""
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(name="structured_train", node={"lr": 0.4})
    ConfigStore.instance().store(group="model", name="mlp", node={"width": 8})
    return [_valid(_config_dir(), "structured_train"), _valid(_config_dir(), "model/mlp")]


def valid_no_primary_config():
    """config_name=None: no primary config; Hydra composes an empty one (overrides may fill it)."""
    return _valid(_config_dir(), None)


def valid_leading_slash():
    """A leading '/' names the root of the search path: '/train' is train.yaml."""
    return [_valid(_config_dir(), "/train"), _valid(_config_dir(), "/train.yaml")]


def _package():
    """A config package on sys.path, as initialize_config_module / config_path="pkg://..." use (e.g. sam2)."""
    root = tempfile.mkdtemp(prefix="pkg-")
    os.makedirs(os.path.join(root, "errkb_hydra_pkg", "conf"))
    for init in (("errkb_hydra_pkg", "__init__.py"), ("errkb_hydra_pkg", "conf", "__init__.py")):
        open(os.path.join(root, *init), "w").close()
    with open(os.path.join(root, "errkb_hydra_pkg", "conf", "model.yaml"), "w") as f:
        f.write("width: 8\n")
    sys.path.insert(0, root)
    return "pkg://errkb_hydra_pkg.conf"


def valid_package_source():
    from hydra import compose, initialize_config_module

    config_dir = _package()
    with initialize_config_module(version_base=None, config_module="errkb_hydra_pkg.conf"):
        assert compose(config_name="model").width == 8  # Hydra composes it
    return {"config_dir": config_dir, "config_name": "model"}


def valid_structured_only():
    """No config directory at all (@hydra.main(config_path=None)): the primary config is a ConfigStore entry."""
    from hydra import compose, initialize
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(name="structured_only", node={"lr": 0.6})
    with initialize(version_base=None, config_path=None):
        assert compose(config_name="structured_only").lr == 0.6
    return {"config_dir": None, "config_name": "structured_only"}
