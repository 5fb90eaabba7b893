"""One-off (issue 27 item 6): move tests/ into folders that mirror the package and fix what the move breaks.

Run from the repository root, on a clean tree, then review `git diff --cached` and commit:

    python3 tools/relayout_tests.py            # or --dry-run to see what it would do

Re-runnable: a file already moved (or gone) is skipped, every rewrite is a no-op the second time. What it does:
1. `git mv` each file of MOVES that exists; lists every tests/test_*.py the table does not name.
2. The helpers tests import (goldens, single_node, aten_recipes, strategies/, and the paths conftest.py held)
   become the folder tests/support/, imported rootdir-relative: `from tests.support.goldens import ...`.
3. pytest imports test files by their path (`--import-mode=importlib`, `consider_namespace_packages`, the
   rootdir on `pythonpath`): tests/ and its folders need no __init__.py, two folders may hold the same file
   name, and a test file imports another as `tests.cli.test_diff`.
4. In each file moved one folder down, "the folder of this file" (os.path.dirname(__file__) and the like)
   becomes tests.support.paths.TESTS, and its parent ROOT, so tests/data, tests/golden and tests/hostile
   resolve as before.
5. Every mention of a moved file's path in README, docs/, benchmarks/, tools/, .ci/, pyproject.toml, xcviz/
   and tests/ names the new path (CHANGELOG.md and changelog.d/ are history and stay).
The lead deletes this script once it has run on main."""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# old path -> new path (relative to the repository root). A file staying where it is maps to itself.
MOVES = {
    # the package's shape, its API and its top-level modules stay at the top, as xcviz/*.py do
    "tests/test_architecture.py": "tests/test_architecture.py",
    "tests/test_api.py": "tests/test_api.py",
    "tests/test_pipeline.py": "tests/test_pipeline.py",
    "tests/test_memory.py": "tests/test_memory.py",
    "tests/test_progress_stderr.py": "tests/test_progress.py",
    "tests/test_render_samples.py": "tests/test_samples.py",
    "tests/test_fastpath_numba.py": "tests/test_fastpath.py",
    "tests/test_numba_sources.py": "tests/test_fastpath_sources.py",
    # ir
    "tests/test_ir_text.py": "tests/ir/test_text.py",
    "tests/test_node_seq.py": "tests/ir/test_node_seq.py",
    "tests/test_column_codes.py": "tests/ir/test_column_codes.py",
    "tests/test_verify.py": "tests/ir/test_verify.py",
    # passes (shape inference)
    "tests/test_infer_keys.py": "tests/passes/test_infer_keys.py",
    "tests/test_infer_matches_reference.py": "tests/passes/test_infer_matches_reference.py",
    "tests/test_infer_first_use.py": "tests/passes/test_infer_first_use.py",
    "tests/test_value_prop.py": "tests/passes/test_value_propagation.py",
    "tests/test_dropout_mask_type.py": "tests/passes/test_dropout_mask_type.py",
    "tests/test_unknown_ops.py": "tests/passes/test_unknown_ops.py",
    # loaders
    "tests/test_loaders.py": "tests/loaders/test_formats.py",
    "tests/test_json_fast_path.py": "tests/loaders/test_json_fast.py",
    "tests/test_json_rows.py": "tests/loaders/test_json_rows.py",
    "tests/test_json_scan.py": "tests/loaders/test_json_scan.py",
    "tests/test_onnx_control.py": "tests/loaders/test_onnx_control_flow.py",
    "tests/test_hostile.py": "tests/loaders/test_hostile.py",
    "tests/test_hostile_trust.py": "tests/loaders/test_trust.py",
    "tests/test_fuzz.py": "tests/loaders/test_fuzz.py",
    # ops
    "tests/test_ops_entries.py": "tests/ops/test_entries.py",
    "tests/test_ops_attention_losses.py": "tests/ops/test_attention_losses.py",
    "tests/test_ops_bitcast_det_mel_strings.py": "tests/ops/test_bitcast_det_mel_strings.py",
    "tests/test_ops_bitwise_activations.py": "tests/ops/test_bitwise_activations.py",
    "tests/test_ops_conv_causal_deform.py": "tests/ops/test_conv_causal_deform.py",
    "tests/test_ops_in_models.py": "tests/ops/test_in_models.py",
    "tests/test_ops_indexing_sampling.py": "tests/ops/test_indexing_sampling.py",
    "tests/test_ops_linear_attention.py": "tests/ops/test_linear_attention.py",
    "tests/test_ops_random.py": "tests/ops/test_random.py",
    "tests/test_ops_reduce_norm_pool.py": "tests/ops/test_reduce_norm_pool.py",
    "tests/test_ops_signal.py": "tests/ops/test_signal.py",
    "tests/test_ops_tf2xla.py": "tests/ops/test_tf2xla_sources.py",
    "tests/test_ops_verdicts.py": "tests/ops/test_xla_verdicts.py",
    "tests/test_onnx_cast.py": "tests/ops/test_cast.py",
    "tests/test_cast_e8m0.py": "tests/ops/test_cast_e8m0.py",
    "tests/test_onnx_quant.py": "tests/ops/test_quantization.py",
    "tests/test_onnx_rnn.py": "tests/ops/test_rnn.py",
    "tests/test_opset_semantics.py": "tests/ops/test_opset_semantics.py",
    "tests/test_sequence_ops.py": "tests/ops/test_sequence_optional.py",
    "tests/test_node_tests.py": "tests/ops/test_onnx_node_tests.py",
    # clustering
    "tests/test_candidates.py": "tests/clustering/test_candidates.py",
    "tests/test_clustering_expected.py": "tests/clustering/test_expected_clusters.py",
    "tests/test_control_flow.py": "tests/clustering/test_control_flow.py",
    "tests/test_keep_control_flow.py": "tests/clustering/test_keep_control_flow.py",
    "tests/test_mark_kernel.py": "tests/clustering/test_mark_kernel.py",
    "tests/test_mark_matches_reference.py": "tests/clustering/test_mark_matches_reference.py",
    "tests/test_mark_properties.py": "tests/clustering/test_mark_properties.py",
    "tests/test_kernel_first_use.py": "tests/clustering/test_kernel_first_use.py",
    "tests/test_strategy_cost.py": "tests/clustering/test_cost_strategy.py",
    # cost
    "tests/test_cost_calibrate.py": "tests/cost/test_calibrate.py",
    "tests/test_cost_classes.py": "tests/cost/test_classes.py",
    "tests/test_cost_control.py": "tests/cost/test_control.py",
    "tests/test_cost_coverage.py": "tests/cost/test_coverage.py",
    "tests/test_cost_fusion.py": "tests/cost/test_fusion.py",
    "tests/test_cost_narrow_conv.py": "tests/cost/test_narrow_conv.py",
    "tests/test_cost_page_faults.py": "tests/cost/test_page_faults.py",
    "tests/test_cost_params.py": "tests/cost/test_params.py",
    "tests/test_cost_shortcuts_agree.py": "tests/cost/test_shortcuts_agree.py",
    "tests/test_cost_tables.py": "tests/cost/test_stats_table.py",
    "tests/test_symbolic.py": "tests/cost/test_symbolic.py",
    # runtime
    "tests/test_execute_differential.py": "tests/runtime/test_differential.py",
    "tests/test_execute_inputs.py": "tests/runtime/test_inputs.py",
    "tests/test_execute_modes.py": "tests/runtime/test_modes.py",
    "tests/test_jit_cache.py": "tests/runtime/test_jit_cache.py",
    "tests/test_jit_const_analysis.py": "tests/runtime/test_jit_const_analysis.py",
    "tests/test_jit_validate.py": "tests/runtime/test_validate.py",
    "tests/test_loop_hybrid.py": "tests/runtime/test_loop_hybrid.py",
    "tests/test_native_runtime.py": "tests/runtime/test_onnxruntime_timing.py",
    "tests/test_run_never_aborts.py": "tests/runtime/test_never_aborts.py",
    "tests/test_models_onnxruntime.py": "tests/runtime/test_example_models.py",
    "tests/test_models_exports.py": "tests/runtime/test_exported_models.py",
    "tests/test_models_zoo.py": "tests/runtime/test_model_zoo.py",
    # render
    "tests/test_render_dot.py": "tests/render/test_dot.py",
    "tests/test_render_frames.py": "tests/render/test_frames.py",
    "tests/test_render_names.py": "tests/render/test_names.py",
    "tests/test_report_browser.py": "tests/render/test_report_browser.py",
    "tests/test_report_html.py": "tests/render/test_report_html.py",
    "tests/test_tables_layout.py": "tests/render/test_tables_layout.py",
    "tests/test_tables_sort.py": "tests/render/test_tables_sort.py",
    "tests/test_model_explorer.py": "tests/render/test_model_explorer.py",
    "tests/test_json_text.py": "tests/render/test_json_text.py",
    # cli
    "tests/test_cli_check.py": "tests/cli/test_check.py",
    "tests/test_cli_contract.py": "tests/cli/test_contract.py",
    "tests/test_cli_diff.py": "tests/cli/test_diff.py",
    "tests/test_cli_startup.py": "tests/cli/test_startup.py",
    "tests/test_cli_stdin.py": "tests/cli/test_stdin.py",
    "tests/test_cli_surface.py": "tests/cli/test_surface.py",
    "tests/test_cli_sweep.py": "tests/cli/test_sweep.py",
    "tests/test_node_tests_cli.py": "tests/cli/test_node_tests.py",
    "tests/test_paper_cuts.py": "tests/cli/test_commands_on_exports.py",
    "tests/test_paper_cuts_resnet.py": "tests/cli/test_resnet18_export.py",
    # TensorFlow's own files and dumps (no TensorFlow needed)
    "tests/test_tf_fidelity.py": "tests/tf/test_fidelity.py",
    "tests/test_tf_keras.py": "tests/tf/test_keras.py",
    "tests/test_tf_loader.py": "tests/tf/test_loader.py",
    "tests/test_tf_rules.py": "tests/tf/test_rules.py",
    "tests/test_tf_suite.py": "tests/tf/test_suite.py",
    # PyTorch (torch.export, torch.compile, torch.fx, Core ATen)
    "tests/test_torch_compile.py": "tests/torch/test_compile.py",
    "tests/test_torch_corpus.py": "tests/torch/test_corpus.py",
    "tests/test_torch_dims.py": "tests/torch/test_dims.py",
    "tests/test_torch_fx.py": "tests/torch/test_fx_partitioner.py",
    "tests/test_torch_loader.py": "tests/torch/test_loader.py",
    "tests/test_torch_models.py": "tests/torch/test_models.py",
    "tests/test_torch_ops.py": "tests/torch/test_aten_ops.py",
    "tests/test_torch_rnn.py": "tests/torch/test_rnn.py",
    "tests/test_aten_core.py": "tests/torch/test_aten_core.py",
    # the census, the docs
    "tests/test_census.py": "tests/census/test_census.py",
    "tests/test_readme_python.py": "tests/docs/test_python_blocks.py",
}

