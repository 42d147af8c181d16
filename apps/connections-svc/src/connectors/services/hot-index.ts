import { notFound } from "@agentplane/problem-details";
import type { Kysely } from "kysely";
import { LRUCache } from "lru-cache";
import type { ConnectionsDb } from "../../db/schema/index.ts";
import { CONNECTOR_COLUMNS, type ConnectorRow } from "./store.ts";

export interface EntrySetting {
  visibility: "visible" | "hidden";
  teams?: string[];
}

/**
 * How long the tool-call and tool-list paths trust a connector row they read. A change made on this
 * replica drops it at once (`invalidate`); one made on another replica is seen within this time, as
 * governance decisions see policy changes within 2 s.
 */
export const HOT_FRESH_MS = 2_000;

/** How long a resolved connector credential is reused before governance is asked again (rotation reach). */
export const CREDENTIAL_FRESH_MS = 5_000;

const stampOf = (value: Date | string) => (value instanceof Date ? value.getTime() : new Date(value).getTime());

/** The version of a row's settings: visibility changes bump `updated_at`. */
export function rowStamp(row: Pick<ConnectorRow, "id" | "updated_at">): string {
  return `${row.id}:${stampOf(row.updated_at)}`;
}

/**
 * What the hot paths read per request, kept briefly in memory: connector rows by id and by project,
 * entry settings by row version, resolved credential headers (governance's `tool:call` answers are
 * in the runtime's `DecisionCache`). Promises are cached, so concurrent requests share one read, and
 * `invalidate` never races a read that started before the change.
 */
export class ConnectorIndex {
  private readonly rows = new LRUCache<string, Promise<ConnectorRow | undefined>>({ max: 5_000, ttl: HOT_FRESH_MS });
  private readonly projects = new LRUCache<string, Promise<ConnectorRow[]>>({ max: 2_000, ttl: HOT_FRESH_MS });
  private readonly orgs = new LRUCache<string, Promise<ConnectorRow[]>>({ max: 1_000, ttl: HOT_FRESH_MS });
  private readonly settings = new LRUCache<string, Promise<Map<string, EntrySetting>>>({ max: 5_000 });
  private readonly credentials = new LRUCache<string, Promise<Record<string, string>>>({
    max: 2_000,
    ttl: CREDENTIAL_FRESH_MS,
  });

  private remember<V>(cache: LRUCache<string, Promise<V>>, key: string, load: () => Promise<V>): Promise<V> {
    const hit = cache.get(key);
    if (hit) return hit;
    const value = load();
    cache.set(key, value);
    value.catch(() => {
      if (cache.get(key) === value) cache.delete(key);
    });
    return value;
  }

  /** The connector (without its tools), or 404. */
  async row(db: Kysely<ConnectionsDb>, id: string): Promise<ConnectorRow> {
    const row = await this.remember(this.rows, id, () =>
      db.selectFrom("connectors").select(CONNECTOR_COLUMNS).where("id", "=", id).executeTakeFirst(),
    );
    if (!row) {
      this.rows.delete(id);
      throw notFound("Connector", id);
    }
    return row;
  }

  /** The project's connectors by name. */
  projectRows(db: Kysely<ConnectionsDb>, projectId: string): Promise<ConnectorRow[]> {
    return this.remember(this.projects, projectId, () =>
      db
        .selectFrom("connectors")
        .select(CONNECTOR_COLUMNS)
        .where("project_id", "=", projectId)
        .orderBy("name")
        .execute(),
    );
  }

  /** The organization's connectors by name (the organization MCP endpoint). */
  orgRows(db: Kysely<ConnectionsDb>, orgId: string): Promise<ConnectorRow[]> {
    return this.remember(this.orgs, orgId, () =>
      db.selectFrom("connectors").select(CONNECTOR_COLUMNS).where("org_id", "=", orgId).orderBy("name").execute(),
    );
  }

  /** Entry settings of the rows (`<connectorId>/<entry>` → setting), read once per row version. */
  async entrySettings(db: Kysely<ConnectionsDb>, rows: ConnectorRow[]): Promise<Map<string, EntrySetting>> {
    const merged = new Map<string, EntrySetting>();
    const parts = await Promise.all(
      rows.map((row) => this.remember(this.settings, rowStamp(row), () => readEntrySettings(db, [row.id]))),
    );
    for (const part of parts) for (const [key, value] of part) merged.set(key, value);
    return merged;
  }

  /** A credential's headers for a project, resolved by `resolve` at most every few seconds. */
  credentialHeaders(
    projectId: string,
    credentialId: string,
    resolve: () => Promise<Record<string, string>>,
  ): Promise<Record<string, string>> {
    return this.remember(this.credentials, `${projectId}/${credentialId}`, resolve);
  }

  /**
   * Forgets what was read of a project's connectors after a change on this replica. Rows are kept by
   * id alone and organizations' lists without their projects, so all of those go (each is one indexed
   * read to take again).
   */
  invalidate(projectId: string): void {
    this.projects.delete(projectId);
    this.rows.clear();
    this.orgs.clear();
    for (const key of [...this.credentials.keys()]) if (key.startsWith(`${projectId}/`)) this.credentials.delete(key);
  }
}

/** Entry settings straight from the table. */
export async function readEntrySettings(
  db: Kysely<ConnectionsDb>,
  connectorIds: string[],
): Promise<Map<string, EntrySetting>> {
  const settings = new Map<string, EntrySetting>();
  if (!connectorIds.length) return settings;
  const rows = await db
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
