import type { WebhookRun } from "@agentplane/contracts/runtime";
import type { Kysely } from "kysely";
import type { RuntimeDatabase } from "../db/schema/index.ts";

/** The latest runs of one subscription, newest first. */
export async function listWebhookRuns(db: Kysely<RuntimeDatabase>, subscription: string, limit: number) {
  const rows = await db
    .selectFrom("webhook_run")
    .select(["id", "subscription", "event", "status", "attempts", "created_at", "started_at", "finished_at", "error"])
    .where("subscription", "=", subscription)
    .orderBy("seq", "desc")
    .limit(limit)
    .execute();
  return rows.map(
    (r): WebhookRun => ({
      id: r.id,
      subscription: r.subscription,
      event: r.event,
      status: r.status,
      attempts: r.attempts,
      createdAt: r.created_at,
      startedAt: r.started_at,
      finishedAt: r.finished_at,
      error: r.error,
    }),
  );
}
