"""Chalk's metadata is in pyproject.toml; this only adds one build step.

A wheel (`make dist`, `pipx install`) carries the firmware as package data, chalk/_firmware/
(main.py, the board configs and the scoreboard package's sources), so the installed `chalk`
deploys and simulates a board without the checkout. An editable install (`make setup`) uses the
checkout's firmware/ directly.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


class BuildWithFirmware(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        src = HERE / "firmware"
        dst = Path(self.build_lib) / "chalk" / "_firmware"
        if dst.exists():
            shutil.rmtree(dst)
        (dst / "boards").mkdir(parents=True)
        shutil.copyfile(src / "main.py", dst / "main.py")
        for cfg in sorted((src / "boards").glob("*.json")):
            shutil.copyfile(cfg, dst / "boards" / cfg.name)
        for py in sorted((src / "scoreboard").rglob("*.py")):
            if "__pycache__" in py.parts:
                continue
            out = dst / py.relative_to(src)
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(py, out)


setup(cmdclass={"build_py": BuildWithFirmware})
