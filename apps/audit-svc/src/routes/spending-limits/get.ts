import { getSpendingLimitRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { AuditContext } from "../../context.ts";
import { getSpendingLimit } from "../../services/spending-limits.ts";

export function registerGetSpendingLimit(app: ServiceApp, { db, authorizer }: AuditContext): void {
  app.openapi(getSpendingLimitRoute, async (c) => {
    const { orgId, limitId } = c.req.valid("param");
    await authorize(c, authorizer, "spending-limits:read", { orgId });
    return c.json(await getSpendingLimit(db, orgId, limitId), 200);
  });
}
