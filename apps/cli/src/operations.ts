// Builds one command per entry of the command map from the generated operation manifest: path
// parameters become --org/--project or positional arguments, query parameters and scalar body
// fields become flags, any body field can be given with -f key=value or --input.
import { readFileSync } from "node:fs";
import { OPERATIONS, type OperationSpec, type ParameterSpec, ProblemError } from "@agentplane/sdk";
import { type Command, Option } from "commander";
import { COMMANDS, EPILOGUES, TERMINAL_COLUMNS } from "./command-map.ts";
import { type Io, openSession, requireToken } from "./context.ts";
import { CliError, exitWithRemoteCode } from "./exit-codes.ts";
import { nameFlags } from "./field-flags.ts";
import { collectionList, looksLikeId, resolveName } from "./names.ts";
import { type OutputFlags, printResult } from "./output.ts";
import { confirm, withSpinner } from "./prompt.ts";
import { chosenProject, resolveOrg, resolveProject } from "./scope.ts";
import { warnSecretArguments } from "./secret-flags.ts";
import type { Store } from "./store.ts";

export interface CommandDeps {
  io: Io;
  store: Store;
}

/** Flags every operation command may have; a body field of the same name is set with -f instead. */
const RESERVED = new Set([
  "json",
  "jq",
  "org",
  "project",
  "limit",
  "all",
  "yes",
  "input",
  "field",
  "url",
  "help",
  "method",
  // The root's `-v, --version` would answer before the command ran: renamed in FLAG_NAMES, else -f.
  "version",
]);
/** Fields whose own name is taken by a flag of every command: the flag each is given instead. */
const FLAG_NAMES: Record<string, Record<string, string>> = {
  "bindings create": { version: "policy-version" },
};
const DESTRUCTIVE = /^(delete|remove|revoke)/;
/** Operations whose `projectId` query names the project acted in (not a filter): filled like --project. */
const PROJECT_QUERY = new Set(["listInferenceProviders"]);

export const kebab = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
    .replace(/_/g, "-")
    .toLowerCase();
/** `sandboxId` → `sandbox`, `entryName` → `entry-name`: the positional argument's name in help. */
export const argName = (param: string) => kebab(param.replace(/Id$/, "")) || param;

/** The id prefixes people see most, for the positional arguments' help. */
const ID_PREFIX: Record<string, string> = {
  org: "org_",
  project: "prj_",
  sandbox: "sbx_",
  policy: "pol_",
  user: "usr_",
  token: "tok_",
};
/** `sandboxId` → "the sandbox's id (sbx_…)", and "or name" where a name is looked up (names.ts). */
export function argumentHelp(param: string, byName = false): string {
  if (!/.Id$/.test(param)) return "";
  const name = argName(param);
  const prefix = ID_PREFIX[name];
  return `the ${name.replace(/-/g, " ")}'s id${prefix ? ` (${prefix}…)` : ""}${byName ? " or name" : ""}`;
}

const PROJECT_DEFAULTS = "AGENTPLANE_PROJECT, the saved default, or your only one";
/** The `--org` of a command acting in a project. */
export const ORG_OF_PROJECT =
  "the organization to find the project in, by its name or as your only one (default: AGENTPLANE_ORG, the saved default, or your only one)";
/** A required `projectId` of the body (not the path): filled like --project when left out. */
const projectInBody = (f: ParameterSpec) => f.name === "projectId" && f.required;

const OPERATION_OF = new WeakMap<Command, OperationSpec>();
/** The operation a command was built for (completion reads its `--json` field names). */
export const operationOf = (cmd: Command) => OPERATION_OF.get(cmd);

/** The operations grouped by the command that serves them, in the order of the map. */
export function commandGroups(): Map<string, OperationSpec[]> {
  const byId = new Map(OPERATIONS.map((op) => [op.id, op]));
  const groups = new Map<string, OperationSpec[]>();
  for (const [id, path] of Object.entries(COMMANDS)) {
    const op = byId.get(id);
    if (!op) continue;
    groups.set(path, [...(groups.get(path) ?? []), op]);
  }
  return groups;
}

