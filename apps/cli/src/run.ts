import { styleText } from "node:util";
import { ProblemError } from "@agentplane/sdk";
import { type Command, CommanderError } from "commander";
import { type Io, processIo, resolveUrl, timeoutFailure } from "./context.ts";
import { CliError, EXIT, EXIT_CODES_HELP, exitCodeFor } from "./exit-codes.ts";
import { connectionFailure } from "./network.ts";
import { jsonText, printable } from "./printable.ts";
import { branchOf, buildProgram } from "./program.ts";
import { hostKey, Store } from "./store.ts";

/** Prints an error the way the output contract says: one line (or a few) on stderr. */
export function reportError(io: Io, error: unknown, json: boolean): void {
  const red = (s: string) => styleText("red", s, { stream: io.stderr });
  if (error instanceof ProblemError) {
    if (json) io.stdout.write(`${jsonText(error.body)}\n`);
    // Every part of a problem is the server's text: shown, never obeyed by the terminal. The title,
    // the request id and each field error stay on their line: a newline in them would print a
    // line of the server's choosing that reads as the CLI's own (`error: …`).
    const line = (text: string) => printable(text.replace(/\r?\n/g, " "));
    const detail = error.detail ? `: ${printable(error.detail)}` : "";
    const requestId = error.requestId ? ` (request id ${line(error.requestId)})` : "";
    io.stderr.write(`${red("error:")} ${line(error.title)}${detail}${requestId}\n`);
    for (const e of error.errors) io.stderr.write(`  ${line(e.pointer)}: ${line(e.message)}\n`);
    return;
  }
  const message = error instanceof Error ? error.message : String(error);
  // A script asking for JSON gets an object on every failure, the CLI's own (a connection, a
  // timeout, bad input) as a problem with just a title, so stdout is never empty or half of one.
  if (json) io.stdout.write(`${jsonText({ title: message })}\n`);
  io.stderr.write(`${red("error:")} ${printable(message)}\n`);
}

/** Runs one command line; resolves with the exit code. */
export async function run(argv: string[], io: Io = processIo()): Promise<number> {
  if (argv[0] === "help" && argv[1] === "exit-codes") {
    io.stdout.write(EXIT_CODES_HELP);
    return EXIT.ok;
  }
  const store = new Store(io.env);
  const program = buildProgram(io, store, branchOf(argv));
  program.exitOverride();
  for (const cmd of walk(program)) cmd.exitOverride();
  if (argv[0] === "help" && argv.length > 1 && !argv[1]!.startsWith("-")) argv = helpArgv(program, argv.slice(1));
  const json = argv.some((a) => a === "--json" || a.startsWith("--json=") || a === "--jq" || a.startsWith("--jq="));
  // Commands that end with a code of their own (exec, auth status) set process.exitCode.
  process.exitCode = undefined;
  try {
    // Inside the try: a hosts.json that cannot be read (or AGENTPLANE_KEYRING misspelt) is one line.
    await store.loadSecrets();
    await program.parseAsync(argv, { from: "user" });
    const code = typeof process.exitCode === "number" ? process.exitCode : EXIT.ok;
    process.exitCode = undefined;
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander printed its message (help, version, an unknown flag with the closest match).
      return error.exitCode === 0 ? EXIT.ok : EXIT.error;
    }
    if (!(error instanceof CliError) && !(error instanceof ProblemError) && !(error instanceof Error)) throw error;
    const url = () => resolveUrl(io, store, program.opts().url as string | undefined);
    const reported = unreachable(error, url) ?? timedOut(error, url) ?? error;
    reportError(io, reported, json);
    const hint = refusedTokenHint(io, reported, url, argv);
    if (hint) io.stderr.write(`  ${hint}\n`);
    return exitCodeFor(reported);
  }
}

/**
 * `help sandboxes create` as `sandboxes create --help`; a word that is no command stops there, so
 * commander says so with the closest one (`help sandbox`), instead of printing the root's help.
 */
function helpArgv(program: Command, words: string[]): string[] {
  let cmd = program;
  const path: string[] = [];
  for (const word of words) {
    if (cmd.commands.length === 0) break;
    const next = cmd.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (!next) return [...path, word];
    path.push(word);
    cmd = next;
  }
  return [...path, "--help"];
}

/**
 * A 401 says the token is not valid, not which one: the one in AGENTPLANE_TOKEN (which beats the
 * stored one) or the one `auth login` stored, revoked or expired since. `auth login` itself is
 * left alone: it was handed the token it reports on.
 */
function refusedTokenHint(io: Io, error: unknown, url: () => string, argv: string[]): string | undefined {
  if (!(error instanceof ProblemError) || error.status !== 401) return undefined;
  if (argv.some((a, i) => a === "auth" && argv[i + 1] === "login")) return undefined;
  if (io.env.AGENTPLANE_TOKEN) {
    return "the token in AGENTPLANE_TOKEN was refused: set it to a valid token, or unset it to use the one `agentplane auth login` stored";
  }
  let host = "this installation";
  try {
    host = hostKey(url());
  } catch {}
  return `the token stored for ${host} was refused (revoked or expired): run \`agentplane auth login\` again`;
}

/** fetch's bare "fetch failed" as one line naming the installation and why it could not be reached. */
function unreachable(error: unknown, url: () => string): CliError | undefined {
  const reason = connectionFailure(error);
  if (reason === undefined) return undefined;
  let where = "the installation";
  try {
    where = url();
  } catch {}
  return new CliError(`cannot reach ${where}: ${reason}`);
}

function timedOut(error: unknown, url: () => string): CliError | undefined {
  let where = "the installation";
  try {
    where = url();
  } catch {}
  return timeoutFailure(error, where);
}

function* walk(cmd: import("commander").Command): Generator<import("commander").Command> {
  for (const c of cmd.commands) {
    yield c;
    yield* walk(c);
  }
}
