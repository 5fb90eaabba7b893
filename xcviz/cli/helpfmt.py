"""The help screens' layout: full one-line command summaries, and option groups (panels) in plain text."""
from __future__ import annotations

import inspect

from typer.core import TyperCommand, TyperGroup

LIMITS = "Limits"  # the panel of the --max-* flags that refuse hostile or oversized inputs


def summary(command) -> str:
    """The first paragraph of a command's help, on one line, never cut short."""
    text = inspect.cleandoc(command.short_help or command.help or "")
    return " ".join(text.split("\n\n", 1)[0].split())


class Group(TyperGroup):
    """`xcviz -h`: each command with its whole summary (click cuts them at about 45 characters with '...')."""

    def format_commands(self, ctx, formatter) -> None:
        rows = [(name, summary(cmd)) for name in self.list_commands(ctx)
                if (cmd := self.get_command(ctx, name)) is not None and not cmd.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


class Command(TyperCommand):
    """A command's help with its options grouped: those without a panel first, then one section per panel;
    arguments by their metavar alone (GRAPH, not `{graph}` and `<str>`)."""

    def collect_usage_pieces(self, ctx) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                name = _argument_name(param)
                pieces.append(name if param.required else f"[{name}]")
        return pieces

    def format_options(self, ctx, formatter) -> None:
        sections: dict[str, list] = {"Arguments": [], "Options": []}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                sections["Arguments"].append((_argument_name(param), param.help or ""))
            else:
                sections.setdefault(getattr(param, "rich_help_panel", None) or "Options", []).append(record)
        for title, rows in sections.items():
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


    def format_epilog(self, ctx, formatter) -> None:
        from .examples import epilog

        text = epilog(self.name)
        if text:
            with formatter.section("Examples"):
                for line in text.splitlines():
                    formatter.write_text(line)   # (each on its own line, never re-wrapped into the next)


def _argument_name(param) -> str:
    return param.metavar or param.name.upper()


def complete_from(choices: tuple[str, ...]):
    """A shell-completion callback offering `choices` that start with what is typed."""
    def complete(incomplete: str) -> list[str]:
        return [c for c in choices if c.startswith(incomplete)]

    return complete
