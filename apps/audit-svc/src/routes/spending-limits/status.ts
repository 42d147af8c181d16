import { getSpendingLimitStatusRoute } from "@agentplane/contracts";
import { authorize } from "@agentplane/service-kit";
import { spendingLimitStatus } from "../../services/spending-limits.ts";
import type { RouteDeps } from "../deps.ts";

export function registerGetSpendingLimitStatus({ app, db, authorizer }: RouteDeps): void {
  app.openapi(getSpendingLimitStatusRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    await authorize(c, authorizer, "spending-limits:read", { orgId });
    return c.json(await spendingLimitStatus(db, orgId), 200);
  });
}
