"""What every kschedctl command shares: the typer app objects, exit codes, stderr helpers and the debug flag.

The command modules (``cli.explain``, ``cli.check``, ...) import this module and define plain
functions; ``cli.main`` registers them on ``app``. Nothing here imports a command module, so
the package imports one way: ``main`` -> commands -> ``common`` / ``options`` / ``sources``.

Exit status everywhere: 0 success (the pod is schedulable / every check passed),
1 a result that is a "no" (unschedulable or gated pod, a failed check),
2 bad input, bad configuration or usage. Errors are one line on stderr; ``--debug``
(anywhere on the command line) or ``KSCHEDCTL_DEBUG=1`` shows the traceback. A reader that
closes stdout early (``| head``) does not change the exit status (see ``cli.streams``).
"""

from __future__ import annotations

import functools
import os
import re
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import IO, Annotated, Any

import typer
from typer._click.exceptions import NoArgsIsHelpError
from typer._click.exceptions import UsageError as ClickUsageError
from typer.core import TyperGroup
from typer.core import _TyperParameter as TyperParameter

from kschedctl import K8S_VERSION, __version__
from kschedctl.errors import KschedctlError

EXIT_OK = 0
EXIT_NO = 1
EXIT_ERROR = 2
#: Interrupted (Ctrl-C) while an out-of-tree plugin's call ran, as a shell reports SIGINT.
EXIT_INTERRUPTED = 130

EXIT_HELP = (
    "Exit status: 0 schedulable (or all checks passed), 1 unschedulable or gated (or a check failed), "
    "2 bad input, configuration or usage."
)


def prog_name() -> str:
    """``kubectl kschedctl`` when run as the kubectl plugin (directly, or through the krew shim)."""
    base = os.path.basename(sys.argv[0]) if sys.argv else "kschedctl"
    as_plugin = base.startswith("kubectl-") or os.environ.get("KSCHEDCTL_KUBECTL_PLUGIN") == "1"
    return "kubectl kschedctl" if as_plugin else "kschedctl"


DEBUG_ENV = "KSCHEDCTL_DEBUG"


def _debug_from_env() -> bool:
    return os.environ.get(DEBUG_ENV, "").strip().lower() in ("1", "true", "yes", "on")


@dataclass
class DebugFlag:
    """Whether errors show their tracebacks: ``--debug`` anywhere on the command line, or ``KSCHEDCTL_DEBUG``.

    Set by the root group as it parses the command line (``RootGroup.parse_args``) and by the root
    callback; read by ``guarded`` and by commands that report errors themselves (``check``)."""

    on: bool = False

    def set(self, value: bool) -> None:
        self.on = value or _debug_from_env()


#: The running command line's debug flag.
debug = DebugFlag()


def _plain_argument_help(command: Any) -> None:
    """Show arguments as options are shown, by their metavar alone (``NAME``, ``PATH...``), without
    typer's ``<str>`` / ``<list[str]>`` type labels and ``{...}`` marks."""
    from typer.core import TyperArgument

    def no_type(ctx: Any) -> str | None:
        return None

    for param in getattr(command, "params", []):
        if isinstance(param, TyperArgument) and param.metavar:
            usage = param.metavar if param.required else f"[{param.metavar}]"
            param.display_type_rich = no_type  # type: ignore[method-assign]
            param._usage_display_name = functools.partial(str, usage)  # type: ignore[method-assign]
    for sub in (getattr(command, "commands", None) or {}).values():
        _plain_argument_help(sub)


def _plain_process_value(param: Any, ctx: Any, value: Any) -> Any:
    """Every typer parameter's ``process_value``: a plain value skips typer's conversion. Typer builds a
    pydantic converter for each parameter it converts, even one left unset (pydantic's import and the
    converters' schemas: about a quarter of a second of start-up), but most values need none. Left unset
    (None), a parameter that is not required is None, or ``()`` when it takes several values; a given
    value that ``_plain_value`` can convert is converted there, to what typer's converter gives; then the
    parameter's callback, as typer calls it. Anything else (a required parameter left unset, a value out
    of its range, an unknown choice: whatever could fail, with typer's message) goes through typer."""
    several = bool(param.multiple or param.nargs == -1)
    if value is None:
        plain = _TYPER if param.required else (() if several else None)
    else:
        descriptor = param.type_descriptor
        plain = _plain_value(descriptor.annotation, descriptor.parameter_info, value, several, ctx)
    if plain is _TYPER or (plain == [] and param.required):
        return _typer_process_value(param, ctx, value)
    return param.callback(ctx, param, plain) if param.callback is not None else plain