# helpers the tests import: old path -> (new path, the module name old imports used, the new dotted name)
SUPPORT = {
    "tests/goldens.py": ("tests/support/goldens.py", "goldens", "tests.support.goldens"),
    "tests/single_node.py": ("tests/support/single_node.py", "single_node", "tests.support.single_node"),
    "tests/aten_recipes.py": ("tests/support/aten_recipes.py", "aten_recipes", "tests.support.aten_recipes"),
    "tests/strategies": ("tests/support/strategies", "strategies", "tests.support.strategies"),
}

PATHS_MODULE = '''"""Where the tests' files are: the repository, tests/ and the example graphs, at any test's depth."""
import os

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)
GRAPHS = os.path.join(ROOT, "graphs")
'''

# text files whose mentions of a test file's path are kept current (CHANGELOG.md and changelog.d/ are history)
TEXT_ROOTS = ["README.md", "pyproject.toml", "docs", "benchmarks", "tools", ".ci", "xcviz", "tests"]
TEXT_EXT = (".md", ".py", ".toml", ".sh", ".yaml", ".yml", ".txt", ".cfg")
SKIP_DIRS = {"data", "golden", "hostile", "__pycache__", "report_assets"}

DRY = "--dry-run" in sys.argv  # only list the moves
WRITTEN: list[str] = []


