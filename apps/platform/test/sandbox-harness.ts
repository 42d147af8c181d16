import { randomBytes } from "node:crypto";
import { accessSync, constants, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { silentLogger } from "@agentplane/service-kit";
import { WebSocket } from "ws";
import { assemblePlatform, type Platform } from "../src/assemble.ts";
import { AllInOneEnvSchema } from "../src/config.ts";

/** Suites that need real namespaces: skipped with the reason outside CI, a failure in CI. */
export function requireBwrap(): { available: boolean; reason: string } {
  let available = false;
  for (const dir of ["/usr/bin", "/usr/local/bin", "/bin"]) {
    try {
      accessSync(join(dir, "bwrap"), constants.X_OK);
      available = true;
      break;
    } catch {
      // Next directory.
    }
  }
  if (!available && process.env.CI === "true") {
    throw new Error("bwrap is required in CI: install the Debian package bubblewrap");
  }
  return { available, reason: available ? "" : " (skipped: bwrap not installed; apt-get install bubblewrap)" };
}

/**
 * The ingress tests serve HTTP from inside a sandbox with the host's node, which the default image
 * exposes only when it lives under /usr. Outside CI its absence skips them; in CI it fails.
 */
export function requireSandboxNode(): { available: boolean; reason: string } {
  const available = ["/usr/local/bin/node", "/usr/bin/node"].some((p) => existsSync(p));
  if (!available && process.env.CI === "true") {
    throw new Error("the ingress tests need node under /usr (visible in the default sandbox image)");
  }
  return { available, reason: available ? "" : " (skipped: no node under /usr for the server in the sandbox)" };
}

export interface CallResult<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

export type Call = <T = Record<string, unknown>>(
  method: string,
  path: string,
  options?: { token?: string | null; body?: unknown; headers?: Record<string, string> },
) => Promise<CallResult<T>>;

export interface SandboxPlatform {
  platform: Platform;
  url: string;
  /** The installation owner (bootstrap token): not bound to an organization. */
  ownerToken: string;
  /** Organization A: where the tests act. */
  orgId: string;
  projectId: string;
  /** An admin API token bound to organization A (cannot see organization B). */
  adminToken: string;
  /** A viewer API token bound to organization A: reads only. */
  viewerToken: string;
  /** Organization B with its own project, for cross-tenant checks. */
  otherOrgId: string;
  otherProjectId: string;
  call: Call;
  close(): Promise<void>;
}

/** JSON over HTTP against the gateway; the admin token of organization A unless told otherwise. */
function caller(url: string, defaultToken: () => string): Call {
  return async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token === undefined ? defaultToken() : options.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      headers["content-type"] ??= "application/json";
      body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    }
    const res = await fetch(`${url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    let json: unknown = {};
    try {
      json = text ? JSON.parse(text) : {};
    } catch {
      json = { text };
    }
    return { status: res.status, headers: res.headers, body: json as never };
  };
}

/**
 * The all-in-one platform (tenancy, audit, sandbox, gateway on one port, PGlite in memory) with
 * two organizations, a project in each, and an admin and a viewer API token in the first.
 */
export async function startSandboxPlatform(
  options: { ingressHost?: string; env?: Record<string, string> } = {},
): Promise<SandboxPlatform> {
  const dataDir = mkdtempSync(join(tmpdir(), "platform-sandbox-"));
  const ownerToken = `boot_${randomBytes(24).toString("hex")}`;
  const env = AllInOneEnvSchema.parse({
    PORT: "0",
    HOST: "127.0.0.1",
    AGENTPLANE_DATA_DIR: dataDir,
    AGENTPLANE_BOOTSTRAP_TOKEN: ownerToken,
    AGENT_RUNTIME: "off",
    LOG_LEVEL: "silent",
    ...(options.ingressHost ? { SANDBOX_INGRESS_HOST: options.ingressHost } : {}),
    ...options.env,
  });
  const database: Database = await openDatabase("pglite://memory");
  const bus = new MemoryBus();
  const platform = await assemblePlatform({ env, dataDir, database, bus, logger: silentLogger() });
  const url = platform.url.replace("0.0.0.0", "127.0.0.1");
  let adminToken = "";
  const call = caller(url, () => adminToken || ownerToken);

  const expectCreated = <T>(r: CallResult<T>, what: string): T => {
    if (r.status !== 201) throw new Error(`creating ${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const org = expectCreated(await call<{ id: string }>("POST", "/v1/orgs", { body: { name: "Acme" } }), "org");
  const project = expectCreated(
    await call<{ id: string }>("POST", `/v1/orgs/${org.id}/projects`, { body: { name: "payments" } }),
    "project",
  );
  const otherOrg = expectCreated(await call<{ id: string }>("POST", "/v1/orgs", { body: { name: "Globex" } }), "org");
  const otherProject = expectCreated(
    await call<{ id: string }>("POST", `/v1/orgs/${otherOrg.id}/projects`, { body: { name: "rival" } }),
    "project",
  );
  const token = async (role: string) =>
    expectCreated(
      await call<{ token: string }>("POST", `/v1/orgs/${org.id}/api-tokens`, { body: { name: role, role } }),
      `${role} token`,
    ).token;
  const viewerToken = await token("viewer");
  adminToken = await token("admin");

  return {
    platform,
    url,
    ownerToken,
    orgId: org.id,
    projectId: project.id,
    adminToken,
    viewerToken,
    otherOrgId: otherOrg.id,
    otherProjectId: otherProject.id,
    call,
    async close() {
      await platform.close();
      await bus.close();
      await database.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface SandboxBody {
  id: string;
  slug: string;
  state: string;
  currentRevision: number;
  [key: string]: unknown;
}

/** Creates a sandbox in `projectId` (started unless told otherwise) and fails loudly when it cannot. */
export async function createSandbox(
  h: SandboxPlatform,
  body: Record<string, unknown> = {},
  projectId = h.projectId,
): Promise<SandboxBody> {
  const res = await h.call<SandboxBody>("POST", `/v1/projects/${projectId}/sandboxes`, {
    body: { name: "box", start: true, ...body },
  });
  if (res.status !== 201) throw new Error(`creating a sandbox: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  durationMs: number;
}

export async function exec(
  h: SandboxPlatform,
  sandboxId: string,
  command: string | string[],
  extra: Record<string, unknown> = {},
): Promise<CallResult<ExecResult>> {
  return h.call<ExecResult>("POST", "/v1/shell/exec", {
    body: { projectId: h.projectId, sandboxId, command, ...extra },
  });
}

export interface K8sSession {
  ws: WebSocket;
  out: Buffer[];
  err: Buffer[];
  status: Promise<Record<string, unknown>>;
}

/** A Kubernetes streaming-protocol client (channel byte + payload), as kubectl speaks it. */
export function openExec(
  url: string,
  protocols: string[],
  headers: Record<string, string> = {},
): Promise<K8sSession | { refused: number }> {
  const ws = new WebSocket(url, protocols, { headers });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let resolveStatus: (s: Record<string, unknown>) => void = () => {};
  const status = new Promise<Record<string, unknown>>((r) => {
    resolveStatus = r;
  });
  ws.on("message", (data: Buffer) => {
    const payload = data.subarray(1);
    if (data[0] === 1) out.push(payload);
    if (data[0] === 2) err.push(payload);
    if (data[0] === 3) resolveStatus(JSON.parse(payload.toString("utf8")));
  });
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve({ ws, out, err, status }));
    ws.once("unexpected-response", (_req, res) => {
      res.resume();
      resolve({ refused: res.statusCode ?? 0 });
    });
    ws.once("error", reject);
  });
}

/** `?command=a&command=b…` for the exec WebSocket. */
export function execQuery(argv: string[], extra = ""): string {
  return `?${argv.map((a) => `command=${encodeURIComponent(a)}`).join("&")}${extra}`;
}

/** The Kubernetes convention for a bearer token where browsers cannot send headers. */
export function bearerProtocol(token: string): string {
  return `base64url.bearer.authorization.k8s.io.${Buffer.from(token).toString("base64url")}`;
}

/**
 * The sandbox's main process: plain JavaScript for the host's node (the default image exposes the
 * host's /usr). HTTP on two ports answers with what it saw; an upgrade is answered by hand (the
 * sandbox has no ws module): a greeting frame, then each short client frame echoed back unmasked.
 */
export const INGRESS_TEST_SERVER = `
const http = require("http"), crypto = require("crypto");
const TOSSED_COOKIES = (host) => ["tossed=1; Path=/; Domain=sbx.localhost", "dotted=1; domain=.SBX.localhost; Path=/", "parent=1; Domain=localhost", "own=1; Domain=" + String(host ?? "").replace(/:\\d+$/, "") + "; Path=/", "plain=1; Path=/"];
for (const port of [8000, 8001]) {
  const server = http.createServer((req, res) => {
    res.setHeader("content-type", "application/json");
    // Answers at the body's first bytes: a proxy that reads the whole body first never gets here.
    if (req.url === "/first-bytes") return req.once("data", (d) => res.end(JSON.stringify({ first: d.length })));
    // Takes the request and never answers.
    if (req.url === "/never") return;
    // Sets the console's session cookie (both names) beside one of its own.
    if (req.url === "/set-cookie") res.setHeader("set-cookie", ["agentplane_session=aps_x_y; Domain=localhost; Path=/", "__Host-agentplane_session=aps_x_z; Path=/; Secure", "theirs=1; Path=/"]);
    // Scopes cookies to the shared ingress domain, a parent of it, and its own host (cookie tossing).
    if (req.url === "/toss-cookie") res.setHeader("set-cookie", TOSSED_COOKIES(req.headers["x-forwarded-host"]));
    res.end(JSON.stringify({ port, path: req.url, host: req.headers.host, cookie: req.headers.cookie ?? null, length: req.headers["content-length"] ?? null, auth: req.headers.authorization ?? null, internal: Object.keys(req.headers).filter((k) => k.startsWith("x-agentplane-")) }));
  });
  server.on("upgrade", (req, socket) => {
    // Takes the upgrade and never answers it.
    if (req.url === "/never") return;
    // Accepts the upgrade with the same cookies as HTTP's /toss-cookie, then closes.
    if (req.url === "/toss-cookie") return socket.end("HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\nSec-WebSocket-Accept: " + crypto.createHash("sha1").update(req.headers["sec-websocket-key"] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64") + "\\r\\n" + TOSSED_COOKIES(req.headers["x-forwarded-host"] ?? "").map((c) => "Set-Cookie: " + c + "\\r\\n").join("") + "\\r\\n");
    // Refuses the upgrade with what the sandbox was given of the caller's credentials.
    if (req.url === "/credentials") {
      const seen = JSON.stringify({ protocol: req.headers["sec-websocket-protocol"] ?? null, auth: req.headers.authorization ?? null, cookie: req.headers.cookie ?? null });
      return socket.end("HTTP/1.1 403 Forbidden\\r\\ncontent-type: application/json\\r\\ncontent-length: " + seen.length + "\\r\\nconnection: close\\r\\n\\r\\n" + seen);
    }
    const accept = crypto.createHash("sha1").update(req.headers["sec-websocket-key"] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64");
    socket.write("HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\nSec-WebSocket-Accept: " + accept + "\\r\\n\\r\\n");
    const text = (s) => { const b = Buffer.from(s); return Buffer.concat([Buffer.from([0x81, b.length]), b]); };
    socket.write(text("hello from " + port));
    socket.on("data", (d) => {
      if ((d[0] & 0x0f) !== 1) return socket.end();
      const len = d[1] & 0x7f, mask = d.subarray(2, 6), payload = Buffer.from(d.subarray(6, 6 + len));
      for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i % 4];
      socket.write(text("echo " + payload.toString()));
    });
  });
  server.listen(port, "127.0.0.1");
}
`;
