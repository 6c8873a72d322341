"""What a bundle pulls: the images its rendered objects name and the charts it installs.

Pure functions over rendered objects (``aicr_tui.core.services.mirror`` renders them). An image is
found wherever a cluster would pull it from:

- every Pod template's ``containers``, ``initContainers`` and ``ephemeralContainers``
  (Deployments, DaemonSets, StatefulSets, Jobs, CronJobs, Pods, hooks included);
- any other ``image`` string in an object: the operands an operator deploys when its
  custom resource names the image whole (a Prometheus, an Alertmanager), with a sibling
  ``tag`` or ``version`` when the image carries neither (a Skyhook package);
- ``repository`` + ``image`` + ``version`` in one mapping: the NVIDIA operators' operand
  convention (ClusterPolicy, NicClusterPolicy), composed as the operator composes it (a
  ``sha256:`` version is a digest);
- an environment value or a ``--flag=value`` argument that is a full image reference with
  a registry and a tag or digest (an operator told which image its operands run, such as
  the Prometheus operator's config reloader).

A mapping with ``enabled: false`` is an operand its custom resource switches off, and is
skipped. Images an operator computes in its own code (from its version and a registry
setting, with no object naming them) cannot be found in rendered objects and are not
listed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.foundation.textsafe import safe_line
from aicr_tui.core.foundation.yamlio import dump_json, dump_yaml

_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
# registry host (a dot or a port, or localhost), path, and a tag and/or a digest
_FULL_REFERENCE = re.compile(
    r"^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)+(?::[0-9]+)?|localhost(?::[0-9]+)?|[a-z0-9-]+:[0-9]+)"
    r"(?:/[a-z0-9]+(?:[._-]+[a-z0-9]+)*)+"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$"
)
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_NO_SPACE = re.compile(r"^\S+$")


@dataclass(frozen=True)
class ImageUse:
    """One place an image is named: the component, the object and the field."""

    component: str
    obj: str  # Kind/namespace/name
    path: str  # spec.template.spec.containers[0].image


@dataclass
class Image:
    ref: str
    uses: list[ImageUse] = field(default_factory=list)


@dataclass(frozen=True)
class Chart:
    component: str
    name: str
    repository: str
    version: str
    namespace: str


@dataclass
class MirrorList:
    images: list[Image] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    unrendered: list[str] = field(default_factory=list)
    """Components whose chart could not be rendered: their images are not listed (the
    list is incomplete, and says so)."""
    stand_ins: list[str] = field(default_factory=list)
    """Components rendered from a registry-declared stand-in chart, not the pin itself."""

    def add(self, ref: str, use: ImageUse) -> None:
        for image in self.images:
            if image.ref == ref:
                if use not in image.uses:
                    image.uses.append(use)
                return
        self.images.append(Image(ref, [use]))


def full_reference(text: str) -> bool:
    """True for ``registry.host[:port]/path[:tag][@sha256:…]`` with a tag or a digest."""
    return bool(_FULL_REFERENCE.match(text)) and (":" in text.split("/", 1)[1] or "@" in text)


def _object_label(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    ns = meta.get("namespace")
    name = meta.get("name", "")
    return f"{obj.get('kind', '')}/{ns}/{name}" if ns else f"{obj.get('kind', '')}/{name}"


def _composed(node: dict[str, Any]) -> str | None:
    repo, image, version = node.get("repository"), node.get("image"), node.get("version")
    if not all(isinstance(v, str) and v and _NO_SPACE.match(v) for v in (repo, image)):
        return None
    assert isinstance(repo, str) and isinstance(image, str)
    ref = f"{repo.rstrip('/')}/{image}"
    if isinstance(version, str) and version:
        ref += f"@{version}" if _DIGEST.match(version) else f":{version}"
    return ref


def _tagged(image: str, node: dict[str, Any]) -> str:
    """``image`` with its sibling ``tag``/``version`` when it carries neither a tag nor a
    digest (a Skyhook package, an operand spec written as image plus version)."""
    last = image.rsplit("/", 1)[-1]
    if ":" in last or "@" in last:
        return image
    for key in ("tag", "version"):
        value = node.get(key)
        if isinstance(value, str) and value and _NO_SPACE.match(value):
            return f"{image}@{value}" if _DIGEST.match(value) else f"{image}:{value}"
    return image


def image_fields(node: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """``(reference, field path)`` for every image ``node`` names (see the module doc)."""
    if isinstance(node, dict):
        if node.get("enabled") is False:
            return  # an operand its custom resource switches off is never deployed
        composed = _composed(node) if "repository" in node and "image" in node else None
        if composed is not None:
            yield composed, f"{path}.repository/image/version".lstrip(".")
        image = node.get("image")
        if composed is None and isinstance(image, str) and image and _NO_SPACE.match(image):
            if "/" in image or ":" in image or "name" in node:
                yield _tagged(image, node), f"{path}.image".lstrip(".")
        env = node.get("env")
        if isinstance(env, list):
            for i, var in enumerate(env):
                value = var.get("value") if isinstance(var, dict) else None
                if isinstance(value, str) and full_reference(value):
                    yield value, f"{path}.env[{i}].value".lstrip(".")
        for key in ("args", "command"):
            words = node.get(key)
            if isinstance(words, list):
                for i, word in enumerate(words):
                    if isinstance(word, str) and word.startswith("-") and "=" in word:
                        value = word.split("=", 1)[1]
                        if full_reference(value):
                            yield value, f"{path}.{key}[{i}]".lstrip(".")
        for key, value in node.items():
            if key in ("env", "args", "command") and isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, dict | list):
                        yield from image_fields(item, f"{path}.{key}[{i}]")
                continue
            if isinstance(value, dict | list):
                yield from image_fields(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from image_fields(item, f"{path}[{i}]")


def collect(mirror: MirrorList, component: str, objects: Sequence[dict[str, Any]]) -> None:
    """Add every image ``objects`` name to ``mirror``."""
    for obj in objects:
        label = _object_label(obj)
        for ref, where in image_fields(obj):
            mirror.add(ref, ImageUse(component, label, where))


# ----------------------------------------------------------------------------- formats
FORMATS = ("text", "json", "hauler", "zarf")


def render_text(mirror: MirrorList) -> str:
    """One line per image, then per chart; every line terminal-safe (a chart's text is
    hostile: an image field may hold control characters)."""
    lines = [f"# images ({len(mirror.images)})"]
    lines += [image.ref for image in sorted(mirror.images, key=lambda i: i.ref)]
    lines.append(f"# charts ({len(mirror.charts)})")
    lines += [f"{c.repository} {c.name} {c.version}" for c in mirror.charts]
    for name in mirror.unrendered:
        lines.append(f"# not rendered, images not listed: {name}")
    for name in mirror.stand_ins:
        lines.append(f"# rendered from a stand-in chart, not the pin: {name}")
    return "\n".join(safe_line(line) for line in lines) + "\n"


def render_json(mirror: MirrorList) -> str:
    return dump_json(
        {
            "images": [
                {
                    "ref": image.ref,
                    "uses": [
                        {"component": u.component, "object": u.obj, "field": u.path}
                        for u in image.uses
                    ],
                }
                for image in sorted(mirror.images, key=lambda i: i.ref)
            ],
            "charts": [
                {
                    "component": c.component,
                    "name": c.name,
                    "repository": c.repository,
                    "version": c.version,
                    "namespace": c.namespace,
                }
                for c in mirror.charts
            ],
            "unrendered": list(mirror.unrendered),
            "standIns": list(mirror.stand_ins),
            "complete": not mirror.unrendered,
        }
    )


def render_hauler(mirror: MirrorList, name: str = "aicr-bundle") -> str:
    """Hauler content manifests (``hauler store sync -f``): one Images, one Charts."""
    images = {
        "apiVersion": "content.hauler.cattle.io/v1",
        "kind": "Images",
        "metadata": {"name": f"{name}-images"},
        "spec": {"images": [{"name": i.ref} for i in sorted(mirror.images, key=lambda i: i.ref)]},
    }
    charts = {
        "apiVersion": "content.hauler.cattle.io/v1",
        "kind": "Charts",
        "metadata": {"name": f"{name}-charts"},
        "spec": {
            "charts": [
                {"name": c.name, "repoURL": c.repository, "version": c.version}
                for c in mirror.charts
            ]
        },
    }
    return dump_yaml(images) + "---\n" + dump_yaml(charts)


def render_zarf(mirror: MirrorList, name: str = "aicr-bundle") -> str:
    """A Zarf package definition (``zarf.yaml``): one required component per chart, with
    the images its rendered objects name; images of manifest-only steps go with them."""
    by_component: dict[str, list[str]] = {}
    for image in sorted(mirror.images, key=lambda i: i.ref):
        for use in image.uses:
            refs = by_component.setdefault(use.component, [])
            if image.ref not in refs:
                refs.append(image.ref)
    components: list[dict[str, Any]] = []
    charted = {c.component for c in mirror.charts}
    for c in mirror.charts:
        entry: dict[str, Any] = {
            "name": c.component,
            "required": True,
            "charts": [
                {
                    "name": c.name,
                    "version": c.version,
                    "namespace": c.namespace,
                    "url": c.repository,
                }
            ],
        }
        if by_component.get(c.component):
            entry["images"] = by_component[c.component]
        components.append(entry)
    for component, refs in by_component.items():
        if component not in charted:
            components.append({"name": component, "required": True, "images": refs})
    doc = {
        "kind": "ZarfPackageConfig",
        "metadata": {"name": name, "description": "images and charts of an aicr-tui bundle"},
        "components": components,
    }
    return dump_yaml(doc)


def render(mirror: MirrorList, fmt: str) -> str:
    if fmt == "text":
        return render_text(mirror)
    if fmt == "json":
        return render_json(mirror)
    if fmt == "hauler":
        return render_hauler(mirror)
    if fmt == "zarf":
        return render_zarf(mirror)
    raise invalid(f'-o "{fmt}" is not a mirror list format; expected one of {", ".join(FORMATS)}')