def say(*a) -> None:
    print(*a, flush=True)


def read(path: str) -> str:
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def write(path: str, text: str) -> None:
    WRITTEN.append(path)
    full = os.path.join(ROOT, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def git(*args: str) -> None:
    if DRY:
        say("  would run git", *args)
        return
    subprocess.run(["git", *args], cwd=ROOT, check=True)


def exists(path: str) -> bool:
    return os.path.exists(os.path.join(ROOT, path))


def move_files() -> set[str]:
    """git mv every table entry that exists; returns the new paths of the test files moved one folder down."""
    moved = set()
    todo = [(old, new) for old, (new, _, _) in SUPPORT.items()] + [(o, n) for o, n in MOVES.items() if o != n]
    for old, new in todo:
        if not exists(old):
            if not exists(new):
                say(f"skipped {old}: not here (deleted?)")
            continue
        if exists(new):
            say(f"CONFLICT {old} and {new} both exist: left alone")
            continue
        if not DRY:
            os.makedirs(os.path.dirname(os.path.join(ROOT, new)), exist_ok=True)
        git("mv", old, new)
        say(f"moved {old} -> {new}")
        if old in MOVES:
            moved.add(new)
    named = set(MOVES) | set(MOVES.values())
    for f in sorted(os.listdir(os.path.join(ROOT, "tests"))):
        if re.fullmatch(r"test_\w+\.py", f) and f"tests/{f}" not in named:
            say(f"NOT IN THE TABLE: tests/{f} (add it to MOVES and rerun)")
    return moved


def python_files(under: str) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, under)):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        out += [os.path.relpath(os.path.join(dirpath, f), ROOT) for f in sorted(filenames) if f.endswith(".py")]
    return out


