import type { V1Pod } from "@kubernetes/client-node";
import type { DriverPhase } from "../types.ts";

/** Waiting reasons that are just the container being made, not a problem worth reporting. */
const NORMAL_WAITING = new Set(["ContainerCreating", "PodInitializing"]);

/** Waiting reasons that no amount of waiting fixes. */
const FATAL_WAITING = new Set(["InvalidImageName", "ErrImageNeverPull", "CreateContainerConfigError"]);

export function isReady(pod: V1Pod): boolean {
  return (
    pod.status?.phase === "Running" &&
    !pod.metadata?.deletionTimestamp &&
    (pod.status.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True")
  );
}

export function isTerminated(pod: V1Pod): boolean {
  return pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed";
}

/** The sandbox's phase as the driver reports it. */
export function phaseOf(pod: V1Pod | undefined): DriverPhase {
  if (!pod) return "stopped";
  if (pod.metadata?.deletionTimestamp) return "stopped";
  if (isReady(pod)) return "running";
  if (pod.status?.phase === "Succeeded") return "stopped";
  if (pod.status?.phase === "Failed") return "failed";
  return "starting";
}

/**
 * Why a Pod is not running yet, as the scheduler or kubelet put it (`Unschedulable: 0/3 nodes are
 * available: …`, `ErrImagePull: …`); `fatal` when waiting longer cannot help.
 */
export function podProblem(pod: V1Pod): { message: string; fatal: boolean } | undefined {
  const unscheduled = (pod.status?.conditions ?? []).find((c) => c.type === "PodScheduled" && c.status === "False");
  if (unscheduled)
    return { message: `${unscheduled.reason ?? "Unschedulable"}: ${unscheduled.message ?? ""}`.trim(), fatal: false };
  // Init containers first: while one waits (its image cannot be pulled) the others show PodInitializing.
  for (const status of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    const waiting = status.state?.waiting;
    if (waiting?.reason && !NORMAL_WAITING.has(waiting.reason)) {
      return {
        message: `${waiting.reason}: ${waiting.message ?? ""}`.trim(),
        fatal: FATAL_WAITING.has(waiting.reason),
      };
    }
  }
  return undefined;
}

/** How the main process ended, like the local driver says it; or which init container failed. */
export function exitMessage(pod: V1Pod): string {
  const failedInit = pod.status?.initContainerStatuses?.find((s) => (s.state?.terminated?.exitCode ?? 0) !== 0);
  const initEnd = failedInit?.state?.terminated;
  if (failedInit && initEnd) {
    const detail = initEnd.message ? `: ${initEnd.message}` : "";
    return `init container ${failedInit.name} exited (code ${initEnd.exitCode}${initEnd.reason ? `, ${initEnd.reason}` : ""})${detail}`;
  }
  const terminated = pod.status?.containerStatuses?.[0]?.state?.terminated;
  if (!terminated) return `Pod ${pod.status?.phase?.toLowerCase() ?? "ended"}`;
  const detail = terminated.message ? `: ${terminated.message}` : "";
  return `main process exited (code ${terminated.exitCode}${terminated.reason ? `, ${terminated.reason}` : ""})${detail}`;
}
