"""kschedctl's commands. Each command parses options, calls the core, renders, and sets the exit code.

Exit status everywhere: 0 success (the pod is schedulable / every check passed),
1 a result that is a "no" (unschedulable or gated pod, a failed check),
2 bad input, bad configuration or usage. Errors are one line on stderr; ``--debug``
(anywhere on the command line) or ``KSCHEDCTL_DEBUG=1`` shows the traceback. A reader that
closes stdout early (``| head``) does not change the exit status (see ``cli.streams``).
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from typer.core import TyperGroup

from kschedctl import K8S_VERSION, __version__
from kschedctl.cli.options import (
    ContextOpt,
    KubeconfigOpt,
    LiveSnapshotOpt,
    NamespaceOpt,
    RequestTimeoutOpt,
    complete_pod_names,
    live_options,
)
from kschedctl.cli.plugin_opts import PluginModuleOpt, build_registry
from kschedctl.errors import KschedctlError, UsageError

T = TypeVar("T")

EXIT_OK = 0
EXIT_NO = 1
EXIT_ERROR = 2

EXIT_HELP = (
    "Exit status: 0 schedulable (or all checks passed), 1 unschedulable or gated (or a check failed), "
    "2 bad input, configuration or usage."
)


def prog_name() -> str:
    """``kubectl kschedctl`` when run as the kubectl plugin (directly, or through the krew shim)."""
    base = os.path.basename(sys.argv[0]) if sys.argv else "kschedctl"
    as_plugin = base.startswith("kubectl-") or os.environ.get("KSCHEDCTL_KUBECTL_PLUGIN") == "1"
    return "kubectl kschedctl" if as_plugin else "kschedctl"


_state: dict[str, Any] = {"debug": False}

DEBUG_ENV = "KSCHEDCTL_DEBUG"


def _debug_from_env() -> bool:
    return os.environ.get(DEBUG_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def _plain_argument_help(command: Any) -> None:
    """Show arguments as options are shown, by their metavar alone (``NAME``, ``PATH...``), without
    typer's ``<str>`` / ``<list[str]>`` type labels and ``{...}`` marks; and leave unset parameters
    unconverted (``_unset_stays_unset``)."""
    from typer.core import TyperArgument

    def no_type(ctx: Any) -> str | None:
        return None

    for param in getattr(command, "params", []):
        if isinstance(param, TyperArgument) and param.metavar:
            usage = param.metavar if param.required else f"[{param.metavar}]"
            param.display_type_rich = no_type  # type: ignore[method-assign]
            param._usage_display_name = functools.partial(str, usage)  # type: ignore[method-assign]
        _unset_stays_unset(param)
    for sub in (getattr(command, "commands", None) or {}).values():
        _plain_argument_help(sub)


def _unset_stays_unset(param: Any) -> None:
    """A parameter left unset (value None) of a command is None, or ``()`` when it takes several values,
    as typer's conversion makes it; but typer builds the parameter's pydantic converter first, for
    every parameter of the command, which costs start-up time. Such a parameter skips the
    conversion (one that is required or has a callback still goes through typer)."""
    if param.required or param.callback is not None:
        return
    process = param.process_value
    several = bool(param.multiple or param.nargs == -1)

    def process_value(ctx: Any, value: Any) -> Any:
        if value is None:
            return () if several else None
        return process(ctx, value)

    param.process_value = process_value


class RootGroup(TyperGroup):
    """The top-level command: ``--debug`` is a global flag, accepted before or after the subcommand."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _plain_argument_help(self)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        end = args.index("--") if "--" in args else len(args)
        debug = "--debug" in args[:end]
        if debug:
            args = [a for a in args[:end] if a != "--debug"] + args[end:]
        _state["debug"] = debug or _debug_from_env()
        if "--install-completion" in args[:end] and not os.environ.get("HOME"):
            # typer would fall back to the passwd entry's home (/root under sudo or in a container)
            err(
                "error: --install-completion writes into your home directory, but HOME is not set: "
                "set HOME, or source a script from completions/ yourself"
            )
            raise typer.Exit(EXIT_ERROR)
        return super().parse_args(ctx, args)


