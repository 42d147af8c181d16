// The command tree: auth, config, api, completion and help first, then one command per /v1
// operation group from the generated manifest (noun then verb).
import { Command } from "commander";
import { addApiCommand } from "./api.ts";
import { addAuthCommands } from "./auth.ts";
import { COMMANDS, NOUNS } from "./command-map.ts";
import { addCompletionCommands } from "./completion.ts";
import { addConfigCommands } from "./config.ts";
import { DEFAULT_TIMEOUT_S, type Io, PASSTHROUGH_TIMEOUT_S } from "./context.ts";
import { addOperationCommand, type CommandDeps, commandGroups } from "./operations.ts";
import { addSpecialCommands, SPECIAL } from "./special.ts";
import { Store } from "./store.ts";
import { VERSION } from "./version.ts";

const describe = (path: string) => NOUNS[path];

/** The width help wraps at: a terminal's own (at most 100), else 100. */
function helpWidth(stream: NodeJS.WriteStream): number {
  return stream.isTTY && stream.columns > 0 ? Math.min(stream.columns, 100) : 100;
}

/** Top-level commands that are not operation nouns. */
const OWN_COMMANDS = new Set(["auth", "config", "api", "completion", "__complete", "help"]);

/**
 * The top-level command a command line runs, when building only its branch of the tree is enough;
 * undefined when the whole tree is needed (help, completion, an unknown word to suggest for).
 */
export function branchOf(argv: readonly string[]): string | undefined {
  let i = 0;
  while (i < argv.length && argv[i]!.startsWith("-")) {
    // The options before a command that take a value.
    if (argv[i] === "--url" || argv[i] === "--timeout") i++;
    i++;
  }
  const word = argv[i];
  if (!word || word === "help" || word === "completion" || word === "__complete") return undefined;
  if (OWN_COMMANDS.has(word)) return word;
  for (const path of Object.values(COMMANDS)) if (path.split(" ")[0] === word) return word;
  return undefined;
}

/**
 * The command tree; with `branch`, only that top-level command's part of it (a cold start builds
 * one noun's commands, not all 180 operations').
 */
export function buildProgram(io: Io, store = new Store(io.env), branch?: string): Command {
  const deps: CommandDeps = { io, store };
  const wanted = (word: string) => branch === undefined || branch === word;
  const program = new Command("agentplane").description("Command-line client of the Agentplane API");
  // Only before a command: a root option is parsed anywhere on the line, so `bindings create
  // --version 1` would print the version and exit 0 without creating anything.
  if (branch === undefined) program.version(VERSION, "-v, --version");
  program
    .option("--url <address>", "the installation (default: AGENTPLANE_URL, then the one logged in to)")
    .option(
      "--timeout <seconds>",
      `how long a request may take, its answer read whole (default: AGENTPLANE_TIMEOUT, else ${DEFAULT_TIMEOUT_S}; ${PASSTHROUGH_TIMEOUT_S} for llm request and the proxies; 0: no limit)`,
    )
    .showSuggestionAfterError(true)
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // Help fits the terminal it is read in; pipes and the generated docs get 100 columns.
      getOutHelpWidth: () => helpWidth(io.stdout),
      getErrHelpWidth: () => helpWidth(io.stderr),
      // One line: the unknown word and the closest match; kubectl's and az's output flags name ours.
      outputError: (s, write) =>
        write(
          s
            .replace(/\n\(Did you mean (.+)\?\)/, " (did you mean $1?)")
            .replace(/^(error: unknown option '(?:--output|-o|--format)(?:=[^']*)?')\n$/, "$1 (JSON is --json)\n"),
        ),
    });
  program.configureHelp({ sortSubcommands: true, minWidthToWrap: 24 });
  // Every client a command makes reads it from io (context.ts clientFor).
  program.hook("preAction", (_root, action) => {
    const timeout = action.optsWithGlobals().timeout as string | undefined;
    if (timeout !== undefined) io.timeout = timeout;
  });

  if (wanted("auth")) addAuthCommands(program, deps);
  if (wanted("config")) addConfigCommands(program, deps);
  if (wanted("api")) addApiCommand(program, deps);
  if (branch === undefined) addCompletionCommands(program, deps);
  for (const [path, ops] of commandGroups()) {
    if (!SPECIAL.has(path) && wanted(path.split(" ")[0]!)) addOperationCommand(program, path, ops, deps, describe);
  }
  addSpecialCommands(program, deps, describe, branch);

  program.addHelpText("after", "\nRun `agentplane help exit-codes` for the exit codes scripts can rely on.");
  return program;
}
