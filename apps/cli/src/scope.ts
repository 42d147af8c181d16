// The organization and project a command acts in: the flag, then AGENTPLANE_ORG / AGENTPLANE_PROJECT,
// then the default saved with `agentplane config set`, then the caller's only one. Never a prompt.
// Each may be given by its name instead of its id (names.ts).
import type { ListOperationId } from "@agentplane/sdk";
import type { Io, Session } from "./context.ts";
import { CliError } from "./exit-codes.ts";
import { looksLikeId, resolveName } from "./names.ts";
import { hostKey, type Store } from "./store.ts";

export async function resolveOrg(io: Io, store: Store, session: Session, flag: string | undefined): Promise<string> {
  const chosen = flag ?? io.env.AGENTPLANE_ORG ?? store.settings().defaults?.[hostKey(session.url)]?.org;
  if (chosen) return resolveName(session.sdk, "organization", chosen, "listOrganizations", {});
  const page = await session.sdk.request("listOrganizations", { query: { limit: 2 } });
  if (page.items.length === 1) return page.items[0]!.id;
  throw new CliError(
    page.items.length === 0
      ? "no organization yet: create one with `agentplane orgs create --name <name>`"
      : "several organizations: pass --org <id>, set AGENTPLANE_ORG, or save one with `agentplane config set org <id>`",
  );
}

/** The project named by the flag, AGENTPLANE_PROJECT or the saved default; none is looked up. */
export function chosenProject(io: Io, store: Store, session: Session, flag: string | undefined): string | undefined {
  return flag ?? io.env.AGENTPLANE_PROJECT ?? store.settings().defaults?.[hostKey(session.url)]?.project;
}

export async function resolveProject(
  io: Io,
  store: Store,
  session: Session,
  flag: string | undefined,
  orgFlag: string | undefined,
): Promise<string> {
  const chosen = chosenProject(io, store, session, flag);
  if (chosen && looksLikeId(chosen)) return chosen;
  const orgId = await resolveOrg(io, store, session, orgFlag);
  if (chosen) return resolveName(session.sdk, "project", chosen, "listProjects", { orgId });
  const page = await session.sdk.request("listProjects", { path: { orgId }, query: { limit: 2 } });
  if (page.items.length === 1) return page.items[0]!.id;
  throw new CliError(
    page.items.length === 0
      ? "no project yet: create one with `agentplane projects create --name <name>`"
      : "several projects: pass --project <id>, set AGENTPLANE_PROJECT, or save one with `agentplane config set project <id>`",
  );
}

/**
 * The id of a resource of the command's project given by its name (`clusters proxy prod …`):
 * `value` itself when it is an id, without finding the project.
 */
export async function resolveInProject(
  io: Io,
  store: Store,
  session: Session,
  opts: { project?: unknown; org?: unknown },
  resource: NamedIn,
  value: string,
): Promise<string> {
  if (looksLikeId(value)) return value;
  const projectId = await resolveProject(
    io,
    store,
    session,
    opts.project as string | undefined,
    opts.org as string | undefined,
  );
  return resolveName(session.sdk, resource.what, value, resource.list, { projectId });
}

/** What `resolveInProject` looks names up in. */
interface NamedIn {
  what: string;
  list: ListOperationId;
}
export const SANDBOXES: NamedIn = { what: "sandbox", list: "listSandboxes" };
export const CLUSTERS: NamedIn = { what: "cluster", list: "listClusters" };
export const AWS_CONNECTIONS: NamedIn = { what: "AWS connection", list: "listAwsConnections" };
