"""What `xcviz stats GRAPH --json` imports, and that a command line naming one command builds it alone."""
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


def test_stats_json_imports_no_rich_or_jax():
    # (pydantic is imported: typer converts every flag through it, and xcviz uses typer's public API only)
    code, out, mods = _imported(("rich", "jax", "onnx", "scipy"), "stats", SEED, "--json", "--max-nodes", "100")
    assert code == 0 and '"schema_version": 1' in out
    assert mods == []


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
