import pytest


@pytest.fixture
def write_graph(tmp_path):
    """Write a YAML (or other) graph text to a temp file and return its path."""

    def _write(text: str, name: str = "g.yaml") -> str:
        p = tmp_path / name
        p.write_text(text, encoding="utf-8")
        return str(p)

    return _write


@pytest.fixture
def run_cli(capsys):
    """Run the real CLI entry point in-process: (exit code, stdout, stderr)."""
    from xcviz.cli import main

    def _run(*args: str):
        code = 0
        try:
            main(list(args))
        except SystemExit as e:  # main() exits on errors; success returns
            code = e.code if isinstance(e.code, int) else 1
        out = capsys.readouterr()
        return code, out.out, out.err

    return _run
