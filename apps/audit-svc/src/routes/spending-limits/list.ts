import { listSpendingLimitsRoute } from "@agentplane/contracts";
import { authorize } from "@agentplane/service-kit";
import { listSpendingLimits } from "../../services/spending-limits.ts";
import type { RouteDeps } from "../deps.ts";

export function registerListSpendingLimits({ app, db, authorizer }: RouteDeps): void {
  app.openapi(listSpendingLimitsRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    await authorize(c, authorizer, "spending-limits:read", { orgId });
    return c.json({ items: await listSpendingLimits(db, orgId) }, 200);
  });
}
