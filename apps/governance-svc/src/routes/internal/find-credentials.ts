import { type FindCredentialsResponse, GOVERNANCE_INTERNAL_ROUTES as R } from "@agentplane/contracts";
import { internalRoute } from "@agentplane/service-kit";
import type { RouteDeps } from "../scope.ts";

/**
 * A project's credential of each kind asked, without secrets (service identities only): how the
 * inference proxy learns that a project's own provider credential overrides the installation's.
 * The oldest of a kind wins, so adding another one never silently switches the project's account.
 */
export function registerFindCredentials({ app, ctx }: RouteDeps): void {
  app.openapi(internalRoute(R.findCredentials), async (c) => {
    const request = c.req.valid("json");
    const rows = await ctx.db
      .selectFrom("credentials")
      .select(["id", "kind", "name", "secret_version", "updated_at"])
      .where("project_id", "=", request.projectId)
      .where("kind", "in", request.kinds)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    const items: FindCredentialsResponse["items"] = [];
    const seen = new Set<string>();
    for (const row of rows) {
      if (seen.has(row.kind)) continue;
      seen.add(row.kind);
      items.push({
        id: row.id,
        kind: row.kind as FindCredentialsResponse["items"][number]["kind"],
        name: row.name,
        secretVersion: row.secret_version,
        updatedAt: new Date(row.updated_at).toISOString(),
      });
    }
    c.header("cache-control", "no-store");
    return c.json({ items } satisfies FindCredentialsResponse, 200);
  });
}
