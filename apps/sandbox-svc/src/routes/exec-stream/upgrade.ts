import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { INTERNAL_IDENTITY_HEADER, type Principal, REQUEST_ID_HEADER } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { authorize, guardSocket, type InternalKeys, rejectUpgrade, verifyIdentity } from "@agentplane/service-kit";
import { WebSocketServer } from "ws";
import type { SandboxDeps } from "../../services/context.ts";
import { startExecStream, trackExecStream } from "../../services/exec-stream.ts";
import { STREAM_PROTOCOLS, serveStream } from "./channels.ts";

const EXEC_PATH = /^\/v1\/projects\/([^/]+)\/sandboxes\/([^/]+)\/exec\/?$/;
/** The same exec for Kubernetes clients (`/k8s`: namespace = project, pod = sandbox), and attach. */
const K8S_STREAM_PATH = /^\/k8s\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/(exec|attach)\/?$/;
/** A sandbox's main process has no terminal to share: attaching opens a login shell. */
const ATTACH_ARGV = ["/bin/sh", "-l"];

/** Who asks, from the internal identity the gateway signed, authorized to exec in the project. */
async function execActor(
  deps: SandboxDeps,
  keys: InternalKeys,
  req: IncomingMessage,
  projectId: string,
  sandboxId: string,
) {
  const token = req.headers[INTERNAL_IDENTITY_HEADER];
  if (typeof token !== "string") throw new ProblemError("unauthenticated", { detail: "Authentication is required" });
  let principal: Principal;
  try {
    principal = (await verifyIdentity(keys, token, "sandbox")).principal;
  } catch {
    throw new ProblemError("unauthenticated", { detail: "Invalid internal identity" });
  }
  const requestId = req.headers[REQUEST_ID_HEADER];
  const requester = { principal, ...(typeof requestId === "string" ? { requestId } : {}) };
  return authorize(requester, deps.authorizer, "sandboxes:exec", { projectId, sandboxId });
}

/**
 * Interactive exec over WebSocket with the Kubernetes streaming protocol (v4/v5 channel.k8s.io):
 * `/v1/projects/{projectId}/sandboxes/{sandboxId}/exec` and the `/k8s` pod exec and attach.
 * The gateway authenticated the caller and forwards the upgrade with the internal identity header.
 */
/** A segment of the path decoded; one that is not valid percent-encoding names nothing (404). */
function pathSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ProblemError("not-found", { detail: `${raw} is not a valid path segment` });
  }
}

/** Most columns or rows a terminal may be opened with, as the endpoint's query documents. */
const MAX_TERMINAL_SIZE = 1000;

/**
 * `cols` or `rows` of the query: a whole number from 1 to MAX_TERMINAL_SIZE, `fallback` when
 * absent; anything else a 400 naming it (a negative number reached the terminal as 65,531).
 */
function terminalSize(query: URLSearchParams, name: "cols" | "rows", fallback: number): number {
  const raw = query.get(name);
  if (raw === null) return fallback;
  const value = /^\d{1,4}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= 1 && value <= MAX_TERMINAL_SIZE)) {
    throw new ProblemError("validation-failed", {
      detail: `The terminal's ${name} must be a whole number from 1 to ${MAX_TERMINAL_SIZE}`,
      errors: [{ pointer: `/query/${name}`, message: `a whole number from 1 to ${MAX_TERMINAL_SIZE}` }],
    });
  }
  return value;
}

export function createExecUpgradeHandler(deps: SandboxDeps, keys: InternalKeys) {
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: 16 * 1024 * 1024,
    handleProtocols: (offered) => STREAM_PROTOCOLS.find((p) => offered.has(p)) ?? false,
  });

  return (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    guardSocket(socket);
    void (async () => {
      const url = new URL(req.url ?? "/", "http://sandbox");
      const match = EXEC_PATH.exec(url.pathname) ?? K8S_STREAM_PATH.exec(url.pathname);
      if (!match) throw new ProblemError("not-found", { detail: `No WebSocket endpoint at ${url.pathname}` });
      const [projectId, sandboxId] = [pathSegment(match[1] as string), pathSegment(match[2] as string)];
      const caller = await execActor(deps, keys, req, projectId, sandboxId);
      const argv = match[3] === "attach" ? ATTACH_ARGV : url.searchParams.getAll("command");
      const tty = ["true", "1"].includes(url.searchParams.get("tty") ?? "");
      const cols = terminalSize(url.searchParams, "cols", 80);
      const rows = terminalSize(url.searchParams, "rows", 24);
      const started = await startExecStream(deps, caller, {
        projectId,
        sandboxId,
        request: { argv, tty, cols, rows },
        aborted: () => socket.destroyed,
      });
      if (!started) return;
      const { row, proc } = started;
      let upgraded = false;
      socket.once("close", () => {
        if (!upgraded) proc.kill("SIGKILL");
      });
      wss.handleUpgrade(req, socket, head, (ws) => {
        upgraded = true;
        void trackExecStream(deps, caller, { sandbox: row, argv, serve: () => serveStream(ws, proc) }).catch((err) =>
          deps.logger.warn({ err, sandboxId }, "recording an exec stream failed"),
        );
      });
    })().catch((err) => {
      const problem = err instanceof ProblemError ? err : new ProblemError("internal-error", { detail: "Exec failed" });
      if (!(err instanceof ProblemError)) deps.logger.error({ err }, "exec upgrade failed");
      // With the request id and path, as every other answer of the API carries them.
      const requestId = req.headers[REQUEST_ID_HEADER];
      const instance = new URL(req.url ?? "/", "http://sandbox").pathname;
      rejectUpgrade(socket, problem, typeof requestId === "string" ? requestId : undefined, instance);
    });
  };
}
