// The commands the generic builder cannot make: the exec streams and the raw pass-throughs (model
// calls, a cluster's Kubernetes API, AWS), whose paths and bodies are the upstream's, not ours.
import type { Command } from "commander";
import { openSession, requireToken } from "./context.ts";
import { CliError, exitWithRemoteCode } from "./exit-codes.ts";
import {
  addOutputOptions,
  argumentHelp,
  type CommandDeps,
  ensureCommand,
  ORG_OF_PROJECT,
  parseFields,
  readInput,
} from "./operations.ts";
import { type OutputFlags, printResult } from "./output.ts";
import { AWS_CONNECTIONS, CLUSTERS, chosenProject, resolveInProject, resolveProject, SANDBOXES } from "./scope.ts";

/** Command paths built here rather than by the generic builder. */
export const SPECIAL = new Set([
  "sandboxes exec",
  "k8s pods exec",
  "k8s pods attach",
  "llm request",
  "clusters proxy",
  "clusters tunnel",
  "aws proxy",
]);

const SPECIAL_NOUNS = new Set([...SPECIAL].map((path) => path.split(" ")[0]!));

/** `agentplane k8s pods exec`: the words that name a command. */
function commandPath(cmd: Command): string {
  const words: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) words.unshift(c.name());
  return words.join(" ");
}

function addExec(parent: Command, name: string, deps: CommandDeps, endpoint: "exec" | "k8s-exec" | "k8s-attach"): void {
  const attach = endpoint === "k8s-attach";
  const cmd = parent
    .command(name)
    .description(
      attach
        ? "Attach to a sandbox's main process over the exec WebSocket"
        : "Run a command in a sandbox over the exec WebSocket (-i stdin, -t a terminal)",
    )
    .argument(attach ? "<pod>" : "<sandbox>", argumentHelp("sandboxId", true))
    .option("-i, --interactive", "forward stdin to the command")
    .option("-t, --tty", "allocate a terminal (raw mode; Ctrl-C goes to the command)")
    .option("--project <id>", "the project (default: AGENTPLANE_PROJECT, the saved default, or your only one)")
    .option("--org <id>", ORG_OF_PROJECT);
  if (!attach) {
    cmd.argument("[command...]", "the command and its arguments, after --");
    // `exec sbx_… ls -la`: the remote command's own flags read as ours; say where they go.
    const write = cmd.configureOutput().outputError ?? ((text: string, out: (s: string) => void) => out(text));
    cmd.configureOutput({
      outputError: (text, out) =>
        write(
          /unknown option/.test(text)
            ? `${text}  (the remote command goes after --: ${commandPath(cmd)} <sandbox> -- ls -la)\n`
            : text,
          out,
        ),
    });
  }
  cmd.action(async (sandbox: string, ...rest: unknown[]) => {
    const command = rest.at(-1) as Command;
    const argv = attach ? [] : ((rest[0] as string[] | undefined) ?? []);
    // Loaded on use: the WebSocket client costs start-up time every other command would pay.
    const { runExec } = await import("./exec.ts");
    exitWithRemoteCode(await runExec(deps, sandbox, argv, command.optsWithGlobals(), endpoint));
  });
}

function addPassthrough(
  cmd: Command,
  deps: CommandDeps,
  build: (args: string[], opts: Record<string, unknown>) => Promise<string>,
  /** `modelCall`: the model pass-through, which takes POSTed model calls only (each with a body). */
  options: { modelCall?: boolean } = {},
): void {
  cmd
    .option(
      "-X, --method <method>",
      options.modelCall
        ? "the HTTP method (default: POST, the only one model calls take)"
        : "the HTTP method (default: POST with a body, else GET)",
    )
    .option("-f, --field <key=value>", "a JSON body field (repeatable)", (v: string, acc: string[]) => [...acc, v], [])
    .option("--input <file>", "the body from a JSON file, or - for stdin")
    .option(
      "-H, --header <name:value>",
      "a request header (repeatable), e.g. anthropic-version:2023-06-01",
      (v: string, acc: string[]) => [...acc, v],
      [],
    );
  addOutputOptions(cmd);
  cmd.action(async (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    const opts = command.optsWithGlobals() as Record<string, unknown> & OutputFlags;
    const session = openSession(deps.io, deps.store, opts.url as string | undefined, { passthrough: true });
    requireToken(session);
    const path = await build(command.args, opts);
    const fields = parseFields((opts.field as string[]) ?? []);
    const body = opts.input ? readInput(String(opts.input)) : Object.keys(fields).length ? fields : undefined;
    if (options.modelCall && body === undefined) {
      throw new CliError("a model call has a body: pass -f key=value (repeatable) or --input <file>");
    }
    const method = opts.method ? String(opts.method).toUpperCase() : body === undefined ? "GET" : "POST";
    if (body !== undefined && (method === "GET" || method === "HEAD")) {
      throw new CliError(`a ${method} request has no body: leave out -f and --input, or pass -X POST`);
    }
    const headers = parseHeaders((opts.header as string[]) ?? []);
    const result = await session.sdk.raw(method, path, { headers, ...(body === undefined ? {} : { body }) });
    await printResult(deps.io, result, opts, { fields: [], list: false });
  });
}

