import { AsyncLocalStorage } from "node:async_hooks";
import { RESOURCE_ORG_HEADER } from "@agentplane/contracts";
import type { Context } from "hono";

interface Slot {
  orgId?: string;
}

const current = new AsyncLocalStorage<Slot>();

/**
 * Runs a request's handling with a place to note the organization of the resource it acts on.
 * Afterwards the answer names that organization in `x-agentplane-resource-org` (for the gateway's
 * audit record of the request; the gateway removes it before the answer leaves), and never carries
 * a value of that header from anywhere else (an upstream a route proxies).
 */
export async function withResourceOrg(c: Context, next: () => Promise<void>): Promise<void> {
  const slot: Slot = {};
  await current.run(slot, next);
  c.header(RESOURCE_ORG_HEADER, slot.orgId);
}

/**
 * Notes the organization of the resource the current request acts on; the first organization
 * noted for a request is the one its answer names. Authorization notes it whenever it resolves
 * one, so a service route only calls this when it decides access without asking an authorizer.
 */
export function noteResourceOrg(orgId: string | null | undefined): void {
  if (!orgId) return;
  const slot = current.getStore();
  if (slot && slot.orgId === undefined) slot.orgId = orgId;
}