app = typer.Typer(
    name="kschedctl",
    cls=RootGroup,
    help=f"Explain and dry-run Kubernetes scheduling exactly as kube-scheduler {K8S_VERSION} does it.\n\n{EXIT_HELP}",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
explain_app = typer.Typer(help="Explain what kube-scheduler would do with a pod.", no_args_is_help=True)
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


def guarded(fn: Callable[[], int]) -> None:
    """Run a command body: KschedctlError -> one line + exit 2; the body's int -> exit status.

    Exceptions plugins raised during the command (each became that plugin's Error status, shown
    in the result) are named on stderr, with their tracebacks under ``--debug``."""
    from kschedctl.cli.progress import running
    from kschedctl.framework.failures import PluginFailure, collecting

    raised: list[PluginFailure] = []
    try:
        with collecting(raised), running():
            code = fn()
    except KschedctlError as e:
        if _state["debug"]:
            traceback.print_exc()
        err(f"error: {e}")
        raise typer.Exit(EXIT_ERROR) from None
    except (typer.Exit, typer.Abort):
        raise
    except Exception as e:  # a bug: still one line unless --debug
        if _state["debug"]:
            traceback.print_exc()
        err(f"internal error: {type(e).__name__}: {e} (run with --debug for the traceback)")
        raise typer.Exit(EXIT_ERROR) from None
    finally:
        report_plugin_failures(raised)
    raise typer.Exit(code)


def report_plugin_failures(raised: list[Any]) -> None:
    """One line per distinct exception a plugin raised; its traceback with ``--debug``."""
    from kschedctl.framework.failures import describe, group

    for failure, nodes in group(raised):
        whose = "a bug in kschedctl, please report it" if failure.in_tree else "a bug in the plugin"
        if _state["debug"]:
            err(f"{describe(failure, nodes)} ({whose}):\n{failure.traceback.rstrip()}")
        else:
            err(f"note: {describe(failure, nodes)} ({whose}); run with --debug for the traceback")


def worker_jobs(jobs: int | None) -> int | None:
    """``--jobs`` as the core takes it: one process under ``--debug``, so that every traceback is whole."""
    return 1 if _state["debug"] else jobs


def version_line() -> str:
    return f"kschedctl {__version__} (models kube-scheduler {K8S_VERSION})"


def _print_version(value: bool) -> None:
    if value:
        print(version_line())
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(
    debug: Annotated[
        bool,
        typer.Option("--debug", help=f"Show tracebacks of errors (anywhere on the command line; or {DEBUG_ENV}=1)."),
    ] = False,
    _version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_print_version, help="Print the version and exit."),
    ] = False,
) -> None:
    _state["debug"] = _state["debug"] or debug or _debug_from_env()


class VersionOutput(StrEnum):
    text = "text"
    json = "json"
    yaml = "yaml"


@app.command()
def version(
    output: Annotated[
        VersionOutput, typer.Option("--output", "-o", metavar="FORMAT", help="text, json or yaml.")
    ] = VersionOutput.text,
) -> None:
    """Print kschedctl's version and the kube-scheduler version it models."""
    from kschedctl.render.data import emit

    data = {"kschedctl": __version__, "kubeScheduler": K8S_VERSION}
    emit(data, output.value, table=lambda _d: print(version_line()))


SnapshotOpt = Annotated[
    list[str] | None,
    typer.Option("--snapshot", "-s", metavar="PATH", help="Cluster snapshot: YAML/JSON file, kind: List, directory, or - for stdin. Repeatable."),
]
ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", "-c", metavar="FILE", help="KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)."),
]


