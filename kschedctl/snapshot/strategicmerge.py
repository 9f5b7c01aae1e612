"""Strategic merge patches, applied and computed as ``kubectl patch`` / ``kubectl apply`` do, for pods,
pod templates and nodes.

``explain --fix`` prints patches a user applies with ``kubectl patch`` (``--type strategic``, its
default). A remedy is only verified when that very patch, applied to the stored object, gives the
object the cycle was re-run on; so the patch semantics are needed here, and the Python kubernetes
client has none (it sends patches to the API server, which applies them). This is the subset of
apimachinery's ``strategicpatch`` (``patch.go``) that pod, pod-template and node manifests need:

* maps merge key by key; a ``null`` value deletes the key;
* lists whose Go field has ``patchStrategy:"merge"`` merge element by element on their merge key
  (``MERGE_KEYS``: containers by ``name``, ports by ``containerPort``...): a patch element updates the
  element of the same key or is appended; ``{"$patch": "delete", <key>: v}`` removes one;
* every other list (tolerations, node-selector terms, taints...) is replaced as a whole;
* directives: ``$patch: replace`` (in a map: the map becomes the patch; in a list: the list becomes
  the other elements), ``$patch: delete`` (in a map: the map goes), ``$retainKeys`` (keep only those
  keys), ``$setElementOrder/<list>`` (order of a merged list; accepted, the merged order is kept);
  any other ``$`` key is refused (``PatchError``), as the API server refuses it.

``diff`` is the inverse (``CreateTwoWayMergePatch``, without ordering directives): the patch that
turns one object into another, and ``apply(a, diff(a, b)) == b`` for objects whose merged lists
keep their order.

Upstream model: ``k8s.io/apimachinery/pkg/util/strategicpatch/patch.go`` and the ``patchStrategy`` /
``patchMergeKey`` tags of ``k8s.io/api/core/v1/types.go``.
"""

from __future__ import annotations

import copy
from typing import Any

#: Merge keys of the lists whose ``patchStrategy`` is merge, by the path of the list from a PodSpec
#: (``[]`` for "each element of"). Lists not named here are replaced whole.
POD_SPEC_MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "schedulingGates": "name",
    "resourceClaims": "name",
    **{
        f"{c}[].{field}": key
        for c in ("containers", "initContainers", "ephemeralContainers")
        for field, key in (("env", "name"), ("ports", "containerPort"), ("volumeMounts", "mountPath"),
                           ("volumeDevices", "devicePath"))
    },
}
#: The same for object metadata.
META_MERGE_KEYS: dict[str, str] = {"ownerReferences": "uid"}
#: Where a PodSpec sits in each kind a remedy patches.
POD_SPEC_AT: dict[str, str] = {
    "Pod": "spec",
    "ReplicaSet": "spec.template.spec",
    "Deployment": "spec.template.spec",
    "StatefulSet": "spec.template.spec",
    "DaemonSet": "spec.template.spec",
    "Job": "spec.template.spec",
    "ReplicationController": "spec.template.spec",
}


def merge_keys(kind: str) -> dict[str, str]:
    """The merge keys of ``kind``'s lists, by their path from the object's root."""
    out = {f"metadata.{p}": k for p, k in META_MERGE_KEYS.items()}
    at = POD_SPEC_AT.get(kind)
    if at is not None:
        out.update({f"{at}.{p}": k for p, k in POD_SPEC_MERGE_KEYS.items()})
        if at != "spec":
            out.update({f"spec.template.metadata.{p}": k for p, k in META_MERGE_KEYS.items()})
    return out


class PatchError(ValueError):
    """A patch the API server would refuse to apply (its wording where it has one)."""


DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
ORDER_PREFIX = "$setElementOrder/"


