"""Content rules for names, label keys and values, and Go integers (apimachinery
``util/validation/validation.go``).

The leaf of the package: selector parsing (``kschedctl.kube.selectors``) and configuration
validation use these rules too, so this module imports nothing of kschedctl.
"""

from __future__ import annotations

import re

_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"


_LABEL_KEY_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"


_LABEL_VALUE_FMT = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"


_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)


_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"


_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)


_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"


_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)


_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"


_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character"
)


_LABEL_KEY_RE = re.compile(_LABEL_KEY_FMT)


_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)


DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)


_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)


_DNS1035_LABEL_RE = re.compile(_DNS1035_LABEL_FMT)


#: A whole qualified name (label key) in one pattern, for the fast path; the slow path words the errors.
_QUALIFIED_NAME_RE = re.compile(f"(?:{_DNS1123_SUBDOMAIN_FMT}/)?{_LABEL_KEY_FMT}")


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    out = msg + " (e.g. "
    for i, ex in enumerate(examples):
        if i > 0:
            out += " or "
        out += f"'{ex}', "
    return out + f"regex used for validation is '{fmt}')"


def utf8_len(s: str) -> int:
    return len(s.encode("utf-8"))


def dns1123_subdomain_errors(value: str) -> list[str]:
    """``content.IsDNS1123Subdomain`` (lengths in bytes), used for label key prefixes."""
    errs = []
    if utf8_len(value) > 253:
        errs.append("must be no more than 253 bytes")
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def qualified_name_errors(value: str) -> list[str]:
    """``IsQualifiedName`` (= ``content.IsLabelKey``)."""
    if len(value) <= 316 and _QUALIFIED_NAME_RE.fullmatch(value):
        prefix, _, name = value.rpartition("/")
        if len(name) <= 63 and len(prefix) <= 253:
            return []
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain_errors(prefix))
    else:
        return [
            "a valid label key "
            + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif utf8_len(name) > 63:
        errs.append("name part must be no more than 63 bytes")
    if not _LABEL_KEY_RE.fullmatch(name):
        errs.append(
            "name part " + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def label_value_errors(value: str) -> list[str]:
    if len(value) <= 63 and _LABEL_VALUE_RE.fullmatch(value):
        return []
    errs = []
    if utf8_len(value) > 63:
        errs.append("must be no more than 63 bytes")
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def name_is_dns_subdomain(value: str) -> list[str]:
    """``NameIsDNSSubdomain`` (``validation.IsDNS1123Subdomain``): Pod, Node and most names."""
    if len(value) <= 253 and _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        return []
    errs = []
    if len(value) > 253:
        errs.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def name_is_dns_label(value: str) -> list[str]:
    """``NameIsDNSLabel`` (``validation.IsDNS1123Label``): namespaces, container and volume names."""
    if len(value) <= 63 and DNS1123_LABEL_RE.fullmatch(value):
        return []
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def name_is_dns1035_label(value: str) -> list[str]:
    """``NameIsDNS1035Label``: Service names."""
    if len(value) <= 63 and _DNS1035_LABEL_RE.fullmatch(value):
        return []
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS1035_LABEL_RE.fullmatch(value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


_INT_RE = re.compile(r"[+-]?[0-9]+")


_INT64_MIN = -(2**63)


INT64_MAX = 2**63 - 1


def parse_go_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: optional sign and ASCII digits only, int64 range; else None."""
    if not _INT_RE.fullmatch(text):
        return None
    v = int(text)
    if v < _INT64_MIN or v > INT64_MAX:
        return None
    return v
