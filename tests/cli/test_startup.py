"""What `xcviz stats GRAPH --json` imports, and that the pydantic-free flag conversion equals typer's own."""
import os
import subprocess
import sys

import pytest
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

SEED = os.path.join("graphs", "seed_demo.yaml")

_IMPORTED = """
import sys
sys.argv = ["xcviz", *sys.argv[1:]]
from xcviz.cli import main

try:
    main()
except SystemExit:
    pass
print(sorted(m for m in {mods!r} if m in sys.modules), file=sys.stderr)
"""


def _imported(mods, *args):
    r = subprocess.run([sys.executable, "-c", _IMPORTED.format(mods=mods), *args], capture_output=True, text=True,
                       cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT})
    return r.returncode, r.stdout, eval(r.stderr.strip().splitlines()[-1])


def test_stats_json_imports_no_pydantic_rich_or_jax():
    code, out, mods = _imported(("pydantic", "rich", "jax", "onnx", "scipy"), "stats", SEED, "--json", "--max-nodes", "100")
    assert code == 0 and '"schema_version": 1' in out
    assert mods == []


typer_coercion = pytest.importorskip("typer._coercion", reason="typer < 0.2x converts with click's types: nothing to compare")


def _params():
    """Every parameter of every xcviz command, as typer builds them."""
    import typer.main

    from xcviz.cli import app

    group = typer.main.get_command(app)
    return [(cmd, p) for cmd in [group, *group.commands.values()] for p in cmd.params if hasattr(p, "type_descriptor")]


VALUES = ["0", "1", "7", "-3", "007", "1_000", " 5", "5 ", "+5", "1e3", "2.0", "abc", "", "99999999999999999999",
          5, 0, -1, True, 1.5, "cpu", "mark", ("a", "b"), ["x"], (), None, b"bytes", ("a", 1)]


def _outcome(runtime, value, param, ctx):
    from typer._click.exceptions import BadParameter

    try:
        return "ok", runtime.coerce(value, param=param, ctx=ctx)
    except BadParameter as e:
        return "error", e.format_message()


def test_plain_conversion_equals_typers_adapter():
    """For every parameter xcviz declares and a spread of values (good, bad, out of range, odd types), the
    converter cli/coerce.py installs returns what typer's pydantic adapter returns, or the same error."""
    import typer._click as click

    from xcviz.cli import coerce

    params = _params()
    installed = 0
    for cmd, param in params:
        ctx = click.Context(cmd)
        param._runtime_param = None
        coerce.install([param])
        plain = param._runtime_param
        if plain is None:
            continue  # (an enum, a path, ...: typer's own conversion stays)
        installed += 1
        reference = typer_coercion.build_runtime_param(param.type_descriptor)
        for value in VALUES:
            got, want = _outcome(plain, value, param, ctx), _outcome(reference, value, param, ctx)
            assert got == want and type(got[1]) is type(want[1]), (param.name, value, got, want)
    assert installed >= 0.9 * len(params)  # (the point: nearly every flag converts without pydantic)


def test_one_command_app_says_what_the_whole_app_says(capsys):
    """main() builds only the named command; its help, usage errors and exit codes equal the whole app's."""
    import typer.main

    from xcviz.cli import app, entry

    def both(args):
        out = []
        for chosen in (entry._app_for(args), app):
            try:
                code = chosen(args=args, standalone_mode=False, prog_name="xcviz")
            except Exception as e:  # noqa: BLE001 - usage errors: compare their text
                code = (type(e).__name__, getattr(e, "format_message", lambda: str(e))())
            out.append((code, capsys.readouterr()))
        return out

    names = sorted(typer.main.get_command(app).commands)
    assert len(names) > 10
    for name in names:
        assert entry._app_for([name]) is not app and entry._app_for([name]).registered_commands[0].callback
        for args in ([name, "--help"], [name, "--no-such-flag"], [name]):
            one, whole = both(args)
            assert one == whole, (args, one, whole)
    for args in (["--help"], ["stat"], []):
        assert entry._app_for(args) is app
