import type { ServiceApp } from "@agentplane/service-kit";
import type { SandboxContext } from "../context.ts";
import { registerInternalGetSandboxEgress } from "./internal/get-sandbox-egress.ts";
import { registerInternalQuerySandboxes } from "./internal/query-sandboxes.ts";
import { registerInternalRecordEgressRefusal } from "./internal/record-egress-refusal.ts";
import { registerInternalResolveSandboxToken } from "./internal/resolve-token.ts";
import { registerK8sGetApiGroups } from "./k8s/api-groups.ts";
import { registerK8sGetApiResources } from "./k8s/api-resources.ts";
import { registerK8sGetApiVersions } from "./k8s/api-versions.ts";
import { registerK8sGetPod } from "./k8s/get-pod.ts";
import { registerK8sListPods } from "./k8s/list-pods.ts";
import { registerCreateSandboxToken } from "./sandbox-tokens/create.ts";
import { registerDeleteSandboxToken } from "./sandbox-tokens/delete.ts";
import { registerGetSandboxToken } from "./sandbox-tokens/get.ts";
import { registerListSandboxTokens } from "./sandbox-tokens/list.ts";
import { registerCreateSandbox } from "./sandboxes/create.ts";
import { registerDeleteSandbox } from "./sandboxes/delete.ts";
import { registerGetSandbox } from "./sandboxes/get.ts";
import { registerListSandboxes } from "./sandboxes/list.ts";
import { registerListSandboxRevisions } from "./sandboxes/revisions.ts";
import { registerRollbackSandbox } from "./sandboxes/rollback.ts";
import { registerStartSandbox } from "./sandboxes/start.ts";
import { registerStopSandbox } from "./sandboxes/stop.ts";
import { registerUpdateSandbox } from "./sandboxes/update.ts";
import { registerExecShell } from "./shell/exec.ts";
import { registerCreateShellSession } from "./shell-sessions/create.ts";
import { registerDeleteShellSession } from "./shell-sessions/delete.ts";
import { registerGetShellSession } from "./shell-sessions/get.ts";
import { registerListShellSessions } from "./shell-sessions/list.ts";
import { registerRunShellSessionCommand } from "./shell-sessions/run-command.ts";

const REGISTRATIONS: ((app: ServiceApp, ctx: SandboxContext) => void)[] = [
  registerListSandboxes,
  registerCreateSandbox,
  registerGetSandbox,
  registerUpdateSandbox,
  registerDeleteSandbox,
  registerStartSandbox,
  registerStopSandbox,
  registerListSandboxRevisions,
  registerRollbackSandbox,
  registerK8sGetApiVersions,
  registerK8sGetApiGroups,
  registerK8sGetApiResources,
  registerK8sListPods,
  registerK8sGetPod,
  registerExecShell,
  registerCreateShellSession,
  registerListShellSessions,
  registerGetShellSession,
  registerDeleteShellSession,
  registerRunShellSessionCommand,
  registerCreateSandboxToken,
  registerListSandboxTokens,
  registerGetSandboxToken,
  registerDeleteSandboxToken,
  registerInternalResolveSandboxToken,
  registerInternalQuerySandboxes,
  registerInternalGetSandboxEgress,
  registerInternalRecordEgressRefusal,
];

/**
 * Every HTTP operation of sandbox-svc, one file each. The WebSocket exec and attach are served by
 * `exec-stream/upgrade.ts` (upgrades do not go through the HTTP app).
 */
export function registerRoutes(app: ServiceApp, ctx: SandboxContext): void {
  for (const register of REGISTRATIONS) register(app, ctx);
}
