import type { Logger } from "@agentplane/service-kit";
import type { ExecProcess } from "../types.ts";
import type { SandboxCgroup } from "./cgroups.ts";
import type { RelayTools } from "./egress-relay.ts";
import type { HostIdentity, NamespaceTools, SandboxProcesses } from "./namespaces.ts";
import type { PrivateMounts } from "./private-mounts.ts";
import { find } from "./process.ts";
import type { SpawnedChild, Spawner } from "./spawner.ts";

export type LocalIsolation = "bwrap" | "none";

export interface LocalDriverOptions {
  dataDir: string;
  /** Registered root filesystems: image name → directory. `default` always exists. */
  images?: Record<string, string>;
  isolation?: LocalIsolation;
  logger: Logger;
  /** Where to look for bwrap, nsenter and socat (tests point this at an empty directory). */
  searchPath?: string[];
  /** Where cgroups are mounted (/sys/fs/cgroup; tests point this at an empty directory: no limits). */
  cgroupRoot?: string;
  /**
   * The platform's egress proxy: a Unix socket per sandbox, relayed to the sandbox's 127.0.0.1:3128
   * (HTTP_PROXY/HTTPS_PROXY point there). Without it a sandbox has loopback only. Isolation `none`
   * shares the host's network and gets no proxy.
   */
  egress?: EgressSockets;
  /**
   * The host user a root service runs sandboxes as (default 65533); 0 maps them to root, as the
   * service's own user. Ignored when the service is not root: its sandboxes are its own user's.
   */
  hostUid?: number;
}

export interface EgressSockets {
  /** Starts the sandbox's proxy; resolves with the host path of its Unix socket. */
  open(sandboxId: string): Promise<string>;
  close(sandboxId: string): Promise<void>;
}

const SEARCH_PATH = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];

export type LocalTools = Partial<Record<"bwrap" | "nsenter" | "unshare" | "socat" | "setpriv" | "mount", string>>;

/** The host programs the driver runs, from `dirs` (the usual system directories by default). */
export function findTools(dirs = SEARCH_PATH): LocalTools {
  return {
    bwrap: find("bwrap", dirs),
    nsenter: find("nsenter", dirs),
    unshare: find("unshare", dirs),
    socat: find("socat", dirs),
    setpriv: find("setpriv", dirs),
    mount: find("mount", dirs),
  };
}

/** What the driver's parts (launch.ts, enter.ts) share: fixed once the driver is built. */
export interface DriverContext {
  options: LocalDriverOptions;
  isolation: LocalIsolation;
  images: Record<string, string>;
  tools: LocalTools;
  /** Whose host user the sandboxes are, and how the driver enters them (namespaces.ts). */
  identity: HostIdentity;
  /** Binds directories out of the host user's reach for its bwrap (data dir or images under /root). */
  privateMounts: PrivateMounts | undefined;
  /** bwrap's real path when any user can run it from there (namespaces.ts `bwrapLauncher`). */
  bwrapForAnyone: string | undefined;
  spawner: Spawner;
}

export function namespaceTools(tools: LocalTools): NamespaceTools {
  return { nsenter: tools.nsenter as string, unshare: tools.unshare, setpriv: tools.setpriv };
}

export function relayTools(tools: LocalTools): RelayTools {
  return { socat: tools.socat, setpriv: tools.setpriv };
}

/** The egress proxy's sockets when sandboxes get one: isolated, with egress configured. */
export function egressSockets(ctx: DriverContext): EgressSockets | undefined {
  return ctx.isolation !== "none" ? ctx.options.egress : undefined;
}

export interface RunningSandbox {
  id: string;
  proc: SpawnedChild;
  /** Host pids of the sandbox's first process (inside its namespaces) and of the bwrap holding them. */
  processes: SandboxProcesses;
  env: Record<string, string>;
  workspace: string;
  cgroup: SandboxCgroup;
  execs: Set<ExecProcess>;
  /** The egress relay inside its network namespace, once it listens. */
  relay?: SpawnedChild;
  /**
   * Resolves once the egress relay listens (at once without egress): the sandbox is started
   * before that, and whatever needs its network (its main command, an exec, a forwarded port)
   * waits for it. Rejects when the relay did not come up; the sandbox is then killed.
   */
  relayReady: Promise<void>;
  /** Why the sandbox failed after its start answered (its relay), reported with its exit. */
  failure?: string;
  stopping: boolean;
  /** The main process has exited. */
  ended: boolean;
  gone: Promise<void>;
}
