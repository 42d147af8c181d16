// Where the CLI keeps its settings and credentials: files under one directory, the directory 0700
// and every file 0600. No OS keyring: the maintained Node binding (@napi-rs/keyring) needs a
// running Secret Service on Linux, which servers, containers and CI do not have; a file readable by
// its owner only is what `gh` falls back to as well.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export interface HostCredentials {
  /** The installation's address, e.g. `https://agentplane.example.com`. */
  url: string;
  token: string;
  /** The token's id (`tok_…`) when login minted it, so `auth logout` can revoke it. */
  tokenId?: string;
  /** Who the token acts for, as `auth/me` said at login. */
  principal?: string;
  /** How it was obtained: `token` (pasted), `device` (sign-in), `activation` (the owner token). */
  via: "token" | "device" | "activation";
  savedAt: string;
}

export interface Settings {
  /** The installation used when neither `--url` nor `AGENTPLANE_URL` says. */
  current?: string;
  /** Defaults per installation host: `org`, `project`. */
  defaults?: Record<string, { org?: string; project?: string }>;
}

/** `$AGENTPLANE_CONFIG_DIR` > `$XDG_CONFIG_HOME/agentplane` > `~/.config/agentplane`. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AGENTPLANE_CONFIG_DIR) return env.AGENTPLANE_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, "agentplane");
  return join(homedir(), ".config", "agentplane");
}

/** The key an installation is stored under: its host and port (`agentplane.example.com`, `127.0.0.1:8080`). */
export function hostKey(url: string): string {
  return new URL(url).host;
}

export function normalizeUrl(url: string): string {
  const withScheme = /^https?:\/\//.test(url) ? url : `https://${url}`;
  const parsed = new URL(withScheme);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/+$/, "")}`;
}

export class Store {
  readonly dir: string;
  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.dir = configDir(env);
  }

  private read<T>(name: string, fallback: T): T {
    const file = join(this.dir, name);
    if (!existsSync(file)) return fallback;
    try {
      return JSON.parse(readFileSync(file, "utf8")) as T;
    } catch {
      throw new Error(`${file} is not valid JSON: fix or remove it`);
    }
  }

  private write(name: string, value: unknown): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    // An existing directory keeps its mode on mkdir: tighten it in case it was made by hand.
    chmodSync(this.dir, 0o700);
    const file = join(this.dir, name);
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
    renameSync(temp, file);
    chmodSync(file, 0o600);
  }

  hosts(): Record<string, HostCredentials> {
    return this.read<{ hosts?: Record<string, HostCredentials> }>("hosts.json", {}).hosts ?? {};
  }

  credentials(url: string): HostCredentials | undefined {
    return this.hosts()[hostKey(url)];
  }

  saveCredentials(credentials: HostCredentials): void {
    const hosts = this.hosts();
    hosts[hostKey(credentials.url)] = credentials;
    this.write("hosts.json", { hosts });
    const settings = this.settings();
    if (!settings.current) this.saveSettings({ ...settings, current: credentials.url });
  }

  removeCredentials(url: string): void {
    const hosts = this.hosts();
    delete hosts[hostKey(url)];
    this.write("hosts.json", { hosts });
    const settings = this.settings();
    if (settings.current && hostKey(settings.current) === hostKey(url)) {
      const next = Object.values(hosts)[0]?.url;
      const { current: _, ...rest } = settings;
      this.saveSettings(next ? { ...rest, current: next } : rest);
    }
  }

  settings(): Settings {
    return this.read<Settings>("config.json", {});
  }

  saveSettings(settings: Settings): void {
    this.write("config.json", settings);
  }
}
