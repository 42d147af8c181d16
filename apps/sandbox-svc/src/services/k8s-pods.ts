import { K8S_CONTAINER, type K8sPod } from "@agentplane/contracts";
import type { SandboxRow } from "./mapping.ts";

const PHASES: Record<string, K8sPod["status"]["phase"]> = {
  pending: "Pending",
  starting: "Pending",
  running: "Running",
  stopping: "Running",
  stopped: "Succeeded",
  failed: "Failed",
  deleting: "Unknown",
};

const iso = (d: Date | string) => new Date(d).toISOString();

/** A sandbox as the Kubernetes pod that clients of the `/k8s` surface see. */
export function toPod(row: SandboxRow): K8sPod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: row.id,
      namespace: row.project_id,
      uid: row.id,
      creationTimestamp: iso(row.created_at),
      labels: row.labels,
      annotations: { "agentplane.dev/name": row.name, "agentplane.dev/slug": row.slug },
    },
    spec: { containers: [{ name: K8S_CONTAINER, image: row.image }] },
    status: {
      phase: PHASES[row.state] ?? "Unknown",
      ...(row.started_at ? { startTime: iso(row.started_at) } : {}),
      ...(row.last_error ? { message: row.last_error } : {}),
    },
  };
}
