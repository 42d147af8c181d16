import { PROJECT_LABELS_TOPIC, type ProjectLabelsChanged } from "@agentplane/contracts";
import type { Bus, Subscription } from "@agentplane/events";
import type { Kysely } from "kysely";
import { jsonb } from "../db/json.ts";
import type { GovernanceDb } from "../db/schema.ts";

/**
 * Keeps the projects' labels tenancy publishes (one replica receives each change, stores it, and
 * `changed` tells every replica to reload the organization), for org bindings with a `projectSelector`.
 */
export async function followProjectLabels(
  db: Kysely<GovernanceDb>,
  bus: Bus,
  changed: (orgId: string) => Promise<void>,
): Promise<Subscription> {
  return bus.subscribe<ProjectLabelsChanged>(PROJECT_LABELS_TOPIC, async (event) => {
    const { orgId, projectId, labels } = event.data;
    const at = new Date(event.time);
    if (labels === null) {
      await db.deleteFrom("project_labels").where("project_id", "=", projectId).execute();
    } else {
      await db
        .insertInto("project_labels")
        .values({ project_id: projectId, org_id: orgId, labels: jsonb(labels), updated_at: at })
        .onConflict((oc) =>
          oc
            .column("project_id")
            .doUpdateSet({ labels: jsonb(labels), updated_at: at })
            // A redelivered older change never overwrites a newer one.
            .where("project_labels.updated_at", "<=", at),
        )
        .execute();
    }
    await changed(orgId);
  });
}

/** The labels of an organization's projects (read with the organization's bindings, never per decision). */
export async function projectLabelsOf(
  db: Kysely<GovernanceDb>,
  orgId: string,
): Promise<Map<string, Record<string, string>>> {
  const rows = await db
    .selectFrom("project_labels")
    .select(["project_id", "labels"])
    .where("org_id", "=", orgId)
    .execute();
  return new Map(rows.map((r) => [r.project_id, r.labels as unknown as Record<string, string>]));
}