/** Finds or makes the nested command for `words` under `root`. */
export function ensureCommand(root: Command, words: string[], describe: (path: string) => string | undefined): Command {
  let cmd = root;
  words.forEach((word, i) => {
    let next = cmd.commands.find((c) => c.name() === word);
    if (!next) {
      next = cmd.command(word);
      const text = describe(words.slice(0, i + 1).join(" "));
      if (text) next.description(text);
    }
    cmd = next;
  });
  return cmd;
}

export function addOutputOptions(cmd: Command): Command {
  return cmd
    .option("--json [fields]", "print the API's JSON; with a comma-separated list, only those fields")
    .option("--jq <expression>", "filter the JSON with a jq expression (implies --json)");
}

/**
 * Text where an operation answers JSON: the address is no installation (a web site, a proxy's or
 * a captive portal's page). The call was not done: it fails, rather than print the page and exit 0.
 */
function answeredText(op: OperationSpec, path: string, url: string, text: string): CliError {
  const line = text.replace(/\s+/g, " ").trim();
  const excerpt = JSON.stringify(line.length > 80 ? `${line.slice(0, 80)}…` : line);
  return new CliError(
    `${op.method} ${path} answered text, not JSON (is ${url} an Agentplane installation?): ${excerpt}`,
  );
}

function coerce(spec: ParameterSpec | undefined, raw: string, flag: string): unknown {
  const type = spec?.type ?? "string";
  if (spec?.literals?.includes(raw)) return raw;
  if (type === "integer" || type === "number") {
    const n = Number(raw);
    if (!Number.isFinite(n) || (type === "integer" && !Number.isInteger(n))) {
      const or = spec?.literals?.length ? ` or ${spec.literals.join(", ")}` : "";
      throw new CliError(`${flag} takes a${type === "integer" ? "n integer" : " number"}${or}, not "${raw}"`);
    }
    return n;
  }
  if (type === "boolean") {
    if (raw === "true" || raw === "false") return raw === "true";
    throw new CliError(`${flag} takes true or false, not "${raw}"`);
  }
  if (type === "array" || type === "object") {
    try {
      const parsed: unknown = JSON.parse(raw);
      // `--command true` is the program `true`, not a JSON boolean.
      return spec?.orString && typeof parsed !== "string" && !Array.isArray(parsed) ? raw : parsed;
    } catch {
      // `--command 'ls -l /'`: a command line, run by `sh -c`, never split into an argv of one.
      if (spec?.orString) return raw;
      if (type === "array") return raw.split(",").map((s) => item(spec, s.trim(), flag));
      throw new CliError(`${flag} takes JSON, e.g. '{"key":"value"}'`);
    }
  }
  if (spec?.enum && !spec.enum.includes(raw)) throw new CliError(`${flag} must be one of ${spec.enum.join(", ")}`);
  return raw;
}

/** One item of a comma-separated array flag (`--alert-thresholds 50,80`), as its type wants. */
function item(spec: ParameterSpec | undefined, raw: string, flag: string): unknown {
  if (spec?.items !== "integer" && spec?.items !== "number") return raw;
  const n = Number(raw);
  if (raw === "" || !Number.isFinite(n))
    throw new CliError(`${flag} takes numbers, e.g. 50,80 or [50,80], not "${raw}"`);
  return n;
}

/** `-f key=value`: the value as JSON when it parses (numbers, booleans, objects), else a string. */
export function parseFields(pairs: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new CliError(`-f takes key=value, not "${pair}"`);
    const value = pair.slice(eq + 1);
    try {
      out[pair.slice(0, eq)] = JSON.parse(value);
    } catch {
      out[pair.slice(0, eq)] = value;
    }
  }
  return out;
}

export function readInput(file: string): unknown {
  const text = file === "-" ? readFileSync(0, "utf8") : readFileSync(file, "utf8");
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError(`--input ${file === "-" ? "(stdin)" : file} is not JSON`);
  }
}