# "the folder of this file" as the tests write it, and its Path forms
_THIS = r"os\.path\.abspath\(__file__\)"
_DIR_OF_THIS = [r"os\.path\.dirname\(" + _THIS + r"\)", r"os\.path\.dirname\(__file__\)"]
_PATH_OF_THIS = [r"Path\(__file__\)\.resolve\(\)\.parent", r"Path\(__file__\)\.parent"]
# uses of __file__ the move leaves right: the file's own path, the golden helper's hint, another module's file
_KEEP = re.compile(r"^\w+ = " + _THIS + r"$|check_golden\(|, __file__\)$|\w\.__file__")


def fix_file_paths(path: str, text: str) -> str:
    """A file moved one folder down: its folder was tests/, now tests/<sub>/. What it meant by the folder of
    this file is tests/ (tests.support.paths.TESTS), and by that folder's parent the repository (ROOT)."""
    dir_of_this = list(_DIR_OF_THIS)
    for var in re.findall(r"^(\w+) = " + _THIS + r"$", text, re.M):  # HERE = os.path.abspath(__file__)
        dir_of_this.append(r"os\.path\.dirname\(" + var + r"\)")
    for pat in dir_of_this:
        text = re.sub(pat, "TESTS", text)
    for pat in _PATH_OF_THIS:
        text = re.sub(pat + r"\.parent\b", "Path(ROOT)", text)
        text = re.sub(pat + r"\b", "Path(TESTS)", text)
    made_root = re.search(r"os\.path\.dirname\(TESTS\)|Path\(ROOT\)", text)
    text = re.sub(r"os\.path\.dirname\(TESTS\)", "ROOT", text)
    text = re.sub(r'os\.path\.join\(TESTS, "\.\.", ', "os.path.join(ROOT, ", text)
    text = re.sub(r"^(ROOT = ROOT|TESTS = TESTS|sys\.path\.insert\(0, TESTS\))\n", "", text, flags=re.M)
    text = re.sub(r'^GRAPHS = os\.path\.join\(ROOT, "graphs"\)\n', "", text, flags=re.M)
    # the file's own ROOT or TESTS (a data folder, say); `ROOT = Path(ROOT)` only retypes the imported one
    still_own = {n for n, rest in re.findall(r"^(ROOT|TESTS|GRAPHS) = (.*)$", text, re.M) if rest != f"Path({n})"}
    imported = {a.asname or a.name for node in ast.parse(text).body if isinstance(node, ast.ImportFrom)
                and node.module != "tests.support.paths" for a in node.names}
    needed = [n for n in ("GRAPHS", "ROOT", "TESTS")
              if re.search(r"\b" + n + r"\b", text) and n not in still_own and n not in imported]
    if made_root and "ROOT" in still_own:
        say(f"CHECK {path}: it defines its own ROOT and now also means the repository by ROOT")
    if needed:
        text = add_import(text, needed)
    for mod in ("os", "sys"):  # what only computed the old paths
        if not re.search(r"\b" + mod + r"\.", text):
            text = re.sub(r"^import " + mod + r"\n", "", text, count=1, flags=re.M)
    for line in text.splitlines():
        if "__file__" in line and not _KEEP.search(line.strip()):
            say(f"CHECK {path}: __file__ left as is: {line.strip()}")
    return text


