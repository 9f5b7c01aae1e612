"""A CEL evaluator for the selector expressions of Dynamic Resource Allocation.

DeviceClasses and ResourceClaims choose devices with CEL expressions over one
variable, ``device`` (``driver``, ``attributes`` keyed by domain then attribute
name, ``capacity`` keyed the same way with Kubernetes quantities). kube-scheduler
evaluates them with cel-go and the Kubernetes CEL libraries. The PyPI CEL
packages were evaluated for this and do not fit: neither knows the Kubernetes
``quantity``/``semver`` types, the attribute map that yields an empty map for an
unknown domain, ``cel.bind`` or the Kubernetes string extensions, and their
error texts differ from cel-go's (which reach the user through Filter errors).

It lives on the ground floor (``kschedctl.kube``) because two layers compile these
expressions: the DynamicResources plugin (which evaluates them) and the API server's
create-time validation of DeviceClasses and ResourceClaims (``apivalidation.dra``), which
refuses one that does not compile.

It implements the part of CEL that device selectors use, compiled once per expression into
Python closures (fast enough to evaluate every device of a large cluster per scheduling cycle):

* literals (int, uint, double, string, bytes, bool, null, lists, maps),
  ``! - * / % + - < <= > >= == != in && || ?:``, with CEL's error rules
  (``&&``/``||`` absorb an error when the other side decides the result,
  integer overflow and division by zero are errors, cross-type numeric
  comparison and heterogeneous equality as in Kubernetes' environment);
* member access and indexing, ``has()``, the macros ``all``, ``exists``,
  ``exists_one``, ``map``, ``filter`` and ``cel.bind``;
* ``size``, ``contains``, ``startsWith``, ``endsWith``, ``matches``, the
  conversions ``int uint double string bool dyn``, the Kubernetes string
  extensions (``lowerAscii upperAscii trim replace split join indexOf
  lastIndexOf substring charAt``), the quantity library (``quantity
  isQuantity compareTo isGreaterThan isLessThan add sub mul asInteger isInteger
  asApproximateFloat sign``) and the semver library (``semver isSemver major
  minor patch compareTo isGreaterThan isLessThan``).

Anything else (optional types, timestamps and durations, the IP/CIDR/URL/format
libraries, message construction, ...) raises :class:`CelUnsupported` when the
expression is compiled, so the caller reports a clear error instead of guessing.
Known differences from cel-go: no runtime cost limit, and the compile-time type
check covers only undeclared names, unknown ``device`` fields, operators whose
operand types are statically incompatible and a non-boolean result type.

The modules, each importing only those before it:

* ``errors``: the exceptions and cel-go's issue format;
* ``values``: the value types beyond Python's (uint, quantity, semver, DRA's maps);
* ``operators``: what the operators do at run time;
* ``library``: the functions (strings, conversions, quantities, semvers) and their declarations;
* ``syntax``: tokens, the syntax tree and the parser;
* ``checker``: the compile-time type check;
* ``evaluator``: the compilation of a checked tree into closures;
* ``program``: :func:`compile_expression`, :class:`Program` and :class:`ProgramCache`;
* ``device``: the ``device`` variable (:func:`device_value`).

This module is the package's front: importers use the names below from ``kschedctl.kube.cel``.

Upstream model: ``k8s.io/dynamic-resource-allocation cel/compile.go``.
"""

from __future__ import annotations

from kschedctl.kube.cel.device import device_value, split_qualified_name
from kschedctl.kube.cel.errors import CelCompileError, CelError, CelUnsupported
from kschedctl.kube.cel.program import Program, ProgramCache, compile_expression
from kschedctl.kube.cel.values import DefaultingMap, Quantity, Semver, Uint

__all__ = [
    "CelCompileError",
    "CelError",
    "CelUnsupported",
    "DefaultingMap",
    "Program",
    "ProgramCache",
    "Quantity",
    "Semver",
    "Uint",
    "compile_expression",
    "device_value",
    "split_qualified_name",
]
