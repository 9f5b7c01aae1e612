"""What the API server would refuse, worded as it words it: apimachinery's field errors and content
rules, and the create-time validation of the objects kube-scheduler reads.

kube-scheduler never sees an object the API server refused, so a snapshot or pod file holding
one has no faithful explanation: the loader rejects it with the API server's own message (the
text users search for), naming the file, the document and the field. The rules here are the
subset of ``k8s.io/kubernetes/pkg/apis/core/validation`` (v1.35) and apimachinery v0.35 that
covers every field the scheduler reads (names, labels, resources, affinity, tolerations, taints,
spreading, ports, gates, priority) plus the fields a person writing a manifest by hand gets
wrong most (a missing ``spec``, containers without name or image). Config validation and
selector parsing share the name and label rules, so they live here once too (``names``, the
package's leaf).

Validation runs on every object of a snapshot (50,000 pods), so the happy path is cheap:
precompiled patterns, no exceptions, and caches for the values snapshots repeat (label pairs,
namespaces, resource names). Objects read from a live cluster already passed the API server
and are not validated again.

The package is split by concern: ``goformat`` and ``fielderrors`` (how errors are worded),
``names`` (content rules), ``common`` (metadata and shared field checks), ``resources``,
``scheduling`` (selectors, affinity, tolerations, spreading), ``pod``, ``node``, ``workloads``,
``policy`` (PodDisruptionBudgets, IntOrString percents), ``podgroup`` (PodGroups, a pod's
``schedulingGroup``) and ``objects`` (the checks per kind). Every public name is importable from here.
"""

from __future__ import annotations

from kschedctl.apivalidation.common import (
    json_kind_name,
    namespace_name_errors,
    validate_labels,
    validate_object_meta,
    wrong_type,
)
from kschedctl.apivalidation.fielderrors import (
    DUPLICATE,
    FORBIDDEN,
    INVALID,
    NOT_FOUND,
    NOT_SUPPORTED,
    REQUIRED,
    Errors,
    FieldError,
    aggregate,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kschedctl.apivalidation.node import validate_taints
from kschedctl.apivalidation.objects import API_VERSIONS, api_version_error, first_error, validate_object
from kschedctl.apivalidation.pod import validate_pod_spec
from kschedctl.apivalidation.resources import (
    SCHEDULER_MAX_AMOUNT,
    is_extended_resource_name,
    is_hugepages,
    is_native_resource,
    overflow_detail,
    validate_quantity_value,
    validate_resource_list,
)
from kschedctl.apivalidation.scheduling import validate_label_selector
from kschedctl.apivalidation.workloads import WORKLOAD_KINDS, validate_object_meta_template, validate_workload
from kschedctl.kube.goformat import GoJSON, RawJSON, go_float, go_json, go_quote, render_value
from kschedctl.kube.names import (
    dns1123_subdomain_errors,
    label_value_errors,
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
    parse_go_int64,
    qualified_name_errors,
    regex_error,
    utf8_len,
)

__all__ = [
    "API_VERSIONS",
    "DUPLICATE",
    "FORBIDDEN",
    "INVALID",
    "NOT_FOUND",
    "NOT_SUPPORTED",
    "REQUIRED",
    "SCHEDULER_MAX_AMOUNT",
    "WORKLOAD_KINDS",
    "Errors",
    "FieldError",
    "GoJSON",
    "RawJSON",
    "aggregate",
    "api_version_error",
    "dns1123_subdomain_errors",
    "duplicate",
    "first_error",
    "forbidden",
    "go_float",
    "go_json",
    "go_quote",
    "invalid",
    "is_extended_resource_name",
    "is_hugepages",
    "is_native_resource",
    "json_kind_name",
    "label_value_errors",
    "name_is_dns1035_label",
    "name_is_dns_label",
    "name_is_dns_subdomain",
    "namespace_name_errors",
    "not_supported",
    "overflow_detail",
    "parse_go_int64",
    "qualified_name_errors",
    "regex_error",
    "render_value",
    "required",
    "utf8_len",
    "validate_label_selector",
    "validate_labels",
    "validate_object",
    "validate_object_meta",
    "validate_object_meta_template",
    "validate_pod_spec",
    "validate_quantity_value",
    "validate_resource_list",
    "validate_taints",
    "validate_workload",
    "wrong_type",
]
