"""Deployer selection and flags: how a bundle is laid out for helm, helmfile, Argo CD, Argo CD + Helm, or Flux.

Upstream's set (``aicr bundle --deployer``): ``helm`` (default: ``deploy.sh`` and numbered
folders), ``helmfile`` (``helmfile.yaml`` + ``level-N.yaml``), ``argocd`` (``app-of-apps.yaml``
+ one ``application.yaml`` per folder), ``argocd-helm`` (a root Helm chart of Argo CD
Applications with ``values.schema.json`` and a template-time profile-lock guard) and
``flux`` (HelmRelease / OCIRepository / HelmRepository / Kustomization under
``<component>/`` and ``sources/``). Each deployer is one module here; the YAML skeletons and
Helm templates they fill are files under ``templates/``.

:func:`deployer_config` applies upstream's flag rules (flux flags only with flux,
``--app-name`` only with the Argo CD deployers, ``--readiness-hooks`` not with helmfile or
flux, ``--repo`` ignored with a warning for argocd-helm); :func:`split_deployer_options`
takes the reserved ``deployer:`` prefix out of ``--set`` (typed values refused).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aicr_tui.core.foundation.errors import invalid

if TYPE_CHECKING:
    from aicr_tui.core.bundler.overrides import BundleOverrides

DEPLOYERS = ("helm", "helmfile", "argocd", "argocd-helm", "flux")
ARGO = ("argocd", "argocd-helm")
READINESS = ("helm", "argocd", "argocd-helm")
ENTRYPOINTS = {
    "helm": "deploy.sh",
    "helmfile": "helmfile.yaml",
    "argocd": "app-of-apps.yaml",
    "argocd-helm": "Chart.yaml",
    "flux": "kustomization.yaml",
}
DEFAULT_APP_NAME = "aicr-stack"
DEFAULT_FLUX_NAMESPACE = "flux-system"
DEFAULT_FLUX_SOURCE = "aicr-bundle"
RESERVED_PREFIX = "deployer"
REPO_PLACEHOLDER = "https://git.example.invalid/replace-with-your-bundle-repo.git"
OCI_PLACEHOLDER = "oci://registry.example.invalid/replace-with-your-bundle"

# ``--set deployer:<key>=<value>`` (Argo CD deployers only): key -> (default, what it is).
ARGO_OPTIONS: dict[str, tuple[str, str]] = {
    "project": ("default", "Argo CD project of every Application"),
    "namespace": ("argocd", "namespace the Applications live in (Argo CD's own)"),
    "targetRevision": ("main", "Git revision of --repo the Applications track"),
    "destinationServer": ("https://kubernetes.default.svc", "cluster the Applications target"),
}


@dataclass(frozen=True)
class DeployerConfig:
    """The deployer and its settings, already checked against upstream's flag rules."""

    name: str = "helm"
    repo: str = ""
    app_name: str = DEFAULT_APP_NAME
    serial: bool = False
    readiness_hooks: bool = False
    flux_namespace: str = DEFAULT_FLUX_NAMESPACE
    flux_oci_source_name: str = DEFAULT_FLUX_SOURCE
    options: dict[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def option(self, key: str) -> str:
        return self.options.get(key, ARGO_OPTIONS[key][0])

    @property
    def entrypoint(self) -> str:
        return ENTRYPOINTS[self.name]

    def settings(self) -> dict[str, object]:
        """The observable settings for ``bundle-info.yaml`` (defaults left out)."""
        out: dict[str, object] = {}
        if self.repo:
            out["repo"] = self.repo
        if self.name in ARGO and self.app_name != DEFAULT_APP_NAME:
            out["appName"] = self.app_name
        if self.serial:
            out["serial"] = True
        if self.readiness_hooks:
            out["readinessHooks"] = True
        if self.name == "flux":
            out["fluxNamespace"] = self.flux_namespace
            out["fluxOciSourceName"] = self.flux_oci_source_name
        if self.options:
            out["deployerOptions"] = dict(sorted(self.options.items()))
        return out


def _label(value: str, flag: str) -> str:
    from aicr_tui.core.foundation.names import is_dns1123_label, shown

    if not is_dns1123_label(value):
        raise invalid(
            f"{flag} {shown(value)} is not a valid name; expected a DNS-1123 label (lowercase "
            "letters, digits and '-', starting and ending with a letter or digit, at most 63 "
            "characters)"
        )
    return value


def _repo(value: str, deployer: str, *, oci: bool = False) -> str:
    from aicr_tui.core.foundation.names import shown

    if not value:
        return ""
    if len(value) > 2048 or any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise invalid(
            f"--repo {shown(value)} is not a repository URL; expected no spaces or control "
            "characters, at most 2048 characters"
        )
    if deployer == "flux" or oci:
        if not value.startswith("oci://") or len(value) <= len("oci://"):
            what = (
                "the flux deployer syncs the bundle from an OCIRepository"
                if deployer == "flux"
                else "with --vendor-charts the argocd-helm Applications install the charts "
                "pushed there"
            )
            raise invalid(
                f"--repo {shown(value)} is not an OCI repository; {what}, expected "
                "oci://registry/repository"
            )
    elif not value.startswith(("https://", "http://", "ssh://", "git@")):
        raise invalid(
            f"--repo {shown(value)} is not a Git repository URL; expected https://…, ssh://… "
            "or git@host:path"
        )
    return value


def deployer_config(
    name: str = "helm",
    *,
    repo: str = "",
    app_name: str | None = None,
    serial: bool = False,
    readiness_hooks: bool = False,
    flux_namespace: str | None = None,
    flux_oci_source_name: str | None = None,
    options: dict[str, str] | None = None,
    vendor_charts: bool = False,
) -> DeployerConfig:
    """Check the deployer flags the way upstream does; ``None`` means "flag not given".

    ``vendor_charts`` (``--vendor-charts``): argocd-helm keeps ``--repo``, the OCI repository
    the bundle's chart archives are pushed to (its Applications install them from there)."""
    if name not in DEPLOYERS:
        raise invalid(
            f"--deployer {name!r} is not supported; must be one of [{', '.join(DEPLOYERS)}]"
        )
    if name != "flux":
        for flag, value in (
            ("--flux-namespace", flux_namespace),
            ("--flux-oci-source-name", flux_oci_source_name),
        ):
            if value is not None:
                raise invalid(f"{flag} applies only to --deployer flux (got --deployer {name})")
    if app_name is not None and name not in ARGO:
        raise invalid(f"--app-name applies only to --deployer argocd or argocd-helm (got {name})")
    if readiness_hooks and name not in READINESS:
        raise invalid(
            f"--readiness-hooks applies only to --deployer helm, argocd or argocd-helm (got {name})"
        )
    opts = check_options(name, options or {})
    warnings: list[str] = []
    vendored_oci = name == "argocd-helm" and vendor_charts
    if vendored_oci and not repo:
        warnings.append(
            f"--repo is not set: the Applications install the vendored charts from "
            f"{OCI_PLACEHOLDER}/charts; regenerate with --repo oci://<registry>/<repository> "
            "you push the chart archives to"
        )
    elif name == "argocd-helm" and repo and not vendored_oci:
        warnings.append(
            "--repo is ignored with --deployer argocd-helm: the root chart carries every "
            "component's values itself (install it from the bundle directory or an OCI registry)"
        )
        repo = ""
    elif name in ("helm", "helmfile") and repo:
        warnings.append(f"--repo is not used by --deployer {name}")
        repo = ""
    elif name == "argocd" and not repo:
        warnings.append(
            f"--repo is not set: the Applications point at {REPO_PLACEHOLDER}; regenerate with "
            "--repo <the Git repository you push the bundle to>"
        )
    elif name == "flux" and not repo:
        warnings.append(
            f"--repo is not set: the bundle's OCIRepository points at {OCI_PLACEHOLDER}; "
            "regenerate with --repo oci://<registry>/<repository> you push the bundle to"
        )
    return DeployerConfig(
        name=name,
        repo=_repo(repo, name, oci=vendored_oci),
        app_name=_label(app_name, "--app-name") if app_name is not None else DEFAULT_APP_NAME,
        serial=serial,
        readiness_hooks=readiness_hooks,
        flux_namespace=_label(flux_namespace, "--flux-namespace")
        if flux_namespace is not None
        else DEFAULT_FLUX_NAMESPACE,
        flux_oci_source_name=_label(flux_oci_source_name, "--flux-oci-source-name")
        if flux_oci_source_name is not None
        else DEFAULT_FLUX_SOURCE,
        options=opts,
        warnings=tuple(warnings),
    )


def check_options(name: str, options: dict[str, str]) -> dict[str, str]:
    """Upstream's rules for ``--set deployer:<key>=<value>``: Argo CD deployers only, known
    keys, plain non-empty values; the namespace and project are DNS-1123 labels."""
    opts = dict(options)
    if opts and name not in ARGO:
        first = sorted(opts)[0]
        raise invalid(
            f"--set {RESERVED_PREFIX}:{first}: deployer options apply only to --deployer argocd "
            f"or argocd-helm (got {name})"
        )
    for key in sorted(opts):
        value = opts[key]
        if key not in ARGO_OPTIONS:
            raise invalid(
                f"--set {RESERVED_PREFIX}:{key}: unknown deployer option; known: "
                + ", ".join(sorted(ARGO_OPTIONS))
            )
        if not value or any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
            raise invalid(
                f"--set {RESERVED_PREFIX}:{key}: expected a non-empty value without spaces or "
                "control characters"
            )
        if key in ("namespace", "project"):
            _label(value, f"--set {RESERVED_PREFIX}:{key}")
    return opts


def with_options(config: DeployerConfig, options: dict[str, str]) -> DeployerConfig:
    """``config`` with the ``deployer:`` options of ``--set`` checked and added."""
    from dataclasses import replace

    if not options:
        return config
    return replace(config, options={**config.options, **check_options(config.name, options)})


def split_deployer_options(overrides: BundleOverrides) -> tuple[BundleOverrides, dict[str, str]]:
    """Take ``deployer:<key>=<value>`` out of ``--set``; typed or ``--dynamic`` ones refuse."""
    for entry in (*overrides.set_json, *overrides.set_file, *overrides.dynamic):
        if entry.key == RESERVED_PREFIX:
            raise invalid(
                f"{entry.display()}: deployer options take plain --set {RESERVED_PREFIX}:<key>=<value>, "
                "never typed (--set-json/--set-file) or --dynamic values"
            )
    options: dict[str, str] = {}
    for entry in overrides.sets:
        if entry.key == RESERVED_PREFIX:
            options[entry.path] = entry.text
    if not options:
        return overrides, {}
    kept = tuple(e for e in overrides.sets if e.key != RESERVED_PREFIX)
    return overrides.model_copy(update={"sets": kept}), options


__all__ = [
    "ARGO_OPTIONS",
    "DEPLOYERS",
    "DeployerConfig",
    "deployer_config",
    "split_deployer_options",
]
