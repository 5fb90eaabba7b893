"""The distributions' rules, read statically: package data reaches the wheel, kernel sources the sdist, and the wheels' CI covers requires-python."""
import fnmatch
import importlib.util
import pathlib
import re
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
MANIFEST = (ROOT / "MANIFEST.in").read_text(encoding="utf-8").splitlines()


def _wheel_check():
    spec = importlib.util.spec_from_file_location("wheel_check", ROOT / "tools" / "wheel_check.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _data_files() -> list[str]:
    """The package's files other than Python modules and kernel sources, relative to xcviz/."""
    return [f.removeprefix("xcviz/") for f in _wheel_check().package_files(ROOT)
            if not f.endswith((".py", ".pyx", ".pxd"))]


def test_every_data_file_is_package_data_and_every_pattern_matches():
    # a data file no pattern names is left out of the wheel (and the wheel breaks where it is read); a pattern
    # that names nothing is a moved file's leftover
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["xcviz"]
    files = _data_files()
    assert files, "no data files found under xcviz/"
    unlisted = [f for f in files if not any(fnmatch.fnmatch(f, p) for p in patterns)]
    assert not unlisted, f"not in [tool.setuptools.package-data]: {unlisted}"
    unused = [p for p in patterns if not any(fnmatch.fnmatch(f, p) for f in files)]
    assert not unused, f"package-data patterns matching no file: {unused}"


def test_kernel_sources_go_in_the_sdist_not_the_wheel():
    kernels = _wheel_check().kernels(ROOT)
    assert kernels and all(k.startswith("xcviz.") for k in kernels)
    assert "recursive-include xcviz *.pyx *.pxd" in MANIFEST   # the sdist builds them
    assert "prune tests" in MANIFEST
    excluded = PYPROJECT["tool"]["setuptools"]["exclude-package-data"]["*"]
    assert {"*.c", "*.pyx", "*.pxd"} <= set(excluded)          # the wheel carries the compiled modules only
    assert "cython>=3.0,<4" in PYPROJECT["build-system"]["requires"]


def test_wheels_are_built_for_every_supported_python():
    # requires-python's minimum is the first wheel, the versions run on without a gap, and the test the
    # wheels run is this repository's script
    low = re.fullmatch(r">=3\.(\d+)", PYPROJECT["project"]["requires-python"]).group(1)
    cibw = PYPROJECT["tool"]["cibuildwheel"]
    minors = [int(re.fullmatch(r"cp3(\d+)-\*", b).group(1)) for b in cibw["build"]]
    assert minors[0] == int(low) and minors == list(range(minors[0], minors[0] + len(minors)))
    script = re.search(r"\{project\}/(\S+\.py)", cibw["test-command"]).group(1)
    assert (ROOT / script).is_file()
    assert (ROOT / ".github" / "workflows" / "wheels.yml").is_file()
