// Where the CLI keeps its settings and credentials: files under one directory, the directory 0700
// and every file 0600. A token goes to the OS keyring where one is usable (keyring.ts), and the
// file then names the keyring instead of holding it; elsewhere (servers, containers, CI: no
// Secret Service) it stays in the file readable by its owner only, as `gh` does too.
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { CliError } from "./exit-codes.ts";
import { openKeyring } from "./keyring.ts";

export interface HostCredentials {
  /** The installation's address, e.g. `https://agentplane.example.com`. */
  url: string;
  /** The token; in the file only when it is not in the keyring. */
  token: string;
  /** `keyring`: the token is in the OS keyring under the host's key, not in the file. */
  secret?: "keyring";
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

/** An address without a scheme is https, except on this machine (localhost, 127.x, [::1]): http. */
export function normalizeUrl(url: string): string {
  const loopback = /^(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d+)?(\/|$)/i.test(url);
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  const withScheme = scheme ? url : `${loopback ? "http" : "https"}://${url}`;
  const parsed = URL.parse(withScheme);
  if (!parsed || (scheme !== undefined && scheme !== "http" && scheme !== "https") || !parsed.hostname) {
    throw new CliError(
      `"${url}" is not an installation's address: give one like https://agentplane.example.com or localhost:8080`,
    );
  }
  return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/+$/, "")}`;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export class Store {
  readonly dir: string;
  private readonly env: NodeJS.ProcessEnv;
  /** Tokens read from the keyring by `loadSecrets`, by host key. */
  private readonly secrets = new Map<string, string>();
  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.dir = configDir(env);
    this.env = env;
  }

  /** Reads the tokens kept in the keyring (none to read: no keyring is touched). */
  async loadSecrets(): Promise<void> {
    const inKeyring = Object.entries(this.fileHosts()).filter(([, h]) => h.secret === "keyring");
    if (inKeyring.length === 0) return;
    const { store } = await openKeyring(this.env, { probe: false });
    if (!store) return;
    for (const [key] of inKeyring) {
      const token = await store.get(key).catch(() => undefined);
      if (token) this.secrets.set(key, token);
    }
  }

  /**
   * Settings name the installation a token is sent to: a directory or file another user made (a
   * config directory under a shared /tmp, planted while it was open to others) is not used. Root's
   * own and, for root (sudo keeping HOME), anyone's are.
   */
  private assertOwned(path: string): void {
    const uid = process.getuid?.();
    if (uid === undefined || uid === 0) return;
    const owner = statSync(path, { throwIfNoEntry: false })?.uid;
    if (owner === undefined || owner === uid || owner === 0) return;
    throw new CliError(
      `${path} belongs to another user (uid ${owner}): its settings and tokens are not used; remove it, or set AGENTPLANE_CONFIG_DIR to a directory of yours`,
    );
  }

  /** A file's object, checked by `valid`: anything else (cut short, edited, `null`) is one line naming it. */
  private read<T extends object>(name: string, fallback: T, valid: (value: Record<string, unknown>) => boolean): T {
    const file = join(this.dir, name);
    if (!existsSync(file)) return fallback;
    this.assertOwned(this.dir);
    this.assertOwned(file);
    let value: unknown;
    try {
      value = JSON.parse(readFileSync(file, "utf8"));
    } catch {
      throw new CliError(`${file} is not valid JSON: fix or remove it`);
    }
    if (!isRecord(value) || !valid(value))
      throw new CliError(`${file} is not what agentplane writes: fix or remove it`);
    return value as T;
  }

  private write(name: string, value: unknown): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    this.assertOwned(this.dir);
    // An existing directory keeps its mode on mkdir: tighten it in case it was made by hand.
    if (this.ownPath(this.dir)) chmodSync(this.dir, 0o700);
    const file = join(this.dir, name);
    // A name no one can guess, created new (O_EXCL follows no link): a link planted there while
    // the directory was open to others fails the open instead of taking the token elsewhere. The
    // file is made 0600 and renamed over the old one, so it is never seen half written or looser.
    const temp = join(this.dir, `.${name}.${randomBytes(8).toString("hex")}.tmp`);
    try {
      writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600, flag: "wx" });
      renameSync(temp, file);
    } catch (error) {
      rmSync(temp, { force: true });
      throw error;
    }
  }

  private fileHosts(): Record<string, HostCredentials> {
    this.tightenHostsFile();
    const file = this.read<{ hosts?: Record<string, HostCredentials> }>(
      "hosts.json",
      {},
      (v) =>
        v.hosts === undefined ||
        (isRecord(v.hosts) && Object.values(v.hosts).every((h) => isRecord(h) && typeof h.url === "string")),
    );
    return file.hosts ?? {};
  }

  /**
   * A hosts.json others may read (copied from another machine, restored from a backup, made by
   * hand) is made the owner's alone when it is read, not only at the next login: a command that
   * only reads it would otherwise leave its tokens open for as long as it is used.
   */
  private tightenHostsFile(): void {
    if (process.platform === "win32") return;
    const file = join(this.dir, "hosts.json");
    const mode = statSync(file, { throwIfNoEntry: false })?.mode;
    if (mode === undefined) return;
    try {
      if (mode & 0o077 && this.ownPath(file)) chmodSync(file, 0o600);
      if (statSync(this.dir).mode & 0o077 && this.ownPath(this.dir)) chmodSync(this.dir, 0o700);
    } catch {
      // Not ours to change (a file of another user, a read-only mount): it is read as it is.
    }
  }

  /**
   * A path whose mode this user may change: it and, when it is a link, what it names are this
   * user's. Root reading a directory of another user's (sudo keeping HOME) must not change, through
   * a link planted there, the mode of whatever it names (/etc/passwd made 0600); a link of one's
   * own (a dotfile manager's) is followed.
   */
  private ownPath(path: string): boolean {
    const uid = process.getuid?.();
    return uid === undefined || (lstatSync(path).uid === uid && statSync(path).uid === uid);
  }

  hosts(): Record<string, HostCredentials> {
    const hosts = this.fileHosts();
    for (const [key, h] of Object.entries(hosts)) {
      if (h.secret === "keyring") hosts[key] = { ...h, token: this.secrets.get(key) ?? "" };
    }
    return hosts;
  }

  credentials(url: string): HostCredentials | undefined {
    return this.hosts()[hostKey(url)];
  }

  /** Saves a host's credentials; answers where the token went. */
  async saveCredentials(credentials: HostCredentials): Promise<"keyring" | "file"> {
    const key = hostKey(credentials.url);
    const hosts = this.fileHosts();
    const { store: keyring } = await openKeyring(this.env);
    let where: "keyring" | "file" = "file";
    if (keyring) {
      try {
        await keyring.set(key, credentials.token);
        where = "keyring";
      } catch {
        // Locked or refused after all: the file it is.
      }
    }
    if (where === "keyring") {
      hosts[key] = { ...credentials, token: "", secret: "keyring" };
      this.secrets.set(key, credentials.token);
    } else {
      const { secret: _, ...plain } = credentials;
      hosts[key] = plain;
    }
    this.write("hosts.json", { hosts });
    const settings = this.settings();
    if (!settings.current) this.saveSettings({ ...settings, current: credentials.url });
    return where;
  }

  async removeCredentials(url: string): Promise<void> {
    const key = hostKey(url);
    const hosts = this.fileHosts();
    if (hosts[key]?.secret === "keyring") {
      const { store: keyring } = await openKeyring(this.env, { probe: false });
      await keyring?.delete(key).catch(() => {});
      this.secrets.delete(key);
    }
    delete hosts[key];
    this.write("hosts.json", { hosts });
    const settings = this.settings();
    if (settings.current && hostKey(settings.current) === key) {
      const next = Object.values(hosts)[0]?.url;
      const { current: _, ...rest } = settings;
      this.saveSettings(next ? { ...rest, current: next } : rest);
    }
  }

  settings(): Settings {
    return this.read<Settings>(
      "config.json",
      {},
      (v) =>
        (v.current === undefined || typeof v.current === "string") &&
        (v.defaults === undefined || (isRecord(v.defaults) && Object.values(v.defaults).every(isRecord))),
    );
  }

  saveSettings(settings: Settings): void {
    this.write("config.json", settings);
  }
}
