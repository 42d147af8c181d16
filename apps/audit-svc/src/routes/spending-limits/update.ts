import { updateSpendingLimitRoute } from "@agentplane/contracts";
import { authorize } from "@agentplane/service-kit";
import { updateSpendingLimit } from "../../services/spending-limits.ts";
import type { RouteDeps } from "../deps.ts";

export function registerUpdateSpendingLimit({ app, db, authorizer }: RouteDeps): void {
  app.openapi(updateSpendingLimitRoute, async (c) => {
    const { orgId, limitId } = c.req.valid("param");
    await authorize(c, authorizer, "spending-limits:manage", { orgId });
    return c.json(await updateSpendingLimit(db, orgId, limitId, c.req.valid("json")), 200);
  });
}
