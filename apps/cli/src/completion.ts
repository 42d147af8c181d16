// Shell completion: `agentplane completion bash|zsh|fish` prints a script that asks the CLI itself
// (`agentplane __complete <words…>`) for the candidates, so commands, flags, `--json` field names
// and the ids and names of organizations, projects and sandboxes are always those of this version
// and this installation.
import type { Command, Option } from "commander";
import { openSession } from "./context.ts";
import { CliError } from "./exit-codes.ts";
import { looksLikeId } from "./names.ts";
import { type CommandDeps, operationOf } from "./operations.ts";
import { resolveOrg, resolveProject } from "./scope.ts";

const SCRIPTS: Record<string, string> = {
  bash: `# agentplane completion for bash: eval "$(agentplane completion bash)"
_agentplane() {
  local IFS=$'\\n'
  COMPREPLY=( $(agentplane __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null) )
}
complete -o default -F _agentplane agentplane
`,
  zsh: `#compdef agentplane
# agentplane completion for zsh: eval "$(agentplane completion zsh)"
_agentplane() {
  local -a candidates
  candidates=("\${(@f)$(agentplane __complete "\${words[@]:1:$((CURRENT-1))}" 2>/dev/null)}")
  compadd -a candidates
}
compdef _agentplane agentplane
`,
  fish: `# agentplane completion for fish: agentplane completion fish | source
complete -c agentplane -f -a '(agentplane __complete (commandline -opc)[2..-1] (commandline -ct))'
`,
};

export function addCompletionCommands(root: Command, deps: CommandDeps): void {
  root
    .command("completion")
    .description("Print the shell completion script: bash, zsh or fish")
    .argument("<shell>", "bash | zsh | fish")
    .action((shell: string) => {
      const script = SCRIPTS[shell];
      if (!script) throw new CliError(`no completion for ${shell}: bash, zsh or fish`);
      deps.io.stdout.write(script);
    });
  root
    .command("__complete", { hidden: true })
    .argument("[words...]")
    .allowUnknownOption()
    .helpOption(false)
    .action(async (words: string[]) => {
      const candidates = await complete(root, deps, words);
      if (candidates.length) deps.io.stdout.write(`${candidates.join("\n")}\n`);
    });
}

const longNames = (cmd: Command) =>
  [...cmd.options, ...(cmd.parent?.options ?? [])]
    .filter((o: Option) => !o.hidden)
    .map((o: Option) => o.long)
    .filter((l): l is string => Boolean(l));

/** The candidates for the last word, given the words before it. */
export async function complete(root: Command, deps: CommandDeps, words: string[]): Promise<string[]> {
  const current = words.at(-1) ?? "";
  const before = words.slice(0, -1);
  let cmd = root;
  const positionals: string[] = [];
  for (let i = 0; i < before.length; i++) {
    const word = before[i]!;
    const sub = cmd.commands.find((c) => c.name() === word);
    if (sub && positionals.length === 0) {
      cmd = sub;
      continue;
    }
    if (word.startsWith("-")) {
      const option = cmd.options.find((o) => o.long === word || o.short === word);
      if (option?.required || option?.optional) i++;
      continue;
    }
    positionals.push(word);
  }
  const previous = before.at(-1);
  const match = (xs: string[]) => xs.filter((x) => x.startsWith(current)).sort();
  const visible = cmd.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden).map((c) => c.name());
  const op = operationOf(cmd);
  if (previous === "--json" && op) return match([...op.fields]);
  if (previous === "--org") return match(await named(deps, "org"));
  if (previous === "--project") return match(await named(deps, "project"));
  if (current.startsWith("-")) return match(longNames(cmd));
  if (visible.length > 0) return match(visible);
  const expected = cmd.registeredArguments[positionals.length]?.name();
  if (expected === "sandbox") return match(await named(deps, "sandbox"));
  if (expected === "project") return match(await named(deps, "project"));
  if (expected === "org") return match(await named(deps, "org"));
  return [];
}

/**
 * What a candidate may look like (`sbx_…`, `prj_…`, `box-1`). Candidates go into the command line
 * as they are (bash quotes nothing in COMPREPLY) and are listed on the terminal: an installation's
 * `; rm -rf ~` or escape sequence is neither typed for the person nor shown raw. A name with a
 * space or any other character outside this set is not offered: its id is.
 */
const SAFE = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

interface Listed {
  id?: unknown;
  name?: unknown;
  slug?: unknown;
}

/**
 * Every item's id, and the slug and name that name it alone as the CLI looks names up
 * (names.ts): a slug unique in the list, a name no other item bears as its name or slug, neither
 * shaped like an id (that would be taken as one).
 */
export function candidatesOf(items: Listed[]): string[] {
  const count = new Map<string, number>();
  const bump = (value: unknown) => {
    if (typeof value === "string") count.set(value, (count.get(value) ?? 0) + 1);
  };
  for (const item of items) {
    bump(item.slug);
    if (item.name !== item.slug) bump(item.name);
  }
  const out = new Set<string>();
  for (const item of items) {
    if (typeof item.id !== "string") continue;
    if (SAFE.test(item.id)) out.add(item.id);
    for (const label of [item.slug, item.name]) {
      if (typeof label === "string" && SAFE.test(label) && !looksLikeId(label) && count.get(label) === 1) {
        out.add(label);
      }
    }
  }
  return [...out];
}

/** Ids and names from the installation, best effort: completion never fails aloud or waits long. */
async function named(deps: CommandDeps, kind: "org" | "project" | "sandbox"): Promise<string[]> {
  try {
    // Every request of it, the organization and project looked up on the way too, within 3 s.
    const session = openSession({ ...deps.io, timeout: "3" }, deps.store, undefined);
    if (!session.token) return [];
    const list = async (path: string) =>
      ((await session.sdk.raw("GET", path, { query: { limit: 100 } })) as { items: Listed[] }).items;
    if (kind === "org") return candidatesOf(await list("/v1/orgs"));
    if (kind === "project") {
      const orgId = await resolveOrg(deps.io, deps.store, session, undefined);
      return candidatesOf(await list(`/v1/orgs/${encodeURIComponent(orgId)}/projects`));
    }
    const projectId = await resolveProject(deps.io, deps.store, session, undefined, undefined);
    return candidatesOf(await list(`/v1/projects/${encodeURIComponent(projectId)}/sandboxes`));
  } catch {
    return [];
  }
}
