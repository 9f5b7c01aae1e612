"""The one small exception tree for bad input and bad configuration.

Plugin outcomes are never exceptions (they are Status values); these errors are
for what a user gave us: a malformed file, an invalid scheduler configuration,
an unreachable cluster. The CLI turns every KschedctlError into one line on
stderr and exit status 2.
"""

from __future__ import annotations

#: Why a file nested deeper than Python's stack allows is refused (snapshots, ``-f``, ``--config``,
#: kubeconfigs): no Kubernetes object comes near, and the parsers would otherwise fail with RecursionError.
NESTED_TOO_DEEPLY = "nested too deeply to be a Kubernetes object"


class KschedctlError(Exception):
    """Base of every user-facing error. ``str(err)`` is the one line shown."""

    exit_code = 2


class InputError(KschedctlError):
    """A snapshot or pod file that cannot be read or does not make sense.

    Rendered ``<file>: document <n>: <Kind ns/name>: <field>: <message>``, the field and message
    worded as the API server's validation words them where it has a word for it.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        document: int | None = None,
        obj: str | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.document = document
        self.obj = obj
        self.field = field
        super().__init__(self._render())

    def _render(self) -> str:
        where: list[str] = []
        if self.source:
            where.append(self.source)
        if self.document is not None:
            where.append(f"document {self.document}")
        if self.obj:
            where.append(self.obj)
        if self.field:
            where.append(self.field)
        prefix = ": ".join(where)
        return f"{prefix}: {self.message}" if prefix else self.message

    def located(
        self, *, source: str | None = None, document: int | None = None, obj: str | None = None
    ) -> InputError:
        """Return a copy that also says where the bad object came from."""
        return InputError(
            self.message,
            source=self.source or source,
            document=self.document if self.document is not None else document,
            obj=self.obj or obj,
            field=self.field,
        )


class ConfigError(KschedctlError):
    """An invalid KubeSchedulerConfiguration; worded like kube-scheduler's validation."""


class UsageError(KschedctlError):
    """Options that do not fit together, or a name that is not in the snapshot."""


class ClusterAccessError(KschedctlError):
    """The live cluster could not be read (unreachable, unauthorized, forbidden, timeout)."""
