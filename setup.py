"""Ships the catalog inside the wheel: records/, verifications/ and reproductions/ become package data of errkb
(the reproductions so that an install can tell current results from stale ones, by their hashes).

They live at the top of the repository (where people edit them), not inside the errkb package, so
build_py copies them into errkb/_catalog/ of the build (CATALOG_DATA; MANIFEST.in puts them in the
sdist too). errkb/bundled.py finds them in the installed package.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
CATALOG_DATA = ["records/*.json", "verifications/**/*.json", "verifications/**/*.intoto.jsonl", "reproductions/*.py",
                "keys/maintainers/*.pub"]  # keep in line with MANIFEST.in


class BuildPyWithCatalog(build_py):
    def run(self):
        super().run()
        if self.editable_mode:
            return  # an editable install finds the checkout's own records/ (errkb.store.find_root)
        target = Path(self.build_lib) / "errkb" / "_catalog"
        for pattern in CATALOG_DATA:
            for source in sorted(HERE.glob(pattern)):
                destination = target / source.relative_to(HERE)
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, destination)


setup(cmdclass={"build_py": BuildPyWithCatalog})
