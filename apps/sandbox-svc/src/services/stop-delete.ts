import { withDomainEvents } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import type { Caller } from "@agentplane/service-kit";
import { recordSandboxEvent, type SandboxDeps } from "./context.ts";
import { getSandboxRow, type SandboxRef, setState, transition } from "./sandboxes.ts";
import { revokeTokensOfSandbox } from "./tokens.ts";

/**
 * What the driver could not do is recorded on the sandbox: it is `failed` with the reason, a state
 * that stop and delete both leave again, so the caller can try once more. (Left `stopping` or
 * `deleting`, it could be neither stopped nor deleted until the service restarted.)
 */
async function driverFailed(
  deps: SandboxDeps,
  sandboxId: string,
  verb: "stop" | "delete",
  err: unknown,
): Promise<never> {
  const reason = (err as Error)?.message ?? String(err);
  const done = verb === "stop" ? "stopped" : "deleted";
  deps.logger.warn({ sandboxId, err: reason }, `sandbox could not be ${done}`);
  await setState(deps, sandboxId, "failed", { last_error: `${verb} failed: ${reason}`.slice(0, 2000) });
  // A cluster's API server that refused or did not answer is named as such (502/504), not as ours.
  const upstream = err instanceof ProblemError && (err.status === 502 || err.status === 504) ? err.slug : undefined;
  throw new ProblemError(upstream ?? "internal-error", {
    detail: `Sandbox ${sandboxId} could not be ${done}: ${reason}. It is marked failed; try again.`,
  });
}

export async function stopSandbox(
  deps: SandboxDeps,
  caller: Caller,
  { projectId, sandboxId, reason = "" }: SandboxRef & { reason?: string },
) {
  const row = await getSandboxRow(deps, projectId, sandboxId);
  if (row.state === "stopped") return row;
  await transition(deps, row, ["running", "starting", "failed"], "stopping");
  await deps.driver.stop(sandboxId).catch((err: unknown) => driverFailed(deps, sandboxId, "stop", err));
  await withDomainEvents(deps, async (trx) => {
    await trx
      .updateTable("sandboxes")
      .set({ state: "stopped", updated_at: new Date() } as never)
      .where("id", "=", sandboxId)
      .execute();
    await recordSandboxEvent(deps, trx, caller, {
      action: "sandbox.stopped",
      projectId,
      orgId: row.org_id,
      targetType: "sandbox",
      targetId: sandboxId,
      ...(reason ? { details: { reason } } : {}),
    });
  });
  return getSandboxRow(deps, projectId, sandboxId);
}

export async function deleteSandbox(deps: SandboxDeps, caller: Caller, { projectId, sandboxId }: SandboxRef) {
  const row = await getSandboxRow(deps, projectId, sandboxId);
  await transition(deps, row, ["pending", "running", "starting", "stopped", "failed"], "deleting");
  try {
    await deps.driver.stop(sandboxId);
    await revokeTokensOfSandbox(deps, sandboxId);
    await deps.driver.removeWorkspace(sandboxId);
  } catch (err) {
    await driverFailed(deps, sandboxId, "delete", err);
  }
  await withDomainEvents(deps, async (trx) => {
    await trx.deleteFrom("sandboxes").where("id", "=", sandboxId).execute();
    await recordSandboxEvent(deps, trx, caller, {
      action: "sandbox.deleted",
      projectId,
      orgId: row.org_id,
      targetType: "sandbox",
      targetId: sandboxId,
    });
  });
}
