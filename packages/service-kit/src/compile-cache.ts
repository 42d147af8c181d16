import { mkdirSync } from "node:fs";
import { enableCompileCache } from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * Node's compile cache in this user's own cache directory (`$XDG_CACHE_HOME` or `~/.cache`, then
 * `agentplane/compile-cache`, mode 0700). Node's default, `<tmp>/node-compile-cache`, is one path
 * for every user of the machine: the first user's directory refuses the others, whose cache then
 * silently stays off. Without a writable home (a container's user), Node's default is used.
 */
export function enableUserCompileCache(env: NodeJS.ProcessEnv = process.env): string | undefined {
  let dir: string | undefined = join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "agentplane", "compile-cache");
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch {
    dir = undefined;
  }
  return enableCompileCache(dir).directory;
}
