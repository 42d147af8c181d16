import type { Duplex } from "node:stream";
import type { SpawnedChild } from "./spawner.ts";

/** Where a sandbox finds the platform's forward proxy: its own loopback (no other route leaves it). */
export const EGRESS_PROXY_PORT = 3128;

/**
 * The proxy environment every HTTP client inside honours (curl reads the lower-case names; Node's
 * own `fetch` and `http` only with `NODE_USE_ENV_PROXY=1`, which the agent runtime relies on).
 */
export function egressEnv(slug: string): Record<string, string> {
  const proxy = `http://127.0.0.1:${EGRESS_PROXY_PORT}`;
  const noProxy = `localhost,127.0.0.1,::1,${slug}`;
  return {
    NODE_USE_ENV_PROXY: "1",
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    NO_PROXY: noProxy,
    http_proxy: proxy,
    https_proxy: proxy,
    no_proxy: noProxy,
  };
}

/**
 * The host's node, in the sandbox's network namespace only (the host's filesystem stays visible):
 * listens on the sandbox's 127.0.0.1:3128 and relays every connection to the proxy's Unix socket.
 * It exits when its stdin closes, so it never outlives the service that started it. Used where
 * socat is missing: a Node start costs tens of milliseconds more than socat's.
 */
const NODE_RELAY = `
const net = require("net");
const [path, port] = process.argv.slice(1);
const server = net.createServer((c) => {
  const u = net.connect(path);
  c.on("error", () => u.destroy());
  u.on("error", () => c.destroy());
  c.pipe(u).pipe(c);
});
server.on("error", (e) => { process.stderr.write(String(e)); process.exit(1); });
server.listen(+port, "127.0.0.1", () => process.stdout.write("ready\\n"));
process.stdin.on("end", () => process.exit(0));
process.stdin.on("error", () => process.exit(0));
process.stdin.resume();
`;

/** Host programs the relay can run with. */
export interface RelayTools {
  /** socat, with util-linux setpriv to tie its life to the spawning process; else the host's node. */
  socat?: string | undefined;
  setpriv?: string | undefined;
}

/**
 * The relay's command line. socat forks a child per connection; `setpriv --pdeathsig KILL` makes
 * the listener die with the process that spawned it (nsenter execs it in place, so that parent is
 * the spawner), as the node relay dies when its stdin closes. socat says it listens on stderr.
 */
export function relayArgv(
  tools: RelayTools,
  enterNet: string[],
  socketPath: string,
): { argv: string[]; socat: boolean } {
  const enter = [...enterNet, "--"];
  if (tools.socat && tools.setpriv) {
    const listen = `TCP-LISTEN:${EGRESS_PROXY_PORT},bind=127.0.0.1,reuseaddr,fork`;
    const argv = [
      tools.setpriv,
      "--pdeathsig",
      "KILL",
      "--",
      tools.socat,
      "-d",
      "-d",
      listen,
      `UNIX-CONNECT:${socketPath}`,
    ];
    return { argv: [...enter, ...argv], socat: true };
  }
  return { argv: [...enter, process.execPath, "-e", NODE_RELAY, socketPath, String(EGRESS_PROXY_PORT)], socat: false };
}

/**
 * Starts the relay inside a sandbox's network namespace (entered with `enterNet`) through `spawn` (stdin, stdout, stderr
 * piped); resolves with it once it listens.
 */
export async function startEgressRelay(
  spawn: (argv: string[], env: Record<string, string>) => Promise<SpawnedChild>,
  tools: RelayTools,
  enterNet: string[],
  socketPath: string,
): Promise<SpawnedChild> {
  const { argv, socat } = relayArgv(tools, enterNet, socketPath);
  const relay = await spawn(argv, { PATH: "/usr/bin:/bin" });
  const [, stdout, stderr] = relay.stdio as [Duplex, Duplex, Duplex];
  let said = "";
  try {
    await new Promise<void>((resolve, reject) => {
      if (socat) {
        stderr.on("data", (c: Buffer) => {
          said = (said + c.toString("utf8")).slice(-2000);
          if (said.includes(" listening on ")) resolve();
        });
      } else {
        stderr.on("data", (c: Buffer) => {
          said = (said + c.toString("utf8")).slice(-2000);
        });
        stdout.once("data", () => resolve());
      }
      void relay.exited.then(({ exitCode }) =>
        reject(new Error(`egress relay exited (${exitCode}): ${said.slice(-500)}`)),
      );
    });
  } catch (err) {
    relay.kill("SIGKILL");
    throw err;
  }
  // socat logs each connection on stderr; read and drop it from here on.
  stderr.removeAllListeners("data");
  stderr.resume();
  stdout.resume();
  return relay;
}
