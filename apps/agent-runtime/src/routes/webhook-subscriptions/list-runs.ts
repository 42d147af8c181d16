import { listSubscriptionRunsRoute, type WebhookRun } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import type { RuntimeApp } from "../types.ts";

export function registerListRuns(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(listSubscriptionRunsRoute, async (c) => {
    const { name } = c.req.valid("param");
    const { limit } = c.req.valid("query");
    deps.registry.require(name);
    const rows = await deps.database.db
      .selectFrom("webhook_run")
      .select(["id", "subscription", "event", "status", "attempts", "created_at", "started_at", "finished_at", "error"])
      .where("subscription", "=", name)
      .orderBy("seq", "desc")
      .limit(limit)
      .execute();
    const items: WebhookRun[] = rows.map((r) => ({
      id: r.id,
      subscription: r.subscription,
      event: r.event,
      status: r.status,
      attempts: r.attempts,
      createdAt: r.created_at,
      startedAt: r.started_at,
      finishedAt: r.finished_at,
      error: r.error,
    }));
    return c.json({ items }, 200);
  });
}
