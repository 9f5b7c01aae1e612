"""kschedctl: explain and dry-run Kubernetes scheduling as kube-scheduler v1.33 to v1.36 does it (v1.35.4 by default)."""

__version__ = "0.1.0"
K8S_VERSION = "v1.35.4"
