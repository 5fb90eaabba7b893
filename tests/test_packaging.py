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


# ---- dependencies: declared where imported, ranges in pyproject, exact versions (with hashes) in the locks ----
_DIST_OF = {"yaml": "pyyaml", "google.protobuf": "protobuf", "re2": "google-re2", "ml_dtypes": "ml-dtypes"}
# imported but not declared, on purpose: each import is guarded or sits behind another dependency's import
_UNDECLARED = {"scipy": "optional: erf falls back without it (ops/elementwise.py, ops/tf/elementwise.py)",
               "sympy": "torch's own dependency, read only from a torch program's size expressions",
               "tensorflow": "its own install (docs/tf-suite.md): imported only for a TF program's native runtime"}


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[<>=!~; ]", requirement)[0]).lower()


def _declared() -> set[str]:
    reqs = PYPROJECT["project"]["dependencies"] + sum(PYPROJECT["project"]["optional-dependencies"].values(), [])
    names = set()
    for r in reqs:
        base, _, extras = _name(r).partition("[")
        names |= {base} | {e for e in extras.rstrip("]").split(",") if e and base != "xcviz"}  # dask[distributed]
    return names


def _imported() -> dict[str, str]:
    """Every third-party module xcviz imports (top name; google.protobuf whole) -> one file importing it."""
    import ast
    import sys

    out = {}
    for f in sorted((ROOT / "xcviz").rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else []
            for n in names:
                top = "google.protobuf" if n.startswith("google.protobuf") else n.split(".")[0]
                if top not in sys.stdlib_module_names and top != "xcviz":
                    out.setdefault(top, str(f.relative_to(ROOT)))
    return out


def test_every_imported_distribution_is_declared():
    imported = _imported()
    declared = _declared()
    missing = {m: f for m, f in imported.items()
               if _DIST_OF.get(m, m).replace("_", "-").lower() not in declared and m not in _UNDECLARED}
    assert not missing, f"imported but not in pyproject.toml's dependencies or extras: {missing}"
    assert set(_UNDECLARED) <= set(imported) and not {m for m in _UNDECLARED if m in declared}  # (no stale entry)


def test_pyproject_gives_ranges_and_the_locks_give_exact_versions_with_hashes():
    reqs = PYPROJECT["project"]["dependencies"] + sum(PYPROJECT["project"]["optional-dependencies"].values(), [])
    assert not [r for r in reqs if "==" in r], "exact versions belong in constraints.txt, not pyproject.toml"
    pins = dict(line.split("==") for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()
                if line and not line.startswith("#"))
    assert {_name(n) for n in _declared() if n != "xcviz"} <= {_name(n) for n in pins}  # every dependency pinned
    assert not [line for line in (ROOT / "constraints.txt").read_text().splitlines() if "--hash" in line]  # (pip: -c)
    lock = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    entries = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+) \\\n    --hash=sha256:[0-9a-f]{64}", lock, re.M))
    assert len(entries) == len(re.findall(r"^\S+==", lock, re.M))  # every entry with its hashes
    assert {_name(n): v for n, v in pins.items()}.items() <= {_name(n): v for n, v in entries.items()}.items()
    for build in PYPROJECT["build-system"]["requires"]:
        assert _name(build) in {_name(n) for n in entries}, build  # (--no-build-isolation builds with the lock's)