/** `-H name:value` (curl's form, a space after the colon or not) as a header map. */
function parseHeaders(values: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const value of values) {
    const colon = value.indexOf(":");
    const name = colon > 0 ? value.slice(0, colon).trim() : "";
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      throw new CliError(`-H takes name:value, e.g. anthropic-version:2023-06-01, not "${value}"`);
    }
    headers[name.toLowerCase()] = value.slice(colon + 1).trim();
  }
  return headers;
}

/** The project of a command that takes an id elsewhere, asked only to find a name. */
const NAMES_IN = "the project to find a name in (default: AGENTPLANE_PROJECT, the saved default, or your only one)";

const trimSlashes = (p: string | undefined) => (p ?? "").replace(/^\/+/, "");

export function addSpecialCommands(
  root: Command,
  deps: CommandDeps,
  describe: (p: string) => string | undefined,
  branch?: string,
): void {
  // Building one branch of the tree: these commands live under these nouns only.
  if (branch !== undefined && !SPECIAL_NOUNS.has(branch)) return;
  addExec(ensureCommand(root, ["sandboxes"], describe), "exec", deps, "exec");
  const pods = ensureCommand(root, ["k8s", "pods"], describe);
  addExec(pods, "exec", deps, "k8s-exec");
  addExec(pods, "attach", deps, "k8s-attach");

  const ports = ensureCommand(root, ["sandboxes"], describe)
    .command("ports")
    .description("The ports a sandbox exposes, who may reach them and their addresses")
    .argument("<sandbox>", argumentHelp("sandboxId", true))
    .option("--project <id>", "the project (default: AGENTPLANE_PROJECT, the saved default, or your only one)")
    .option("--org <id>", ORG_OF_PROJECT);
  addOutputOptions(ports);
  ports.action(async (sandbox: string, _opts, command: Command) => {
    const opts = command.optsWithGlobals() as Record<string, unknown> & OutputFlags;
    const session = openSession(deps.io, deps.store, opts.url as string | undefined);
    requireToken(session);
    const projectId = await resolveProject(
      deps.io,
      deps.store,
      session,
      opts.project as string | undefined,
      opts.org as string | undefined,
    );
    const sandboxId = await resolveInProject(deps.io, deps.store, session, { project: projectId }, SANDBOXES, sandbox);
    const got = await session.sdk.request("getSandbox", { path: { projectId, sandboxId } });
    await printResult(deps.io, got.ports, opts, { fields: ["port", "visibility", "url"], list: true });
  });

  const llm = ensureCommand(root, ["llm"], describe);
  const request = llm
    .command("request")
    .description("Call a model provider through the inference proxy (the path after /v1/llm/)")
    .argument("<path>", "e.g. cloud-b/family-1/anthropic/v1/messages")
    .option(
      "--project <id>",
      "bill and govern the call in this project (default: AGENTPLANE_PROJECT, the saved default, else the token's)",
    );
  addPassthrough(
    request,
    deps,
    async (args, opts) => {
      const rest = trimSlashes(args[0]);
      const session = openSession(deps.io, deps.store, opts.url as string | undefined);
      // Without one, the short form lets the platform pick: a project-restricted token's, or the only one.
      const chosen = chosenProject(deps.io, deps.store, session, opts.project as string | undefined);
      if (chosen === undefined) return `/v1/llm/${rest}`;
      const projectId = await resolveProject(deps.io, deps.store, session, chosen, undefined);
      return `/v1/projects/${encodeURIComponent(projectId)}/llm/${rest}`;
    },
    { modelCall: true },
  );

  const clusters = ensureCommand(root, ["clusters"], describe);
  addPassthrough(
    clusters
      .command("proxy")
      .description("Call a connected cluster's Kubernetes API through the platform")
      .argument("<cluster>", argumentHelp("clusterId", true))
      .argument("<path>", "e.g. api/v1/namespaces")
      .option("--project <id>", NAMES_IN)
      .option("--org <id>", ORG_OF_PROJECT),
    deps,
    async (args, opts) => {
      const session = openSession(deps.io, deps.store, opts.url as string | undefined);
      const cluster = await resolveInProject(deps.io, deps.store, session, opts, CLUSTERS, args[0]!);
      return `/v1/clusters/${encodeURIComponent(cluster)}/proxy/${trimSlashes(args[1])}`;
    },
  );
  clusters
    .command("tunnel")
    .description("Print the tunnel address a cluster relay connects to (the relay holds the tunnel token)")
    .argument("<cluster>", argumentHelp("clusterId"))
    .action((cluster: string, _opts, command: Command) => {
      const session = openSession(deps.io, deps.store, command.optsWithGlobals().url);
      const url = new URL(`${session.url}/v1/clusters/${encodeURIComponent(cluster)}/tunnel`);
      url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
      deps.io.stdout.write(`${url}\n`);
    });

  addPassthrough(
    ensureCommand(root, ["aws"], describe)
      .command("proxy")
      .description("Call an AWS API with a connection's credentials, signed by the platform")
      .argument("<connection>", argumentHelp("connectionId", true))
      .argument("[path]", "the AWS path (omit for the service root)")
      .option("--project <id>", NAMES_IN)
      .option("--org <id>", ORG_OF_PROJECT),
    deps,
    async (args, opts) => {
      const session = openSession(deps.io, deps.store, opts.url as string | undefined);
      const connection = await resolveInProject(deps.io, deps.store, session, opts, AWS_CONNECTIONS, args[0]!);
      const base = `/v1/aws-connections/${encodeURIComponent(connection)}/aws`;
      return args[1] ? `${base}/${trimSlashes(args[1])}` : base;
    },
  );
}
