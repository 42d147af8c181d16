import { recordDomainEvent, withDomainEvents } from "@agentplane/events";
import type { Caller } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../../context.ts";
import type { ConnectorTool } from "../openapi/tools.ts";
import type { EntrySetting } from "./hot-index.ts";
import type { ConnectorRuntime } from "./runtime.ts";
import { type ConnectorRow, jsonb } from "./store.ts";

/** Who is looking at a connector's tools: project admins see every visible tool, others per team. */
export interface ToolViewer {
  projectAdmin: boolean;
  /** The caller's teams in the organization (tenancy's authorization answer). */
  teamIds?: readonly string[] | undefined;
}

/** A key of what a viewer may see, for views cached per viewer class. */
export function viewerKey(viewer: ToolViewer): string {
  return viewer.projectAdmin ? "admin" : `teams:${[...(viewer.teamIds ?? [])].sort().join(",")}`;
}

/**
 * Whether the caller may see and call the tool. Hidden tools are absent for everyone; a tool limited
 * to teams is shown to members of one of those teams and to project admins (who manage it).
 */
export function isVisibleTo(setting: EntrySetting | undefined, viewer: ToolViewer): boolean {
  if (!setting) return true;
  if (setting.visibility === "hidden") return false;
  if (!setting.teams?.length || viewer.projectAdmin) return true;
  return setting.teams.some((team) => viewer.teamIds?.includes(team));
}

export function visibleTools(
  row: ConnectorRow,
  tools: ConnectorTool[],
  settings: Map<string, EntrySetting>,
  viewer: ToolViewer,
): ConnectorTool[] {
  return tools.filter((t) => isVisibleTo(settings.get(`${row.id}/${t.name}`), viewer));
}

export async function setEntryVisibility(
  ctx: ConnectionsContext,
  runtime: ConnectorRuntime,
  actor: Caller,
  row: ConnectorRow,
  entryName: string,
  input: { visibility: "visible" | "hidden"; teams?: string[] | undefined },
) {
  const teams = input.teams?.length ? input.teams : null;
  await withDomainEvents(ctx, async (trx) => {
    await trx
      .insertInto("connector_entries")
      .values({
        connector_id: row.id,
        entry_name: entryName,
        visibility: input.visibility,
        teams: teams ? (jsonb(teams) as never) : null,
        updated_by: actor.principal.id,
      })
      .onConflict((oc) =>
        oc.columns(["connector_id", "entry_name"]).doUpdateSet({
          visibility: input.visibility,
          teams: teams ? (jsonb(teams) as never) : null,
          updated_by: actor.principal.id,
          updated_at: new Date(),
        }),
      )
      .execute();
    await trx.updateTable("connectors").set({ updated_at: new Date() }).where("id", "=", row.id).execute();
    await recordDomainEvent(ctx, trx, actor.principal, {
      action: "connector.entry_visibility_changed",
      orgId: row.org_id,
      projectId: row.project_id,
      targetType: "connector",
      targetId: row.id,
      details: { entryName, visibility: input.visibility, ...(teams ? { teams } : {}) },
      requestId: actor.requestId,
    });
  });
  runtime.announce(row.project_id);
  return { entryName, visibility: input.visibility, ...(teams ? { teams } : {}) };
}