def add_import(text: str, names: list[str]) -> str:
    """Import `names` from tests.support.paths: into the file's import of it if it has one, else after the last
    top-level import above the names' first use."""
    have = re.search(r"^from tests\.support\.paths import ([\w, ]+)(.*)$", text, re.M)
    if have:
        merged = sorted(set(n.strip() for n in have.group(1).split(",")) | set(names))
        return text[:have.start()] + f"from tests.support.paths import {', '.join(merged)}{have.group(2)}" + \
            text[have.end():]
    line = f"from tests.support.paths import {', '.join(sorted(names))}"
    tree = ast.parse(text)
    first_use = min(k for k, t in enumerate(text.split("\n"), 1) if re.search(r"\b(" + "|".join(names) + r")\b", t))
    last = None
    for node in tree.body:
        if node.lineno >= first_use or isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            break
        if isinstance(node, (ast.Import, ast.ImportFrom)) and getattr(node, "module", None) != "__future__":
            last = node
    lines = text.split("\n")
    if last is None:  # after the docstring and any __future__ import
        at = 0
        for node in tree.body:
            if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)) or (
                    isinstance(node, ast.ImportFrom) and node.module == "__future__"):
                at = node.end_lineno
            else:
                break
        lines[at:at] = ["", line] if at else [line]
    else:
        noqa = "  # noqa: E402" if "# noqa: E402" in lines[last.end_lineno - 1] else ""
        lines.insert(last.end_lineno, line + noqa)
    return "\n".join(lines)


def module_of(path: str) -> str:
    return path[:-3].replace("/", ".")


def fix_imports(path: str, text: str) -> str:
    """Helpers and other test files imported by their old top-level names -> rootdir-relative names."""
    for _, (_, name, dotted) in SUPPORT.items():
        text = re.sub(r"^(\s*)from " + name + r"( import |\.)", r"\1from " + dotted + r"\2", text, flags=re.M)
        text = re.sub(r"^(\s*)import " + name + r"$", r"\1from tests.support import " + name, text, flags=re.M)
    text = re.sub(r"^(\s*)from conftest import ", r"\1from tests.support.paths import ", text, flags=re.M)
    for old, new in MOVES.items():
        old_mod = os.path.basename(old)[:-3]
        target = new if exists(new) else old
        text = re.sub(r"^(\s*)from " + old_mod + r" import ", r"\1from " + module_of(target) + " import ", text,
                      flags=re.M)
    return text


def fix_conftest() -> None:
    path = "tests/conftest.py"
    if not exists(path):
        return
    text = read(path)
    new = re.sub(r"^ROOT = os\.path\.dirname\(os\.path\.dirname\(os\.path\.abspath\(__file__\)\)\)\n"
                 r'GRAPHS = os\.path\.join\(ROOT, "graphs"\)\n', "", text, flags=re.M)
    if new != text and not re.search(r"\b(ROOT|GRAPHS)\b", new):
        for mod in ("os", "sys"):
            if not re.search(r"\b" + mod + r"\.", new):
                new = re.sub(r"^import " + mod + r"\n", "", new, flags=re.M)
        new = re.sub(r"\n{4,}", "\n\n\n", new).lstrip("\n")
        write(path, new)
        say(f"fixed {path}: ROOT and GRAPHS now live in tests/support/paths.py")


