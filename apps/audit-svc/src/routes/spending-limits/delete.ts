import { deleteSpendingLimitRoute } from "@agentplane/contracts";
import { authorize } from "@agentplane/service-kit";
import { deleteSpendingLimit } from "../../services/spending-limits.ts";
import type { RouteDeps } from "../deps.ts";

export function registerDeleteSpendingLimit({ app, db, authorizer }: RouteDeps): void {
  app.openapi(deleteSpendingLimitRoute, async (c) => {
    const { orgId, limitId } = c.req.valid("param");
    await authorize(c, authorizer, "spending-limits:manage", { orgId });
    await deleteSpendingLimit(db, orgId, limitId);
    return c.body(null, 204);
  });
}
