"""Checks xcviz's distributions: what a built wheel and sdist hold (`contents`), and an installed wheel at work (`smoke`).

    python tools/wheel_check.py contents WHEEL SDIST [PROJECT]   # after `python -m build` (tools/build_wheel.sh)
    python tools/wheel_check.py smoke [PROJECT] [--graph G]     # in a venv with the wheel installed (cibuildwheel's test)

`contents`: the wheel has one compiled module per xcviz/**/*.pyx, every .py module and data file of the package,
and no kernel sources (.pyx/.pxd), Cython's .c, tests or anything outside xcviz/ and its dist-info; the sdist has
the kernel sources, setup.py and the metadata, and no .c, compiled module or tests. `smoke`: each kernel imports
as a compiled module from outside the source tree, and the installed `xcviz stats` runs on an example graph.
Exit 1 with one line per problem.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.machinery
import json
import os
import pathlib
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

BUILD_OUTPUTS = (".c", ".html")   # what Cython writes beside a .pyx (the C, `cython -a`'s annotation)
SKIP_SUFFIXES = (".pyc", ".so", ".pyd")


def kernels(project: pathlib.Path) -> list[str]:
    """The compiled modules, named as setup.py names them: xcviz/a/b.pyx -> xcviz.a.b."""
    return sorted(".".join(p.relative_to(project).with_suffix("").parts) for p in project.glob("xcviz/**/*.pyx"))


def package_files(project: pathlib.Path) -> list[str]:
    """Every file of the xcviz package in the source tree (paths relative to it), less build outputs and caches."""
    out = []
    for p in sorted(project.glob("xcviz/**/*")):
        if not p.is_file() or "__pycache__" in p.parts or p.suffix in SKIP_SUFFIXES:
            continue
        if p.suffix in BUILD_OUTPUTS and p.with_suffix(".pyx").exists():
            continue
        out.append(p.relative_to(project).as_posix())
    return out


def wheel_problems(wheel: str, project: pathlib.Path) -> list[str]:
    names = set(zipfile.ZipFile(wheel).namelist())
    bad = []
    for mod in kernels(project):
        stem = mod.replace(".", "/")
        if not any(n.startswith(stem + ".") and n.endswith((".so", ".pyd")) for n in names):
            bad.append(f"wheel: no compiled module for {mod}")
    for f in package_files(project):
        if f.endswith((".pyx", ".pxd")):
            if f in names:
                bad.append(f"wheel: carries the kernel source {f}")
        elif f not in names:
            bad.append(f"wheel: misses {f} (a package-data pattern in pyproject.toml?)")
    for n in sorted(names):
        top = n.split("/", 1)[0]
        if n.endswith((".c", ".pyx", ".pxd", ".html")) and not n.startswith("xcviz/render/report_assets/"):
            bad.append(f"wheel: carries the build file {n}")
        if top != "xcviz" and not (top.startswith("xcviz-") and top.endswith(".dist-info")):
            bad.append(f"wheel: carries {n}, outside the package")
    return bad


def sdist_problems(sdist: str, project: pathlib.Path) -> list[str]:
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    bad = [f"sdist: misses {f}" for f in ("setup.py", "pyproject.toml", "MANIFEST.in", "README.md") if f not in names]
    bad += [f"sdist: misses the kernel source {f}" for f in package_files(project)
            if f.endswith((".pyx", ".pxd")) and f not in names]
    for n in sorted(names):
        if n.endswith((".c", ".so", ".pyd", ".pyc")) or n.startswith("tests/"):
            bad.append(f"sdist: carries {n}")
    return bad


def smoke(project: pathlib.Path, graph: pathlib.Path) -> list[str]:
    bad = []
    for name in kernels(project):
        try:
            mod = importlib.import_module(name)
        except ImportError as e:
            bad.append(f"{name}: does not import ({e})")
            continue
        path = pathlib.Path(mod.__file__).resolve()
        if not str(path).endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            bad.append(f"{name}: {path} is not a compiled module")
        if project.resolve() in path.parents:
            bad.append(f"{name}: imported from the source tree ({path}), not the installed wheel")
        else:
            print(f"ok {name}: {path.name}")
    exe = os.path.join(sysconfig.get_path("scripts"), "xcviz.exe" if os.name == "nt" else "xcviz")
    r = subprocess.run([exe, "stats", str(graph), "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        bad.append(f"xcviz stats {graph}: exit {r.returncode}: {r.stderr.strip()[-500:]}")
    else:
        doc = json.loads(r.stdout)
        if doc.get("schema_version") != 1:
            bad.append(f"xcviz stats {graph} --json: schema_version {doc.get('schema_version')!r}")
        print(f"ok xcviz stats {graph.name}: {doc['graph']['nodes']} nodes")
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("contents")
    c.add_argument("wheel")
    c.add_argument("sdist")
    c.add_argument("project", nargs="?", default=".")
    s = sub.add_parser("smoke")
    s.add_argument("project", nargs="?", default=".")
    s.add_argument("--graph", help="default: PROJECT/graphs/seed_demo.yaml")
    a = ap.parse_args()
    project = pathlib.Path(a.project).resolve()
    if not kernels(project):
        print(f"error: no xcviz/**/*.pyx under {project} (hint: pass the source tree as PROJECT)")
        return 1
    if a.cmd == "contents":
        bad = wheel_problems(a.wheel, project) + sdist_problems(a.sdist, project)
    else:
        bad = smoke(project, pathlib.Path(a.graph or project / "graphs" / "seed_demo.yaml"))
    for line in bad:
        print("error:", line)
    if not bad:
        print(f"ok: {a.cmd}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
