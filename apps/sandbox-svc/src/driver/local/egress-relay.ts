import { type ChildProcess, spawn } from "node:child_process";
import type { Readable } from "node:stream";

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
 * It exits when its stdin closes, so it never outlives the service that started it.
 */
const RELAY = `
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

/** Starts the relay inside the network namespace of `pid`; resolves once it listens. */
export async function startEgressRelay(nsenter: string, pid: number, socketPath: string): Promise<ChildProcess> {
  const proc = spawn(
    nsenter,
    ["-t", String(pid), "-n", "--", process.execPath, "-e", RELAY, socketPath, String(EGRESS_PROXY_PORT)],
    { stdio: ["pipe", "pipe", "pipe"], env: { PATH: "/usr/bin:/bin" } },
  );
  const stderr: Buffer[] = [];
  proc.stderr?.on("data", (c: Buffer) => stderr.push(c));
  await new Promise<void>((resolve, reject) => {
    (proc.stdout as Readable).once("data", () => resolve());
    proc.once("error", reject);
    proc.once("exit", (code) =>
      reject(new Error(`egress relay exited (${code}): ${Buffer.concat(stderr).toString("utf8").slice(-500)}`)),
    );
  });
  proc.stdout?.resume();
  return proc;
}
