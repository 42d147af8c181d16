// A resource named by its name (or a sandbox by its slug) where the API takes its id:
// `agentplane sandboxes exec box1 -- ls`, `--project demo`, `orgs get Acme`. A value that begins
// as the platform's ids do (`sbx_`, `prj_`, …) is always taken as an id; anything else is looked up
// in the list of its collection, and must name exactly one resource there.
import { type AgentplaneClient, type ListOperationId, OPERATIONS, operationSpec } from "@agentplane/sdk";
import { COMMANDS } from "./command-map.ts";
import { CliError } from "./exit-codes.ts";

/** The prefixes of the platform's ids (`sbx_06h2…`): a value that begins with one is an id. */
const ID = /^(?:usr|org|team|prj|inv|tok|cl|sbx|sbt|rev|shs|ses|pol|pbd|cred|spl|awc|mcp)_/;

export const looksLikeId = (value: string) => ID.test(value);

/** The most items a name is looked for among, so a lookup always ends. */
const MAX_ITEMS = 5_000;

interface Named {
  id?: unknown;
  name?: unknown;
  slug?: unknown;
}

/**
 * The list operation of the collection `{param}` is an item of in `path`
 * (`/v1/projects/{projectId}/sandboxes/{sandboxId}/exec` → `GET /v1/projects/{projectId}/sandboxes`),
 * when it lists items with an id and a name.
 */
export function collectionList(path: string, param: string): ListOperationId | undefined {
  const at = path.indexOf(`/{${param}}`);
  if (at < 0) return undefined;
  const collection = path.slice(0, at);
  return OPERATIONS.find(
    (op) =>
      op.method === "GET" &&
      op.list !== null &&
      op.path === collection &&
      op.fields.includes("id") &&
      op.fields.includes("name"),
  )?.id as ListOperationId | undefined;
}

/**
 * The id of the one item of the list `listId` (its path filled from `pathValues`) whose slug or
 * name is `value`; `value` itself when it is shaped like an id, or when nothing can be looked up.
 */
export async function resolveName(
  sdk: AgentplaneClient,
  what: string,
  value: string,
  listId: ListOperationId | undefined,
  pathValues: Record<string, string>,
): Promise<string> {
  if (looksLikeId(value) || !listId) return value;
  const list = operationSpec(listId);
  if (list.pathParams.some((p) => pathValues[p] === undefined)) return value;
  const where = list.pathParams.length > 0 ? ` in ${pathValues[list.pathParams.at(-1) as string]}` : "";
  const bySlug: string[] = [];
  const byName: string[] = [];
  let seen = 0;
  const params = { path: pathValues, ...(list.list?.paginated ? { query: { limit: 100 } } : {}) };
  for await (const item of sdk.paginate(listId, params as never) as AsyncGenerator<Named>) {
    if (++seen > MAX_ITEMS) break;
    if (typeof item.id !== "string") continue;
    if (item.slug === value) bySlug.push(item.id);
    else if (item.name === value) byName.push(item.id);
  }
  // A slug is unique in its collection: it wins over a name that happens to be the same text.
  const found = bySlug.length === 1 ? bySlug : byName;
  if (found.length === 1) return found[0] as string;
  if (found.length === 0) {
    const scanned = seen > MAX_ITEMS ? ` among the first ${MAX_ITEMS}` : "";
    throw new CliError(`no ${what} is named "${value}"${where}${scanned}: ${listHint(listId, pathValues)}pass its id`);
  }
  throw new CliError(
    `"${value}" names more than one ${what}${where}: pass the id of one of ${found.sort().join(", ")}`,
  );
}

/** The flags the CLI takes for the path parameters of a list (the scope a name is looked up in). */
const SCOPE_FLAGS: Record<string, string> = { orgId: "--org", projectId: "--project" };

/** `agentplane sandboxes list --project prj_… lists them, or ` for a name that matched nothing. */
function listHint(listId: ListOperationId, pathValues: Record<string, string>): string {
  const command = COMMANDS[listId];
  const params = operationSpec(listId).pathParams;
  if (!command || params.some((p) => !SCOPE_FLAGS[p])) return "";
  const flags = params.map((p) => ` ${SCOPE_FLAGS[p]} ${pathValues[p]}`).join("");
  return `\`agentplane ${command}${flags}\` lists them, or `;
}