#: ``_plain_value``'s answer for a value it leaves to typer.
_TYPER = object()
#: Numbers as typed that any converter reads the same (digits, and for a float a decimal part).
_DIGITS = {int: re.compile(r"[0-9]{1,18}"), float: re.compile(r"[0-9]{1,15}(?:\.[0-9]{1,15})?")}


def _plain_value(annotation: Any, info: Any, value: Any, several: bool, ctx: Any) -> Any:
    """``value`` as typer's converter for ``annotation`` makes it, when that cannot fail: a string for a
    str, strings for a list of str, a number (of its type, or as plain digits) within its bounds, a choice given as one
    of its members or its exact value, a bool; else ``_TYPER``."""
    if info.parser is not None or getattr(ctx, "token_normalize_func", None) is not None:
        return _TYPER
    if several:
        strings = getattr(annotation, "__origin__", None) is list and annotation.__args__ == (str,)
        if strings and isinstance(value, list | tuple) and all(type(v) is str for v in value):
            return list(value)
        return _TYPER
    if annotation is str or annotation is bool:
        return value if type(value) is annotation else _TYPER
    if annotation is int or annotation is float:
        return _plain_number(annotation, info, value)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        if isinstance(value, annotation):
            return value
        if type(value) is str and info.case_sensitive:
            return next((m for m in annotation if str(m.value) == value), _TYPER)
    return _TYPER


def _plain_number(annotation: type[Any], info: Any, value: Any) -> Any:
    """A number already of ``annotation``'s type, or typed as plain digits, inside the parameter's bounds."""
    if type(value) is str and _DIGITS[annotation].fullmatch(value):
        value = annotation(value)
    if type(value) is not annotation:
        return _TYPER
    if (info.min is not None and value < info.min) or (info.max is not None and value > info.max):
        return _TYPER
    return value


_typer_process_value = TyperParameter.process_value
TyperParameter.process_value = _plain_process_value  # type: ignore[method-assign,assignment]

PLUGIN_TIMEOUT = "--plugin-timeout"


def _take_plugin_timeout(args: list[str]) -> list[str]:
    """``--plugin-timeout SECONDS`` anywhere before ``--``: the watchdog's limit on each out-of-tree plugin call
    (``framework.watchdog``); the arguments without it."""
    from kschedctl.framework import watchdog

    watchdog.settings.timeout = watchdog.DEFAULT_TIMEOUT
    end = args.index("--") if "--" in args else len(args)
    out, i, value = [], 0, None
    while i < end:
        a = args[i]
        if a == PLUGIN_TIMEOUT and i + 1 < end:
            value, i = args[i + 1], i + 2
            continue
        if a.startswith(PLUGIN_TIMEOUT + "="):
            value = a.split("=", 1)[1]
        else:
            out.append(a)
        i += 1
    if value is not None:
        try:
            watchdog.settings.timeout = float(value)
        except ValueError:
            watchdog.settings.timeout = -1.0
        if not watchdog.settings.timeout >= 0:
            err(f"error: {PLUGIN_TIMEOUT} {value}: not a number of seconds (0: no limit)")
            raise typer.Exit(EXIT_ERROR)
    return out + args[end:]


#: ``-h`` as well as ``--help`` on every command and group (kubectl users type it); subcommands inherit it
HELP_OPTIONS = ["-h", "--help"]


class OneLineUsageError(ClickUsageError):
    """A usage error click found (an unknown option, a bad value, a missing argument), shown as every
    kschedctl error is: one line on stderr, ``error: ...``, exit status 2 (click shows the usage, a
    hint and the message on four lines)."""

    def __init__(self, cause: ClickUsageError) -> None:
        super().__init__(cause.format_message(), cause.ctx)

    def show(self, file: IO[Any] | None = None) -> None:
        hint = f" (try '{self.ctx.command_path} -h')" if self.ctx is not None else ""
        print(f"error: {self.format_message().rstrip('.')}{hint}", file=file or sys.stderr)


def _one_line(e: ClickUsageError) -> ClickUsageError:
    """``e`` as a one-line usage error; help shown for a command given without arguments stays help."""
    return e if isinstance(e, NoArgsIsHelpError | OneLineUsageError) else OneLineUsageError(e)


