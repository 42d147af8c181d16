import type { ConnectionsContext } from "../../context.ts";
import type { ConnectorTool } from "../openapi/tools.ts";
import type { Actor } from "./connectors.ts";
import { recordConnectorEvent } from "./platform.ts";
import type { ConnectorRuntime } from "./runtime.ts";
import { type ConnectorRow, jsonb } from "./store.ts";

export interface EntrySetting {
  visibility: "visible" | "hidden";
  teams?: string[];
}

export async function entrySettings(
  ctx: ConnectionsContext,
  connectorIds: string[],
): Promise<Map<string, EntrySetting>> {
  const settings = new Map<string, EntrySetting>();
  if (!connectorIds.length) return settings;
  const rows = await ctx.db
    .selectFrom("connector_entries")
    .select(["connector_id", "entry_name", "visibility", "teams"])
    .where("connector_id", "in", connectorIds)
    .execute();
  for (const r of rows) {
    settings.set(`${r.connector_id}/${r.entry_name}`, {
      visibility: r.visibility,
      ...(r.teams?.length ? { teams: r.teams } : {}),
    });
  }
  return settings;
}

/**
 * Whether the caller may see and call the tool. Hidden tools are absent for everyone; a tool limited
 * to teams is shown to project admins only, since team membership is not part of the authorization
 * answer this service receives.
 */
export function isVisibleTo(setting: EntrySetting | undefined, projectAdmin: boolean): boolean {
  if (!setting) return true;
  if (setting.visibility === "hidden") return false;
  return !setting.teams?.length || projectAdmin;
}

export function visibleTools(
  row: ConnectorRow,
  tools: ConnectorTool[],
  settings: Map<string, EntrySetting>,
  projectAdmin: boolean,
): ConnectorTool[] {
  return tools.filter((t) => isVisibleTo(settings.get(`${row.id}/${t.name}`), projectAdmin));
}

export async function setEntryVisibility(
  ctx: ConnectionsContext,
  runtime: ConnectorRuntime,
  actor: Actor,
  row: ConnectorRow,
  entryName: string,
  input: { visibility: "visible" | "hidden"; teams?: string[] | undefined },
) {
  const teams = input.teams?.length ? input.teams : null;
  await ctx.db.transaction().execute(async (trx) => {
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
    await recordConnectorEvent(ctx, trx, actor.principal, {
      action: "setConnectorEntryVisibility",
      orgId: row.org_id,
      projectId: row.project_id,
      connectorId: row.id,
      details: { entryName, visibility: input.visibility, ...(teams ? { teams } : {}) },
      requestId: actor.requestId,
    });
  });
  ctx.relaySoon();
  runtime.announce(row.project_id);
  return { entryName, visibility: input.visibility, ...(teams ? { teams } : {}) };
}
