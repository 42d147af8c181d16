import { DEFAULT_USAGE_WINDOW_DAYS, getRuntimeUsageRoute } from "@agentplane/contracts/runtime";
import { badRequest } from "@agentplane/problem-details";
import type { RuntimeDeps } from "../../deps.ts";
import type { RuntimeApp } from "../types.ts";

export function registerGetRuntimeUsage(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(getRuntimeUsageRoute, (c) => {
    const query = c.req.valid("query");
    const to = query.to ? new Date(query.to) : new Date();
    const from = query.from ? new Date(query.from) : new Date(to.getTime() - DEFAULT_USAGE_WINDOW_DAYS * 86_400_000);
    if (from.getTime() > to.getTime()) {
      throw badRequest("from is after to", [{ pointer: "/query/from", message: "must not be after to" }]);
    }
    return c.json(deps.usage.store.summarize({ from, to }, query.groupBy), 200);
  });
}