class RootGroup(TyperGroup):
    """The top-level command: ``--debug`` and ``--plugin-timeout`` are global flags, accepted before or after the
    subcommand; click's usage errors, the root's and its subcommands', are one line (``OneLineUsageError``)."""

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().make_context(*args, **kwargs)
        except ClickUsageError as e:
            raise _one_line(e) from None

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except ClickUsageError as e:
            raise _one_line(e) from None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _plain_argument_help(self)

    def get_params(self, ctx: Any) -> list[Any]:
        _completion_help(self)  # typer appends its completion options after __init__
        return list(super().get_params(ctx))

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        end = args.index("--") if "--" in args else len(args)
        debug_given = "--debug" in args[:end]
        if debug_given:
            args = [a for a in args[:end] if a != "--debug"] + args[end:]
        debug.set(debug_given)
        args = _take_plugin_timeout(args)
        end = args.index("--") if "--" in args else len(args)
        if not ctx.resilient_parsing:  # not while a shell asks for completions of a half-typed line
            _completion(args[:end])
        return super().parse_args(ctx, args)


def _completion(args: list[str]) -> None:
    """``--install-completion [SHELL]`` / ``--show-completion [SHELL]``, for the shell named (typer's
    options would detect it): done here, before the command line is parsed any further."""
    from kschedctl.cli.shells import completion_request, run_completion_request

    request = completion_request(args)
    if request is None:
        return
    option, shell = request
    if option == "--install-completion" and not os.environ.get("HOME"):
        # typer would fall back to the passwd entry's home (/root under sudo or in a container)
        err(
            "error: --install-completion writes into your home directory, but HOME is not set: "
            "set HOME, or source a script from completions/ yourself"
        )
        raise typer.Exit(EXIT_ERROR)
    try:
        print(run_completion_request(option, shell))
    except KschedctlError as e:
        err(f"error: {e}")
        raise typer.Exit(EXIT_ERROR) from None
    raise typer.Exit(EXIT_OK)


def _completion_help(command: Any) -> None:
    """The completion options' help names the optional SHELL kschedctl reads after them."""
    for param in getattr(command, "params", []):
        if param.name in ("install_completion", "show_completion"):
            verb = "Install" if param.name == "install_completion" else "Print"
            text = f"{verb} completion for SHELL (bash, zsh, fish, powershell), or for the current shell."
            param.get_help_record = functools.partial(lambda opt, t, ctx: (f"{opt} [SHELL]", t), param.opts[0], text)


app = typer.Typer(
    name="kschedctl",
    cls=RootGroup,
    help="Explain and dry-run Kubernetes scheduling exactly as kube-scheduler v1.33, v1.34, v1.35, v1.36 or v1.37 does it "
    f"(default {K8S_VERSION}; --kube-version chooses).\n\n{EXIT_HELP}",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": HELP_OPTIONS},
)
explain_app = typer.Typer(
    help="Explain what kube-scheduler would do with a pod.",
    no_args_is_help=True,
    context_settings={"help_option_names": HELP_OPTIONS},
)
app.add_typer(explain_app, name="explain")


class Output(StrEnum):
    table = "table"
    wide = "wide"
    json = "json"
    yaml = "yaml"
    markdown = "markdown"


