"""kschedctl: explain and dry-run Kubernetes scheduling as kube-scheduler v1.35.4 does it."""

__version__ = "0.1.0"
K8S_VERSION = "v1.35.4"
