import {
  type DecisionReason,
  type DecisionRequest,
  type DecisionResource,
  type DecisionResponse,
  type GovernedAction,
  internalDecideRoute,
  type SandboxSpec,
} from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { type Caller, callInternal } from "@agentplane/service-kit";
import type { SandboxDeps } from "./context.ts";
import type { SandboxRow } from "./mapping.ts";

/** The sandbox a decision is about, as governance's bindings select it (kind `sandbox`, labels). */
export function sandboxResource(
  row: Pick<SandboxRow, "id" | "project_id" | "org_id" | "labels">,
  orgId: string,
): DecisionResource {
  return { type: "Sandbox", id: row.id, orgId, projectId: row.project_id, labels: row.labels ?? {}, kind: "sandbox" };
}

/** What admission decides on: the spec and labels, with env variable names but never their values. */
export function admissionContext(spec: SandboxSpec, labels: Record<string, string>): Record<string, unknown> {
  return {
    image: spec.image,
    // CPU in cores (governance compares millicores), memory in MiB.
    resources: {
      ...(spec.resources.cpuMillicores !== undefined ? { cpu: spec.resources.cpuMillicores / 1000 } : {}),
      ...(spec.resources.memoryMiB !== undefined ? { memoryMb: spec.resources.memoryMiB } : {}),
    },
    ports: spec.ports.map((p) => ({ port: p.port, visibility: p.visibility })),
    labels,
    envNames: Object.keys(spec.env).sort(),
  };
}

/**
 * What exec decides on: the argv that runs (policies see `program`, its first element's basename,
 * and `args`) and `command`, the argv joined. A command given as a string runs through `sh -c`, so
 * its program is `sh`: a policy that allows only `git` does not let a shell line through.
 */
export function execContext(argv: string[], tty = false): Record<string, unknown> {
  return { argv, command: argv.join(" "), tty };
}

/**
 * Asks governance's decision API. Without a governance client (tests of the service alone) there
 * is no enforcement. Governance unreachable or failing is a 503: enforcement fails closed.
 */
export async function decide(
  deps: Pick<SandboxDeps, "governance" | "logger">,
  request: DecisionRequest,
  requestId?: string,
): Promise<DecisionResponse | undefined> {
  if (!deps.governance) return undefined;
  try {
    return await callInternal(deps.governance, internalDecideRoute, {
      principal: { type: "service", id: "svc_sandbox", displayName: "sandbox" },
      body: request,
      ...(requestId ? { requestId } : {}),
    });
  } catch (err) {
    deps.logger.warn({ err, action: request.action }, "governance decision failed");
    throw new ProblemError("service-unavailable", {
      detail: "The policy decision service is unavailable; retry shortly",
      headers: { "retry-after": "2" },
    });
  }
}

/** The reasons that block: enforced denies (dryrun reasons only inform). */
export function blockingReasons(response: DecisionResponse): DecisionReason[] {
  if (response.decision !== "deny" || !response.enforced) return [];
  const enforced = response.reasons.filter((r) => r.mode === "enforce");
  return enforced.length > 0 ? enforced : response.reasons;
}

export function policyDenied(action: string, reasons: DecisionReason[], what: string): ProblemError {
  const ruleIds = [...new Set(reasons.map((r) => r.ruleId))];
  return new ProblemError("policy-denied", {
    detail: `${what} is denied by policy rule ${ruleIds.join(", ") || "(default deny)"}`,
    extensions: {
      action,
      ruleId: ruleIds[0] ?? null,
      reasons: reasons.map((r) => ({
        policyId: r.policyId,
        version: r.version,
        ruleId: r.ruleId,
        bindingId: r.bindingId,
      })),
    },
  });
}

/**
 * Asks before acting on a sandbox: an enforced deny throws a 403 `policy-denied` naming the rule
 * (never the policy text); a dryrun deny proceeds (governance audits it as "would deny").
 */
export async function enforce(
  deps: SandboxDeps,
  caller: Caller,
  action: GovernedAction,
  row: Pick<SandboxRow, "id" | "project_id" | "org_id" | "labels">,
  context: Record<string, unknown>,
  what: string,
): Promise<void> {
  if (!deps.governance) return;
  const orgId = row.org_id ?? caller.orgId;
  // Bindings live in an organization; a sandbox outside any (installation owner's) has none.
  if (!orgId) return;
  const response = await decide(
    deps,
    { principal: caller.principal, action, resource: sandboxResource(row, orgId), context },
    caller.requestId,
  );
  const reasons = response ? blockingReasons(response) : [];
  if (reasons.length > 0 || (response?.decision === "deny" && response.enforced)) {
    throw policyDenied(action, reasons, what);
  }
}

/** Admission of a spec: the verb's action, then `sandbox:expose-port` for every public port. */
export async function enforceAdmission(
  deps: SandboxDeps,
  caller: Caller,
  action: "sandbox:create" | "sandbox:update" | "sandbox:start",
  row: Pick<SandboxRow, "id" | "project_id" | "org_id" | "labels">,
  spec: SandboxSpec,
): Promise<void> {
  if (!deps.governance) return;
  const context = admissionContext(spec, row.labels ?? {});
  const verb = action.slice("sandbox:".length);
  await enforce(deps, caller, action, row, context, `${verb[0]?.toUpperCase()}${verb.slice(1)} of sandbox ${row.id}`);
  for (const port of spec.ports.filter((p) => p.visibility === "public")) {
    await enforce(
      deps,
      caller,
      "sandbox:expose-port",
      row,
      { port: port.port, visibility: port.visibility },
      `Exposing port ${port.port} of sandbox ${row.id}`,
    );
  }
}