@explain_app.command("pod")
def explain_pod_cmd(
    name: Annotated[
        str | None, typer.Argument(metavar="NAME", help="Name of a pod in the snapshot or the live cluster.", autocompletion=complete_pod_names)
    ] = None,
    namespace: NamespaceOpt = None,
    filename: Annotated[str | None, typer.Option("--filename", "-f", metavar="FILE", help="Pod manifest to schedule (- for stdin).")] = None,
    snapshot: LiveSnapshotOpt = None,
    config: ConfigOpt = None,
    output: Annotated[Output, typer.Option("--output", "-o", metavar="FORMAT", help="table, wide, json, yaml or markdown.")] = Output.table,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    plugin_module: PluginModuleOpt = None,
    fix: Annotated[
        bool,
        typer.Option("--fix", help="Also list single changes that would make the pod fit, each verified by re-running the cycle."),
    ] = False,
    compare: Annotated[
        str | None,
        typer.Option("--compare", metavar="NODE", help="Why the selected node won over NODE (default: the runner-up)."),
    ] = None,
) -> None:
    """Dry-run one scheduling cycle for a pod and show every extension point.

    Without --snapshot the live cluster of the kubeconfig's context is read (GET requests only). A pod that
    is already bound is explained as if it were pending. A -f file with several pods explains each (like
    kubectl describe -f), each against the same snapshot; -o json/yaml then prints a list. Exit status: 0 schedulable, 1 unschedulable or
    gated, 2 bad input or usage, or the cluster could not be read.
    """

    def body() -> int:
        from kschedctl.cli.live import open_source, read_cluster
        from kschedctl.cli.progress import current
        from kschedctl.config import load_config
        from kschedctl.explain.cycle import explain_pod
        from kschedctl.explain.pending import as_pending
        from kschedctl.snapshot.loader import admit_pod, load_pods, read_stdin_once
        from kschedctl.snapshot.source import pod_not_found
        from kschedctl.whatif.remedies import annotate_trace

        if (name is None) == (filename is None):
            raise UsageError("give either a pod NAME (with -n) or -f FILE")
        read_stdin_once(("-f", [filename] if filename else []), ("--snapshot", snapshot or []))
        source = open_source(snapshot, live_options(kubeconfig, context, request_timeout))
        ns = namespace or source.default_namespace()
        if name is not None:
            source.require_pod(ns, name)
        registry = build_registry(plugin_module)
        cfg = load_config(str(config) if config else None, registry)
        cluster = read_cluster(source)
        if filename is not None:
            pods = load_pods(filename)
            for p in pods:
                for n in admit_pod(cluster, p, "<stdin>" if filename == "-" else filename):
                    note(n)
            if len(pods) > 1:
                note(f"{filename} holds {len(pods)} pods: each is explained against the snapshot as it is "
                     "(to place them one after another, use kschedctl simulate)")
        else:
            assert name is not None
            found = cluster.pod(ns, name)
            if found is None:
                raise pod_not_found(cluster, ns, name, source.description)
            pods = [found]
        results = []
        details = output in (Output.wide, Output.json, Output.yaml)
        for pod in pods:
            bound_to = pod.node_name
            if bound_to:
                pod = as_pending(pod)
            trace = explain_pod(cluster, pod, cfg, registry, details=details, on_phase=current().phase)
            if bound_to:
                trace.notes.append(f"the pod is bound to {bound_to}; explained as if it were pending (its own placement removed)")
            data = trace.to_dict()
            if fix or compare:
                current().phase("verifying remedies")
            annotate_trace(data, trace, cluster, pod, cfg, registry, fix=fix, compare=compare)
            results.append((trace, data))
        if len(results) > 1 and output in (Output.json, Output.yaml):
            emit_traces([data for _, data in results], output)
        else:
            for i, (_, data) in enumerate(results):
                if i:
                    print()
                emit_trace(data, output)
        return EXIT_OK if all(t.schedulable for t, _ in results) else EXIT_NO

    guarded(body)


def emit_traces(data: list[dict[str, Any]], output: Output) -> None:
    """Several traces (``-f`` with several pods) as one JSON/YAML document: a list."""
    from kschedctl.cli.progress import done
    from kschedctl.render.data import emit

    done()
    emit(data, output.value, table=lambda d: None)


def emit_trace(data: dict[str, Any], output: Output) -> None:
    from kschedctl.cli.progress import done
    from kschedctl.render.data import emit

    def table(d: dict[str, Any]) -> None:
        from kschedctl.render.remedies import render_whatif_sections
        from kschedctl.render.table import render_trace

        console = stdout_console()
        render_trace(d, console, wide=output == Output.wide, notes_console=notes_console())
        render_whatif_sections(d, console, notes_console())

    def markdown(d: dict[str, Any]) -> str:
        from kschedctl.render.markdown import render_trace_markdown
        from kschedctl.render.remedies import whatif_sections_markdown

        return render_trace_markdown(d) + whatif_sections_markdown(d)

    done()
    emit(data, output.value, table=table, markdown=markdown)


# Commands defined in their own modules register themselves on ``app`` when imported.
# One import per module; keep this block sorted.
# --- command modules ---
import kschedctl.cli.check_cmd  # noqa: E402  (check)
import kschedctl.cli.live  # noqa: E402  (snapshot, explain pending)
import kschedctl.cli.plugins_cmd  # noqa: E402,F401  (plugins)
from kschedctl.cli import whatif  # noqa: E402,F401  (diff-profiles, simulate)

# --- end of command modules ---


def main() -> None:
    from kschedctl.cli.streams import guard_pipes

    guard_pipes()
    app(prog_name=prog_name())
