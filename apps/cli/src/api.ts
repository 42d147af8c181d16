// `agentplane api <METHOD> <path>`: any call the command tree does not have, with the same auth,
// retries, errors and output contract. -f fields are the query of a GET and the body otherwise.
import type { Command } from "commander";
import { openSession } from "./context.ts";
import { CliError } from "./exit-codes.ts";
import { addOutputOptions, type CommandDeps, parseFields, readInput } from "./operations.ts";
import { type OutputFlags, printResult } from "./output.ts";

/** The most pages --paginate follows unless --max-pages says otherwise: a server handing out fresh
 * cursors forever would otherwise keep it asking forever. */
export const MAX_PAGES = 10_000;

export function addApiCommand(root: Command, deps: CommandDeps): void {
  const cmd = root
    .command("api")
    .description("Call any API path: agentplane api GET /v1/orgs --paginate")
    .argument("<method>", "GET, POST, PUT, PATCH or DELETE")
    .argument("<path>", "the path, /v1/… (a leading / may be left out)")
    .option(
      "-f, --field <key=value>",
      "a query parameter (GET, DELETE) or body field (repeatable)",
      (v: string, acc: string[]) => [...acc, v],
      [],
    )
    .option("--input <file>", "the JSON body from a file, or - for stdin")
    .option("--paginate", "follow nextCursor and print every item")
    .option<string | number>(
      "--max-pages <n>",
      "with --paginate, fail rather than follow more than n pages",
      (v) => v,
      MAX_PAGES,
    );
  addOutputOptions(cmd);
  cmd.action(async (method: string, path: string, _opts, command: Command) => {
    const opts = command.optsWithGlobals() as Record<string, unknown> & OutputFlags;
    const verb = method.toUpperCase();
    if (!["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"].includes(verb)) {
      throw new CliError(`unknown method ${method}: use GET, POST, PUT, PATCH or DELETE`);
    }
    const session = openSession(deps.io, deps.store, opts.url as string | undefined);
    const url = new URL(path.startsWith("/") ? path : `/${path}`, "http://x");
    const fields = parseFields((opts.field as string[]) ?? []);
    const inQuery = verb === "GET" || verb === "DELETE" || verb === "HEAD";
    const query: Record<string, unknown> = { ...Object.fromEntries(url.searchParams), ...(inQuery ? fields : {}) };
    if (opts.input && (verb === "GET" || verb === "HEAD")) {
      throw new CliError(`a ${verb} request has no body: -f fields become its query; leave out --input`);
    }
    const body = opts.input
      ? readInput(String(opts.input))
      : !inQuery && Object.keys(fields).length
        ? fields
        : undefined;
    if (opts.paginate) {
      const maxPages = Number(opts.maxPages);
      if (!Number.isSafeInteger(maxPages) || maxPages < 1) {
        throw new CliError(`--max-pages ${String(opts.maxPages)}: expected a whole number of at least 1`);
      }
      const items: unknown[] = [];
      // A cursor answered twice would go round forever: the listing is broken, not finished.
      const seen = new Set<string>();
      let pages = 0;
      let cursor: string | undefined;
      do {
        if (pages === maxPages) {
          throw new CliError(
            `${url.pathname} still had more after ${maxPages} pages (--max-pages ${maxPages}): stopped without printing`,
          );
        }
        pages += 1;
        const page = (await session.sdk.raw(verb, url.pathname, {
          query: { ...query, ...(cursor ? { cursor } : {}) },
        })) as {
          items?: unknown[];
          nextCursor?: string;
        };
        if (!Array.isArray(page?.items)) throw new CliError(`${url.pathname} does not answer a page of items`);
        items.push(...page.items);
        if (cursor) seen.add(cursor);
        if (page.nextCursor && seen.has(page.nextCursor)) {
          throw new CliError(
            `${url.pathname} answered a cursor it had answered before after ${pages} pages: stopped without printing`,
          );
        }
        cursor = page.nextCursor || undefined;
      } while (cursor);
      await printResult(
        deps.io,
        items,
        { json: opts.json ?? true, ...(opts.jq ? { jq: opts.jq } : {}) },
        { fields: [], list: true },
      );
      return;
    }
    const result = await session.sdk.raw(verb, url.pathname, { query, ...(body !== undefined ? { body } : {}) });
    // The escape hatch prints JSON unless told otherwise: it has no table shape to go by.
    await printResult(
      deps.io,
      result,
      { json: opts.json ?? true, ...(opts.jq ? { jq: opts.jq } : {}) },
      { fields: [], list: false },
    );
  });
}