def fix_pyproject() -> None:
    path = "pyproject.toml"
    text = read(path)
    new = text
    if "--import-mode=importlib" not in new:
        new = re.sub(r'^(addopts = "[^"\n]*)"', r'\1 --import-mode=importlib"', new, count=1, flags=re.M)
    if "consider_namespace_packages" not in new:
        block = ("# test files import by path (tests/ and its folders need no __init__.py; two folders may hold\n"
                 "# the same file name); the rootdir on the path makes `tests.support.goldens` and\n"
                 "# `tests.cli.test_diff` importable\n"
                 'pythonpath = ["."]\nconsider_namespace_packages = true\n')
        new = re.sub(r'^testpaths = \["tests"\]\n', lambda m: m.group(0) + block, new, count=1, flags=re.M)
    new = re.sub(r'"pytest>=8,', '"pytest>=8.1,', new)  # consider_namespace_packages is pytest 8.1's
    if new != text:
        write(path, new)
        say("fixed pyproject.toml: importlib import mode, rootdir on pythonpath, namespace packages")


def renames() -> dict[str, str]:
    """Every moved file's old repo path -> new repo path (the moves this table stands for, done or not)."""
    out = {old: new for old, new in MOVES.items() if old != new}
    out.update({old: new for old, (new, _, _) in SUPPORT.items()})
    return out


def fix_mentions(path: str, text: str) -> str:
    """`tests/old.py` -> the new path; a bare `old.py` -> the new name beside it, else the new path;
    `tests/strategies/` -> `tests/support/strategies/`."""
    ren = renames()
    by_base = {os.path.basename(o): n for o, n in ren.items() if o.endswith(".py") and "test_" in o}
    here = os.path.dirname(path)

    def one(m: re.Match) -> str:
        prefix, base = m.group(1) or "", m.group(2)
        if prefix and f"tests/{base}" in ren:
            return ren[f"tests/{base}"]
        if not prefix and base in by_base:
            new = by_base[base]
            return os.path.basename(new) if os.path.dirname(new) == here else new
        return m.group(0)

    text = re.sub(r"(?<![\w/.\-])(tests/)?((?:test_|goldens|single_node|aten_recipes)\w*\.py)\b", one, text)
    text = re.sub(r"(?<![\w/])tests/strategies\b", "tests/support/strategies", text)
    return text


def text_files() -> list[str]:
    out = []
    for top in TEXT_ROOTS:
        full = os.path.join(ROOT, top)
        if os.path.isfile(full):
            out.append(top)
            continue
        for dirpath, dirnames, filenames in os.walk(full):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
            for f in sorted(filenames):
                rel = os.path.relpath(os.path.join(dirpath, f), ROOT)
                if rel != "tools/relayout_tests.py" and (f.endswith(TEXT_EXT) or top == ".ci"):
                    out.append(rel)
    return out


def fix_tools() -> None:
    """A tool that put tests/ on sys.path to import a test file now puts the root there and imports tests.x.y."""
    for path in python_files("tools") + python_files("benchmarks"):
        if path == "tools/relayout_tests.py":
            continue
        text = read(path)
        new = re.sub(r'sys\.path\.insert\(0, os\.path\.join\((.*), "tests"\)\)', r"sys.path.insert(0, \1)", text)
        new = fix_imports(path, new)
        if new != text:
            write(path, new)
            say(f"fixed {path}: imports the test helpers by their new names")


def main() -> None:
    os.chdir(ROOT)
    moved = move_files()
    if DRY:
        return
    if not exists("tests/support/paths.py"):
        write("tests/support/paths.py", PATHS_MODULE)
        say("wrote tests/support/paths.py")
    for path in python_files("tests"):
        text = read(path)
        new = fix_imports(path, text)
        new = fix_file_paths(path, new) if path in moved else new
        if new != text:
            write(path, new)
            say(f"fixed {path}")
    fix_conftest()
    fix_pyproject()
    fix_tools()
    for path in text_files():
        try:
            text = read(path)
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        new = fix_mentions(path, text)
        if new != text:
            write(path, new)
            say(f"renamed mentions in {path}")
    if WRITTEN:
        git("add", "--", *sorted(set(WRITTEN)))
    say("done: check `pytest --collect-only -q | tail -1` (and with -m slow) against the counts before")


if __name__ == "__main__":
    main()