class CheckOutput(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"
    markdown = "markdown"


class WhatIfOutput(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"
    markdown = "markdown"


WhatIfOutputOpt = Annotated[WhatIfOutput, typer.Option("--output", "-o", metavar="FORMAT", help="table, json, yaml or markdown.")]


def stdout_console() -> Any:
    """The rich Console for results (see ``kschedctl.cli.streams``)."""
    from kschedctl.cli.streams import stdout_console as make

    return make()


def err(msg: str) -> None:
    """One line on stderr (errors and notes)."""
    from kschedctl.cli.streams import stderr_console

    stderr_console().print(msg)


def note(message: str) -> None:
    err(f"note: {message}")


def notes_console() -> Any:
    """Where renderers print notes: stderr, as every other note."""
    from kschedctl.cli.streams import stderr_console

    return stderr_console()


def deferred_notes() -> Any:
    """``with deferred_notes() as notes:`` render a result, its notes printed on stderr after it
    (see ``kschedctl.cli.streams.deferred_notes``)."""
    from kschedctl.cli.streams import deferred_notes as defer

    return defer()


def emit_report(data: dict[str, Any], output: WhatIfOutput | Output, table: Any, markdown: Any, features: Any = None) -> None:
    """A what-if report (``diff-profiles``, ``simulate``): ``table(data, stdout, notes)`` or ``markdown(data)``,
    JSON or YAML; the progress line removed first, the notes after the tables. With ``features`` (the run's
    version), the version heads the table and markdown and is ``kubeVersion`` (with changed ``featureGates``)
    in JSON/YAML."""
    from kschedctl.cli.progress import done
    from kschedctl.render.data import emit

    def tables(d: dict[str, Any]) -> None:
        with deferred_notes() as notes:
            table(d, stdout_console(), notes)

    done()
    if features is not None:
        from kschedctl.kube.versions import version_fields, version_line

        data, line = {**version_fields(features), **data}, version_line(features)
        table_only, markdown_only = table, markdown
        table = lambda d, out, notes: (out.print(line, markup=False, highlight=False), table_only(d, out, notes))  # noqa: E731
        markdown = lambda d: after_title(markdown_only(d), line)  # noqa: E731
    emit(data, output.value, table=tables, markdown=markdown)


def after_title(text: str, line: str) -> str:
    """``line`` as a paragraph after the markdown's title (first, when it has none)."""
    title, sep, rest = text.partition("\n\n")
    return f"{title}\n\n{line}\n\n{rest}" if sep and title.startswith("#") else f"{line}\n\n{text}"


def guarded(fn: Callable[[], int]) -> None:
    """Run a command body: KschedctlError -> one line + exit 2; the body's int -> exit status.

    Exceptions plugins raised during the command (each became that plugin's Error status, shown
    in the result) are named on stderr, with their tracebacks under ``--debug``."""
    from kschedctl.cli.progress import running
    from kschedctl.framework.failures import PluginFailure, collecting
    from kschedctl.snapshot import forked

    raised: list[PluginFailure] = []
    interrupted = False
    try:
        with collecting(raised), running():
            code = fn()
    except KschedctlError as e:
        if debug.on:
            traceback.print_exc()
        err(f"error: {e}")
        raise typer.Exit(EXIT_ERROR) from None
    except (typer.Exit, typer.Abort):
        raise
    except KeyboardInterrupt as e:  # Ctrl-C during an out-of-tree plugin's call names the call
        from kschedctl.framework.watchdog import PluginInterrupted

        interrupted = True
        if not isinstance(e, PluginInterrupted):
            raise
        err(f"error: {e}")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except Exception as e:  # a bug: still one line unless --debug
        if debug.on:
            traceback.print_exc()
        err(f"internal error: {type(e).__name__}: {e} (run with --debug for the traceback)")
        raise typer.Exit(EXIT_ERROR) from None
    finally:
        report_plugin_failures(raised)
        forked.settle(stop=interrupted, end=True)  # a cache write under way: finished, stopped on Ctrl-C, or let go
    raise typer.Exit(code)


def report_plugin_failures(raised: list[Any]) -> None:
    """One line per distinct exception a plugin raised; its traceback with ``--debug``."""
    from kschedctl.framework.failures import describe, group

    for failure, nodes in group(raised):
        whose = "a bug in kschedctl, please report it" if failure.in_tree else "a bug in the plugin"
        if debug.on:
            err(f"{describe(failure, nodes)} ({whose}):\n{failure.traceback.rstrip()}")
        else:
            err(f"note: {describe(failure, nodes)} ({whose}); run with --debug for the traceback")


def worker_jobs(jobs: int | None) -> int | None:
    """``--jobs`` as the core takes it: one process under ``--debug``, so that every traceback is whole."""
    return 1 if debug.on else jobs


def version_line() -> str:
    return f"kschedctl {__version__} (models kube-scheduler {K8S_VERSION} by default)"


def _print_version(value: bool) -> None:
    if value:
        print(version_line())
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(
    debug_option: Annotated[
        bool,
        typer.Option("--debug", help=f"Show tracebacks of errors (anywhere on the command line; or {DEBUG_ENV}=1)."),
    ] = False,
    _version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_print_version, help="Print the version and exit."),
    ] = False,
    _plugin_timeout: Annotated[
        float,
        typer.Option(
            PLUGIN_TIMEOUT, metavar="SECONDS", min=0,
            help="Time limit of each call into an out-of-tree plugin (anywhere on the command line; 0: none): "
            "a call that does not return becomes that plugin's Error status.",
        ),
    ] = 10.0,
) -> None:
    debug.set(debug.on or debug_option)
