import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type K8sObject, parseObjects, renderChart, VALUES_DIR } from "./chart.ts";

// Every Pod the chart renders, the development stores included, passes the restricted Pod Security
// profile (namespaces that enforce it admit nothing else), writes nowhere but its volumes, and is
// bounded in memory: a platform team's admission policies reject anything less.

interface Container {
  name: string;
  securityContext?: {
    runAsNonRoot?: boolean;
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    capabilities?: { drop?: string[] };
    seccompProfile?: { type: string };
  };
  resources?: { limits?: { memory?: string } };
}
interface PodSpec {
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } };
  containers: Container[];
  initContainers?: Container[];
}

function pods(list: K8sObject[]): [string, PodSpec][] {
  return list.flatMap((o) => {
    const spec = o.spec as { template?: { spec: PodSpec }; jobTemplate?: { spec: { template: { spec: PodSpec } } } };
    const pod = spec?.template?.spec ?? spec?.jobTemplate?.spec.template.spec;
    return pod ? [[`${o.kind}/${o.metadata.name}`, pod] as [string, PodSpec]] : [];
  });
}

describe("the agentplane chart's Pods", () => {
  const everything = [
    "--set",
    "services.runtime.enabled=true",
    "--set",
    "clusterRelay.enabled=true",
    "--set",
    "clusterRelay.clusterId=cl_1",
    "--set",
    "clusterRelay.agentplaneUrl=https://agentplane.example.com",
    "--set",
    "clusterRelay.tokenSecret=tunnel",
    "--set",
    "clusterRelay.namespaces={apps}",
  ];

  it.each(["dev", "external"])("run non-root, unprivileged, read-only and bounded (%s)", (name) => {
    const rendered = pods(parseObjects(renderChart(join(VALUES_DIR, `${name}.yaml`), everything)));
    expect(rendered.length).toBeGreaterThan(5);
    const faults: string[] = [];
    for (const [where, pod] of rendered) {
      if (pod.securityContext?.seccompProfile?.type !== "RuntimeDefault") faults.push(`${where}: seccomp`);
      const nonRootPod = pod.securityContext?.runAsNonRoot === true && (pod.securityContext.runAsUser ?? 1) !== 0;
      for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
        const sc = c.securityContext ?? {};
        const at = `${where} ${c.name}`;
        if (!nonRootPod && sc.runAsNonRoot !== true) faults.push(`${at}: may run as root`);
        if (sc.allowPrivilegeEscalation !== false) faults.push(`${at}: privilege escalation`);
        if (!sc.capabilities?.drop?.includes("ALL")) faults.push(`${at}: capabilities`);
        if (sc.readOnlyRootFilesystem !== true) faults.push(`${at}: writable root filesystem`);
        if (!c.resources?.limits?.memory) faults.push(`${at}: no memory limit`);
      }
    }
    expect(faults).toEqual([]);
  });
});
