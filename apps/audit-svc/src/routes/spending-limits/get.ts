import { getSpendingLimitRoute } from "@agentplane/contracts";
import { authorize } from "@agentplane/service-kit";
import { getSpendingLimit } from "../../services/spending-limits.ts";
import type { RouteDeps } from "../deps.ts";

export function registerGetSpendingLimit({ app, db, authorizer }: RouteDeps): void {
  app.openapi(getSpendingLimitRoute, async (c) => {
    const { orgId, limitId } = c.req.valid("param");
    await authorize(c, authorizer, "spending-limits:read", { orgId });
    return c.json(await getSpendingLimit(db, orgId, limitId), 200);
  });
}
