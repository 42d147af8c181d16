// The OS keyring (macOS Keychain, Windows Credential Manager, the Secret Service on Linux) through
// @napi-rs/keyring, when one is usable; the file store (store.ts) otherwise. On Linux only the
// Secret Service counts: the binding's fallback, the kernel keyring, forgets everything at reboot.
// Servers, containers and CI usually have no session bus at all, and a bus that never answers must
// not hang a command: each call runs in a short-lived process of its own (keyring-child.ts) with a
// deadline, killed when it passes it.

import { fileURLToPath } from "node:url";
import { CliError } from "./exit-codes.ts";

const SERVICE = "agentplane-cli";
const DEADLINE_MS = 3000;

export interface SecretStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, secret: string): Promise<void>;
  delete(key: string): Promise<void>;
}

let stalled = false;
/** True once a keyring call ran past its deadline (and its process was killed). */
export const keyringStalled = () => stalled;

/** Why no keyring is used here, before trying one; undefined when it is worth a try. */
export function keyringUnavailable(env: NodeJS.ProcessEnv, platform = process.platform): string | undefined {
  const setting = env.AGENTPLANE_KEYRING?.trim() ?? "";
  if (setting === "off") return "AGENTPLANE_KEYRING=off";
  // A misspelt `off` (`false`, `0`, `OFF`) would otherwise put the token where it was asked not to go.
  if (setting !== "" && setting !== "on") {
    throw new CliError(`AGENTPLANE_KEYRING must be on or off, not ${JSON.stringify(env.AGENTPLANE_KEYRING)}`);
  }
  // The Secret Service is reached over the session bus: without one there is nothing to ask.
  if (platform === "linux" && !env.DBUS_SESSION_BUS_ADDRESS) return "no D-Bus session bus";
  return undefined;
}

/**
 * The keyring, after one read has shown it answers; undefined (and why) when it is off, absent,
 * locked or silent. `probe: false` skips that read, for a keyring that held a token already.
 */
export async function openKeyring(
  env: NodeJS.ProcessEnv,
  options: { probe?: boolean; deadlineMs?: number } = {},
): Promise<{ store?: SecretStore; reason?: string }> {
  const skip = keyringUnavailable(env);
  if (skip) return { reason: skip };
  const deadline = options.deadlineMs ?? (Number(env.AGENTPLANE_KEYRING_TIMEOUT_MS) || DEADLINE_MS);
  const { spawn } = await import("node:child_process");
  const child = fileURLToPath(new URL("./keyring-child.ts", import.meta.url));
  const call = (op: "get" | "set" | "delete", key: string, secret?: string) =>
    new Promise<string | undefined>((resolve, reject) => {
      const proc = spawn(process.execPath, [child], { env, stdio: ["pipe", "pipe", "ignore"] });
      let out = "";
      const timer = setTimeout(() => {
        stalled = true;
        proc.kill("SIGKILL");
        reject(new Error(`the keyring did not answer within ${deadline} ms`));
      }, deadline);
      proc.stdout.on("data", (c: Buffer) => {
        out += c;
      });
      proc.on("error", (e) => {
        clearTimeout(timer);
        reject(e);
      });
      proc.on("close", () => {
        clearTimeout(timer);
        try {
          const answer = JSON.parse(out) as { value?: string; error?: string };
          if (answer.error !== undefined) reject(new Error(answer.error));
          else resolve(answer.value);
        } catch {
          reject(new Error("the keyring binding could not be loaded"));
        }
      });
      // The secret travels on stdin, never in arguments other processes can read.
      proc.stdin.end(JSON.stringify({ op, service: SERVICE, key, ...(secret !== undefined ? { secret } : {}) }));
    });
  const store: SecretStore = {
    get: (key) => call("get", key),
    set: async (key, secret) => {
      await call("set", key, secret);
    },
    delete: async (key) => {
      await call("delete", key);
    },
  };
  if (options.probe !== false) {
    try {
      await store.get("probe");
    } catch (error) {
      return { reason: (error as Error).message };
    }
  }
  return { store };
}