def apply(original: dict[str, Any], patch: dict[str, Any], kind: str) -> dict[str, Any]:
    """``original`` with the strategic merge ``patch`` applied (neither is changed)."""
    if not isinstance(patch, dict):
        raise PatchError("a strategic merge patch must be a JSON object")
    out = _merge_map(original, patch, "", merge_keys(kind))
    return {} if out is None else out


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _merge_map(original: dict[str, Any], patch: dict[str, Any], path: str, keys: dict[str, str]) -> dict[str, Any] | None:
    """The merged map; None when the patch deletes it (``$patch: delete``)."""
    directive = patch.get(DIRECTIVE)
    if directive == "delete":
        return None
    if directive == "replace":
        return _merge_map({}, {k: v for k, v in patch.items() if k != DIRECTIVE}, path, keys)
    if directive not in (None, "merge"):
        raise PatchError(f"Unknown patch type: {directive}")
    out = copy.deepcopy(original)
    for k, v in patch.items():
        if k in (DIRECTIVE, RETAIN_KEYS) or k.startswith(ORDER_PREFIX):
            continue
        if k.startswith("$"):
            raise PatchError(f"unknown patch directive {k}")
        if v is None:
            out.pop(k, None)
            continue
        here = _child(path, k)
        old = original.get(k)
        if isinstance(v, dict):
            merged = _merge_map(old if isinstance(old, dict) else {}, v, here, keys)
            if merged is None:
                out.pop(k, None)
            else:
                out[k] = merged
        elif isinstance(v, list) and here in keys:
            out[k] = _merge_list(old if isinstance(old, list) else [], v, here, keys)
        else:
            out[k] = copy.deepcopy(v)
    retain = patch.get(RETAIN_KEYS)
    if isinstance(retain, list):
        out = {k: v for k, v in out.items() if k in retain}
    return out


def _merge_list(original: list[Any], patch: list[Any], path: str, keys: dict[str, str]) -> list[Any]:
    """A list merged element by element on its merge key."""
    key = keys[path]
    item_path = f"{path}[]"
    if any(isinstance(e, dict) and e.get(DIRECTIVE) == "replace" for e in patch):
        return [copy.deepcopy(e) for e in patch if not (isinstance(e, dict) and e.get(DIRECTIVE) == "replace")]
    out = copy.deepcopy(original)
    for e in patch:
        if not isinstance(e, dict):
            raise PatchError(f"{path}: merging a list of {type(e).__name__} values on {key!r} is not supported")
        if key not in e:
            raise PatchError(f"map: {e} does not contain declared merge key: {key}")
        at = next((i for i, o in enumerate(out) if isinstance(o, dict) and o.get(key) == e[key]), None)
        if e.get(DIRECTIVE) == "delete":
            out = [o for o in out if not (isinstance(o, dict) and o.get(key) == e[key])]
            continue
        merged = _merge_map(out[at] if at is not None else {}, e, item_path, keys)
        if merged is None:
            continue
        if at is None:
            out.append(merged)
        else:
            out[at] = merged
    return out


def diff(original: dict[str, Any], modified: dict[str, Any], kind: str) -> dict[str, Any]:
    """The strategic merge patch that turns ``original`` into ``modified`` (``{}`` when they are equal)."""
    return _diff_map(original, modified, "", merge_keys(kind))


def _diff_map(original: dict[str, Any], modified: dict[str, Any], path: str, keys: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k in original:
        if k not in modified:
            out[k] = None
    for k, v in modified.items():
        old = original.get(k)
        if k in original and old == v:
            continue
        here = _child(path, k)
        if isinstance(v, dict) and isinstance(old, dict):
            sub = _diff_map(old, v, here, keys)
            if sub:
                out[k] = sub
        elif isinstance(v, list) and here in keys:
            out[k] = _diff_list(old if isinstance(old, list) else [], v, here, keys)
        elif isinstance(v, dict):
            out[k] = _diff_map({}, v, here, keys) if v else {}
        else:
            out[k] = copy.deepcopy(v)
    return out


def _keyed(items: list[Any], key: str) -> bool:
    values = [e.get(key) for e in items if isinstance(e, dict)]
    return len(values) == len(items) and None not in values and len(set(map(repr, values))) == len(values)


def _diff_list(original: list[Any], modified: list[Any], path: str, keys: dict[str, str]) -> list[Any]:
    """A merged list's patch: changed and new elements, deletions; the whole list when merging cannot
    give ``modified`` (elements without a distinct key, or an order merging does not keep)."""
    key = keys[path]
    if not (_keyed(original, key) and _keyed(modified, key)):
        return [{DIRECTIVE: "replace"}, *copy.deepcopy(modified)]
    old_by = {repr(e[key]): e for e in original}
    new_ids = [repr(e[key]) for e in modified]
    kept = [i for i in (repr(e[key]) for e in original) if i in set(new_ids)]
    if new_ids[: len(kept)] != kept:  # merging keeps the old order and appends the new elements
        return [{DIRECTIVE: "replace"}, *copy.deepcopy(modified)]
    out: list[Any] = []
    for e in modified:
        old = old_by.get(repr(e[key]))
        if old is None:
            out.append(copy.deepcopy(e))
        elif old != e:
            out.append({key: e[key], **_diff_map(old, e, f"{path}[]", keys)})
    out += [{DIRECTIVE: "delete", key: e[key]} for e in original if repr(e[key]) not in set(new_ids)]
    return out