/** Adds the command for one group of operations; `handlers` take over the special ones (exec). */
export function addOperationCommand(
  root: Command,
  path: string,
  ops: OperationSpec[],
  deps: CommandDeps,
  describe: (path: string) => string | undefined,
): Command {
  const words = path.split(" ");
  const parent = ensureCommand(root, words.slice(0, -1), describe);
  const primary = ops.find((op) => !op.pathParams.includes("projectId")) ?? ops[0]!;
  const cmd = parent.command(words.at(-1)!).description(primary.summary);
  OPERATION_OF.set(cmd, primary);
  // `orgs get <org>`, `projects delete <project>`: under its own noun the id is the argument.
  const renamed = { ...FLAG_NAMES[path] };
  // The project a command acts in is --project everywhere, also where the API takes it in the body
  // (`sandboxes run`) or the query (`llm providers list`); --project-id still works, unlisted.
  const actsInProject =
    !ops.some((op) => op.pathParams.includes("projectId")) &&
    (PROJECT_QUERY.has(primary.id) || ops.some((op) => op.body?.fields.some(projectInBody)));
  if (actsInProject) renamed.projectId ??= "project";
  const flagOf = (name: string) => `--${renamed[name] ?? kebab(name)}`;
  const flagValue = (opts: Record<string, unknown>, name: string) =>
    opts[cmd.options.find((o) => o.long === flagOf(name))?.attributeName() ?? name] ??
    (actsInProject && name === "projectId" ? opts.projectId : undefined);
  const target = (p: string) =>
    (words[0] === "orgs" && p === "orgId") || (words[0] === "projects" && p === "projectId");
  const scoped = (p: string) => ops.some((op) => op.pathParams.includes(p) && !target(p));
  const positional = primary.pathParams.filter((p) => (p !== "orgId" && p !== "projectId") || target(p));
  const byName = (p: string) => p === "orgId" || p === "projectId" || collectionList(primary.path, p) !== undefined;
  for (const p of positional) cmd.argument(`<${argName(p)}>`, argumentHelp(p, byName(p)));
  if (scoped("orgId"))
    cmd.option("--org <id>", "the organization (default: AGENTPLANE_ORG, the saved default, or your only one)");
  if (scoped("projectId")) {
    const dual = ops.length > 1 && ops.some((op) => !op.pathParams.includes("projectId"));
    cmd.option(
      "--project <id>",
      dual ? "act on this project's instead of the organization's" : `the project (default: ${PROJECT_DEFAULTS})`,
    );
  }
  // A project given by its name is found in an organization: this one, else the default one.
  if (!scoped("orgId") && (scoped("projectId") || positional.includes("projectId") || actsInProject))
    cmd.option("--org <id>", ORG_OF_PROJECT);
  const list = primary.list;
  const queryFlags = new Map<string, ParameterSpec>();
  for (const q of ops.flatMap((op) => op.query)) {
    if (queryFlags.has(q.name) || (list?.paginated && (q.name === "cursor" || q.name === "limit"))) continue;
    if (RESERVED.has(q.name) && !renamed[q.name]) continue;
    queryFlags.set(q.name, q);
    // `llm providers list --project-id`: filled like --project when left out, else the platform picks.
    const projectDefault =
      q.name === "projectId" && PROJECT_QUERY.has(primary.id)
        ? " (default: AGENTPLANE_PROJECT or the saved default)"
        : "";
    const option = new Option(
      `${flagOf(q.name)} <${flagOf(q.name) === "--project" ? "id" : "value"}>`,
      `${q.description ?? q.name}${projectDefault}`,
    );
    if (q.enum) option.choices(q.enum);
    cmd.addOption(option);
  }
  if (actsInProject) cmd.addOption(new Option("--project-id <id>", "the same as --project").hideHelp());
  if (list?.paginated) {
    cmd.option("--limit <n>", "the most items to show", "30");
    cmd.option("--all", "every item, following the pages");
  }
  const bodyFields = new Map<string, ParameterSpec>();
  const withBody = ops.find((op) => op.body);
  if (withBody?.body) {
    for (const f of withBody.body.fields) {
      if ((RESERVED.has(f.name) && !renamed[f.name]) || queryFlags.has(f.name)) continue;
      bodyFields.set(f.name, f);
      const hint = f.orString
        ? "line|json"
        : f.type === "array" || f.type === "object"
          ? "json"
          : f.type === "boolean"
            ? "true|false"
            : "value";
      const required = f.required ? (projectInBody(f) ? ` (default: ${PROJECT_DEFAULTS})` : " (required)") : "";
      // `--start` alone is `--start true`; a required value would swallow the next flag as it.
      const value = f.type === "boolean" ? `[${hint}]` : flagOf(f.name) === "--project" ? "<id>" : `<${hint}>`;
      const option = new Option(`${flagOf(f.name)} ${value}`, `${f.description ?? f.name}${required}`);
      if (f.enum) option.choices(f.enum);
      cmd.addOption(option);
    }
    cmd.option(
      "-f, --field <key=value>",
      "a body field (repeatable; JSON values are parsed)",
      (v: string, acc: string[]) => [...acc, v],
      [],
    );
    cmd.option("--input <file>", "the JSON body from a file, or - for stdin");
  }
  if (DESTRUCTIVE.test(words.at(-1)!) || primary.method === "DELETE")
    cmd.option("-y, --yes", "do not ask for confirmation");
  addOutputOptions(cmd);
  if (EPILOGUES[path]) cmd.addHelpText("after", EPILOGUES[path]);

  cmd.action(async (...args: unknown[]) => {
    try {
      await act(...args);
    } catch (error) {
      const opts = (args.at(-1) as Command).optsWithGlobals() as Record<string, unknown>;
      if (error instanceof ProblemError && !opts.input) nameFlags(error, (where, name) => flagFor(where, name));
      throw error;
    }
  });
  /** The flag that sets a body field or query parameter, when this command has one. */
  const flagFor = (where: "body" | "query", name: string) => {
    if ((where === "body" ? bodyFields : queryFlags).has(name)) return flagOf(name);
    const long = `--${kebab(name)}`;
    return where === "query" && cmd.options.some((o) => o.long === long) ? long : undefined;
  };

  async function act(...args: unknown[]) {
    const command = args.at(-1) as Command;
    const values = args.slice(0, positional.length) as string[];
    const opts = command.optsWithGlobals() as Record<string, unknown> & OutputFlags;
    const session = openSession(deps.io, deps.store, opts.url as string | undefined);
    // Public operations (activation, the sign-in device flow, invitation links) need no token.
    if (!primary.public) requireToken(session);
    // The project's variant when --project was given on the command line, else the organization's.
    const op =
      ops.length > 1 && opts.project !== undefined
        ? (ops.find((o) => o.pathParams.includes("projectId")) ?? primary)
        : primary;
    const pathValues: Record<string, string> = {};
    const orgFlag = opts.org as string | undefined;
    if (op.pathParams.includes("orgId")) {
      const named = target("orgId") ? values[positional.indexOf("orgId")] : orgFlag;
      pathValues.orgId = await resolveOrg(deps.io, deps.store, session, named);
    }
    if (op.pathParams.includes("projectId")) {
      const named = target("projectId") ? values[positional.indexOf("projectId")] : (opts.project as string);
      pathValues.projectId = await resolveProject(deps.io, deps.store, session, named, orgFlag);
    }
    // The other arguments in the path's order, each by its id or by its name in its collection.
    for (const [i, p] of positional.entries()) {
      if (p === "orgId" || p === "projectId") continue;
      const value = values[i]!;
      pathValues[p] = /.Id$/.test(p)
        ? await resolveName(session.sdk, argName(p).replace(/-/g, " "), value, collectionList(op.path, p), pathValues)
        : value;
    }
    const query: Record<string, unknown> = {};
    for (const [name, spec] of queryFlags) {
      const raw = flagValue(opts, name);
      if (raw !== undefined) query[name] = coerce(spec, String(raw), flagOf(name));
    }
    if (PROJECT_QUERY.has(op.id)) {
      const chosen = query.projectId ?? chosenProject(deps.io, deps.store, session, undefined);
      if (chosen) query.projectId = await resolveProject(deps.io, deps.store, session, String(chosen), orgFlag);
    }
    let body: Record<string, unknown> | undefined;
    if (op.body) {
      body = opts.input ? (readInput(String(opts.input)) as Record<string, unknown>) : {};
      for (const [name, spec] of bodyFields) {
        const raw = flagValue(opts, name);
        if (raw !== undefined) body[name] = coerce(spec, String(raw), flagOf(name));
      }
      const fields = parseFields((opts.field as string[] | undefined) ?? []);
      Object.assign(body, fields);
      const typed = (name: string) => name in fields || (bodyFields.has(name) && flagValue(opts, name) !== undefined);
      warnSecretArguments(deps.io, path, typed, (name) => (name in fields ? `-f ${name}=…` : flagOf(name)));
      // `sandboxes run` names its project in the body: the same defaults as --project elsewhere.
      if (body.projectId === undefined && op.body.fields.some(projectInBody)) {
        body.projectId = await resolveProject(deps.io, deps.store, session, undefined, opts.org as string | undefined);
      }
      // `sandboxes run --project demo`, `tokens create --project-id demo`: a project by its name.
      if (typeof body.projectId === "string" && !looksLikeId(body.projectId)) {
        const org = pathValues.orgId ?? orgFlag;
        body.projectId = await resolveProject(deps.io, deps.store, session, body.projectId, org);
      }
      // `sandboxes run --sandbox-id box1`: the sandbox by its name, in the project the call names.
      const projectOfBody = pathValues.projectId ?? body.projectId;
      if (typeof body.sandboxId === "string" && typeof projectOfBody === "string") {
        body.sandboxId = await resolveName(session.sdk, "sandbox", body.sandboxId, "listSandboxes", {
          projectId: projectOfBody,
        });
      }
      const missing = op.body.fields.filter((f) => f.required && body?.[f.name] === undefined).map((f) => f.name);
      if (missing.length > 0) {
        throw new CliError(`missing ${missing.map((m) => (bodyFields.has(m) ? flagOf(m) : `-f ${m}=…`)).join(", ")}`);
      }
    }
    if (cmd.options.some((o) => o.long === "--yes")) {
      const target = values.at(-1) ?? pathValues.projectId ?? pathValues.orgId ?? "";
      await confirm(deps.io, `${words.join(" ")} ${target}?`, Boolean(opts.yes));
    }
    const expanded = op.path.replace(/\{(\w+)\}/g, (_, n: string) => encodeURIComponent(pathValues[n] ?? ""));
    const terminalColumns = deps.io.stdout.isTTY ? TERMINAL_COLUMNS[op.id] : undefined;
    const shape = {
      fields: op.fields,
      list: Boolean(op.list),
      ...(terminalColumns ? { columns: terminalColumns } : {}),
    };
    if (op.list?.paginated) {
      const max = opts.all
        ? Number.POSITIVE_INFINITY
        : (coerce({ name: "limit", required: false, type: "integer" }, String(opts.limit), "--limit") as number);
      const items = await withSpinner(deps.io, "Loading", async () => {
        const out: unknown[] = [];
        const pageSize = Math.min(Number.isFinite(max) ? max : 100, 100);
        let cursor: string | undefined;
        // A cursor seen before would go round forever (--all has no other end): the list ends there.
        const seen = new Set<string>();
        do {
          const page = (await session.sdk.raw(op.method, expanded, {
            query: { ...query, limit: pageSize, ...(cursor ? { cursor } : {}) },
          })) as { items?: unknown; nextCursor?: string };
          if (typeof page === "string") throw answeredText(op, expanded, session.url, page);
          if (!Array.isArray(page?.items)) throw new CliError(`${expanded} did not answer a page of items`);
          out.push(...page.items);
          if (cursor) seen.add(cursor);
          cursor = page.nextCursor && !seen.has(page.nextCursor) ? page.nextCursor : undefined;
        } while (cursor && out.length < max);
        return out.slice(0, max);
      });
      await printResult(deps.io, items, opts, shape);
      return;
    }
    const slow = /^(start|create|rollback)/.test(words.at(-1)!) && words[0] === "sandboxes";
    const result = await withSpinner(deps.io, slow ? "Working" : "", () =>
      session.sdk.raw(op.method, expanded, { query, ...(body ? { body } : {}) }),
    );
    if (typeof result === "string" && !op.passthrough) throw answeredText(op, expanded, session.url, result);
    // A bare list answer prints as its items; one with more to say (totals, a kind) is an envelope:
    // its items make the table, and --json prints it whole.
    const bare =
      op.list &&
      result &&
      typeof result === "object" &&
      Object.keys(result).every((k) => k === "items" || k === "nextCursor");
    await printResult(deps.io, bare ? (result as { items: unknown[] }).items : result, opts, {
      ...shape,
      list: Boolean(bare),
      envelope: Boolean(op.list) && !bare,
    });
    // A command run in a sandbox (`sandboxes run`, `sessions run`) ends with its exit code, as exec.
    const remote = op.fields.includes("exitCode") ? (result as { exitCode?: unknown } | null)?.exitCode : undefined;
    if (typeof remote === "number") exitWithRemoteCode(remote);
  }
  return cmd;
}
