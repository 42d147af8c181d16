// Every image the chart runs, or hands sandboxes as their `default`, names an exact version (or a
// digest): a floating tag (`latest`, `17`, `bookworm-slim`) changes what runs under an unchanged
// release whenever a node pulls again.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_SANDBOX_IMAGE } from "../../apps/sandbox-svc/src/driver/kubernetes/config.ts";
import { type K8sObject, parseObjects, renderChart, VALUES_DIR, valueSets } from "./chart.ts";

/** A tag that pins a release: at least `<major>.<minor>`, optionally a variant (`12.12-slim`). */
const VERSIONED_TAG = /^v?\d+\.\d+(\.\d+)*([-+][\w.-]+)?$/;

/** Why a reference floats, or undefined when it is pinned. */
function floating(image: string): string | undefined {
  if (/@sha256:[a-f0-9]{64}$/.test(image)) return undefined;
  const lastSlash = image.lastIndexOf("/");
  const colon = image.indexOf(":", lastSlash + 1);
  if (colon < 0) return "no tag (latest)";
  const tag = image.slice(colon + 1);
  if (tag === "latest") return "latest";
  return VERSIONED_TAG.test(tag) ? undefined : `tag ${tag} names no version`;
}

interface PodSpec {
  containers?: { image: string }[];
  initContainers?: { image: string }[];
}

/** Every Pod spec of the rendered objects (Deployments, StatefulSets, Jobs and hooks, Pods). */
function podSpecs(list: K8sObject[]): { name: string; spec: PodSpec }[] {
  return list.flatMap((o) => {
    const spec = o.spec as { template?: { spec?: PodSpec }; jobTemplate?: { spec: { template: { spec: PodSpec } } } };
    const pod =
      o.kind === "Pod" ? (o.spec as PodSpec) : (spec?.template?.spec ?? spec?.jobTemplate?.spec.template.spec);
    return pod ? [{ name: `${o.kind}/${o.metadata.name}`, spec: pod }] : [];
  });
}

/** Every image a value set's release runs or gives sandboxes. */
function imagesOf(list: K8sObject[]): { where: string; image: string }[] {
  const images = podSpecs(list).flatMap(({ name, spec }) =>
    [...(spec.containers ?? []), ...(spec.initContainers ?? [])].map((c) => ({ where: name, image: c.image })),
  );
  for (const config of list.filter((o) => o.kind === "ConfigMap")) {
    const data = (config as unknown as { data?: Record<string, string> }).data ?? {};
    if (data.SANDBOX_K8S_DEFAULT_IMAGE) {
      images.push({ where: `ConfigMap/${config.metadata.name}`, image: data.SANDBOX_K8S_DEFAULT_IMAGE });
    }
  }
  return images;
}

describe("images in the agentplane Helm chart", () => {
  it("tells a pinned reference from a floating one", () => {
    for (const pinned of ["postgres:17.6", "docker.io/library/debian:12.12-slim", "localhost:5000/a/b:1.2.3"]) {
      expect(floating(pinned), pinned).toBeUndefined();
    }
    expect(floating(`ghcr.io/a/b@sha256:${"a".repeat(64)}`)).toBeUndefined();
    for (const loose of ["postgres", "localhost:5000/a/b", "redis:latest", "postgres:17", "debian:bookworm-slim"]) {
      expect(floating(loose), loose).toBeDefined();
    }
  });

  it.each(valueSets())("runs no image by a floating tag (%s)", (set) => {
    // The dev stores and the cluster relay rendered too, whatever the value set leaves off.
    const list = parseObjects(
      renderChart(join(VALUES_DIR, `${set}.yaml`), [
        "--set",
        "postgres.dev.enabled=true",
        "--set",
        "redis.dev.enabled=true",
        "--set",
        "clusterRelay.enabled=true",
        "--set",
        "clusterRelay.clusterId=cl_images",
        "--set",
        "clusterRelay.agentplaneUrl=https://agentplane.example.com",
        "--set",
        "clusterRelay.tokenSecret=agentplane-tunnel",
        "--set",
        "clusterRelay.namespaces={apps}",
      ]),
    );
    const images = imagesOf(list);
    const where = images.map((i) => i.where);
    expect(where).toContain("StatefulSet/agentplane-postgres");
    expect(where).toContain("StatefulSet/agentplane-redis");
    expect(where).toContain("ConfigMap/agentplane-config");
    expect(images.filter((i) => floating(i.image))).toEqual([]);
  });

  it("gives sandboxes the same pinned default image without the chart", () => {
    expect(floating(DEFAULT_SANDBOX_IMAGE)).toBeUndefined();
    const list = parseObjects(renderChart(join(VALUES_DIR, "external.yaml")));
    const config = list.find((o) => o.kind === "ConfigMap" && o.metadata.name === "agentplane-config") as unknown as {
      data: Record<string, string>;
    };
    expect(config.data.SANDBOX_K8S_DEFAULT_IMAGE).toBe(DEFAULT_SANDBOX_IMAGE);
  });
});
