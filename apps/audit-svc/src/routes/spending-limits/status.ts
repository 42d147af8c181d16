import { getSpendingLimitStatusRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { AuditContext } from "../../context.ts";
import { spendingLimitStatus } from "../../services/spending-limits.ts";

export function registerGetSpendingLimitStatus(app: ServiceApp, { db, authorizer }: AuditContext): void {
  app.openapi(getSpendingLimitStatusRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    await authorize(c, authorizer, "spending-limits:read", { orgId });
    return c.json(await spendingLimitStatus(db, orgId), 200);
  });
}
