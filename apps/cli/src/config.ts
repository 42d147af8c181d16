import type { Command } from "commander";
import { resolveUrl } from "./context.ts";
import { CliError } from "./exit-codes.ts";
import type { CommandDeps } from "./operations.ts";
import { hostKey, normalizeUrl } from "./store.ts";

const KEYS = ["org", "project", "url"] as const;
type Key = (typeof KEYS)[number];

function checkKey(key: string): Key {
  if (!(KEYS as readonly string[]).includes(key))
    throw new CliError(`unknown setting ${key}; settings: ${KEYS.join(", ")}`);
  return key as Key;
}

/** `config set|get|list`: the current installation, and a default org and project per installation. */
export function addConfigCommands(root: Command, deps: CommandDeps): void {
  const { io, store } = deps;
  const config = root.command("config").description("Default installation, organization and project");
  config
    .command("set")
    .description("Save a default: url (the installation), org or project (for the current installation)")
    .argument("<key>", KEYS.join(" | "))
    .argument("<value>")
    .action((key: string, value: string, _opts, command: Command) => {
      const k = checkKey(key);
      const settings = store.settings();
      if (k === "url") {
        store.saveSettings({ ...settings, current: normalizeUrl(value) });
        return;
      }
      const host = hostKey(resolveUrl(io, store, command.optsWithGlobals().url));
      const defaults = { ...settings.defaults, [host]: { ...settings.defaults?.[host], [k]: value } };
      store.saveSettings({ ...settings, defaults });
    });
  config
    .command("get")
    .description("Print one setting")
    .argument("<key>", KEYS.join(" | "))
    .action((key: string, _opts, command: Command) => {
      const k = checkKey(key);
      const settings = store.settings();
      const value =
        k === "url"
          ? settings.current
          : settings.defaults?.[hostKey(resolveUrl(io, store, command.optsWithGlobals().url))]?.[k];
      if (value) io.stdout.write(`${value}\n`);
    });
  config
    .command("list")
    .description("Print every setting")
    .action(() => {
      const settings = store.settings();
      if (settings.current) io.stdout.write(`url\t${settings.current}\n`);
      for (const [host, d] of Object.entries(settings.defaults ?? {})) {
        for (const [k, v] of Object.entries(d)) io.stdout.write(`${host}\t${k}\t${v}\n`);
      }
    });
}
