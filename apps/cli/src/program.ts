// The command tree: auth, config, api, completion and help first, then one command per /v1
// operation group from the generated manifest (noun then verb).
import { Command } from "commander";
import { addApiCommand } from "./api.ts";
import { addAuthCommands } from "./auth.ts";
import { NOUNS } from "./command-map.ts";
import { addCompletionCommands } from "./completion.ts";
import { addConfigCommands } from "./config.ts";
import type { Io } from "./context.ts";
import { addOperationCommand, type CommandDeps, commandGroups } from "./operations.ts";
import { addSpecialCommands, SPECIAL } from "./special.ts";
import { Store } from "./store.ts";
import { VERSION } from "./version.ts";

const describe = (path: string) => NOUNS[path];

export function buildProgram(io: Io, store = new Store(io.env)): Command {
  const deps: CommandDeps = { io, store };
  const program = new Command("agentplane")
    .description("Command-line client of the Agentplane API")
    .version(VERSION, "-v, --version")
    .option("--url <address>", "the installation (default: AGENTPLANE_URL, then the one logged in to)")
    .showSuggestionAfterError(true)
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // One line: the unknown word and the closest match.
      outputError: (s, write) => write(s.replace(/\n\(Did you mean (.+)\?\)/, " (did you mean $1?)")),
    });
  program.configureHelp({ sortSubcommands: true, helpWidth: 100 });

  addAuthCommands(program, deps);
  addConfigCommands(program, deps);
  addApiCommand(program, deps);
  addCompletionCommands(program, deps);
  for (const [path, ops] of commandGroups()) {
    if (!SPECIAL.has(path)) addOperationCommand(program, path, ops, deps, describe);
  }
  addSpecialCommands(program, deps, describe);

  program.addHelpText("after", "\nRun `agentplane help exit-codes` for the exit codes scripts can rely on.");
  return program;
}
