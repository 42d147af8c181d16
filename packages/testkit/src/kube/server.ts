import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocketServer } from "ws";
import { FakeKubelet } from "./kubelet.ts";
import { type KubeObject, matchesLabels, notFound, ObjectStore, StatusError } from "./store.ts";
import { serveExec, servePortForward } from "./streams.ts";

const KINDS: Record<string, [apiVersion: string, kind: string]> = {
  "/pods": ["v1", "Pod"],
  "/persistentvolumeclaims": ["v1", "PersistentVolumeClaim"],
  "/serviceaccounts": ["v1", "ServiceAccount"],
  "/secrets": ["v1", "Secret"],
  "/services": ["v1", "Service"],
  "/events": ["v1", "Event"],
  "/namespaces": ["v1", "Namespace"],
  "networking.k8s.io/networkpolicies": ["networking.k8s.io/v1", "NetworkPolicy"],
  "coordination.k8s.io/leases": ["coordination.k8s.io/v1", "Lease"],
  "snapshot.storage.k8s.io/volumesnapshots": ["snapshot.storage.k8s.io/v1", "VolumeSnapshot"],
  "snapshot.storage.k8s.io/volumesnapshotclasses": ["snapshot.storage.k8s.io/v1", "VolumeSnapshotClass"],
  "authorization.k8s.io/selfsubjectaccessreviews": ["authorization.k8s.io/v1", "SelfSubjectAccessReview"],
};

/** The protocols the server picks from, in order: v4 only makes clients fall back. */
const EXEC_PROTOCOLS = ["v5.channel.k8s.io", "v4.channel.k8s.io"];

interface Target {
  resource: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

export interface FakeKubeOptions {
  /** Bearer token every request must carry (401 otherwise). */
  token?: string;
  /** Namespaces that exist from the start (`default` always does). */
  namespaces?: string[];
}

/** Verb and resource the API server's authorizer decides, e.g. `{ verb: "create", resource: "pods/exec" }`. */
export interface Denial {
  verb: string;
  resource: string;
}

const USER = "system:serviceaccount:agentplane:sandbox-svc";

function parsePath(pathname: string): Target | undefined {
  const parts = pathname.split("/").filter(Boolean).map(decodeURIComponent);
  let group: string;
  let rest: string[];
  if (parts[0] === "api" && parts[1] === "v1") {
    group = "";
    rest = parts.slice(2);
  } else if (parts[0] === "apis" && parts.length >= 4) {
    group = parts[1] as string;
    rest = parts.slice(3);
  } else return undefined;
  if (rest[0] === "namespaces" && rest.length >= 3) {
    const [, namespace, resource, name, subresource] = rest as [string, string, string, string?, string?];
    return {
      resource: `${group}/${resource}`,
      namespace,
      ...(name ? { name } : {}),
      ...(subresource ? { subresource } : {}),
    };
  }
  if (rest.length === 0) return undefined;
  const [resource, name] = rest as [string, string?];
  return { resource: `${group}/${resource}`, ...(name ? { name } : {}) };
}

function sendStatus(res: ServerResponse, err: StatusError): void {
  res.writeHead(err.code, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: err.message,
      reason: err.reason,
      ...(err.details ? { details: err.details } : {}),
      code: err.code,
    }),
  );
}

function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    target && typeof target === "object" && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** A Secret's `stringData` is write-only: the API server stores it base64-encoded in `data`. */
function secretData(resource: string, body: KubeObject): KubeObject {
  if (resource !== "/secrets" || !body.stringData) return body;
  const { stringData, ...rest } = body;
  const data = { ...((rest.data as Record<string, string>) ?? {}) };
  for (const [k, v] of Object.entries(stringData as Record<string, string>))
    data[k] = Buffer.from(v).toString("base64");
  return { ...rest, data };
}

async function readBody(req: IncomingMessage): Promise<KubeObject> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? (JSON.parse(text) as KubeObject) : ({} as KubeObject);
}

/**
 * A Kubernetes API server on 127.0.0.1, port 0, for the unchanged `@kubernetes/client-node`: JSON
 * CRUD with resourceVersions and 409s, list/watch with label selectors (headers flushed at once,
 * resume from a resourceVersion, 410 when too old), owner-reference garbage collection, bearer
 * authentication, RBAC denials on demand (403 naming the verb and resource), `pods/exec` and
 * `pods/portforward` over WebSocket, and a kubelet that runs Pods (init containers first) as local
 * processes.
 */
export class FakeKubeApiServer {
  readonly store = new ObjectStore();
  readonly kubelet: FakeKubelet;
  /** Requests answered 403 (add `{verb, resource}`; `resource` may be `pods/exec`). */
  readonly denials: Denial[] = [];
  /** Exec protocols offered, in preference order (set `["v4.channel.k8s.io"]` for the v4 fallback). */
  execProtocols = [...EXEC_PROTOCOLS];
  /** Every request as `VERB path`, for assertions that nothing polls. */
  readonly requests: string[] = [];
  private readonly server: Server;
  private readonly wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => this.pickProtocol(offered),
  });
  private readonly sockets = new Set<Socket>();
  private readonly dataDir = mkdtempSync(join(tmpdir(), "fake-kube-"));
  private port = 0;

  private readonly options: FakeKubeOptions;

  private constructor(options: FakeKubeOptions) {
    this.options = options;
    this.kubelet = new FakeKubelet(this.store, this.dataDir, { imagePull: new Set() });
    for (const ns of ["default", ...(options.namespaces ?? [])]) {
      this.store.create("/namespaces", undefined, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    }
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err) => {
        if (err instanceof StatusError) sendStatus(res, err);
        else sendStatus(res, new StatusError(500, "InternalError", (err as Error).message));
      });
    });
    this.server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.once("close", () => this.sockets.delete(socket));
    });
    this.server.on("upgrade", (req, socket, head) => this.upgrade(req, socket as Socket, head));
  }

  static async start(options: FakeKubeOptions = {}): Promise<FakeKubeApiServer> {
    const fake = new FakeKubeApiServer(options);
    await fake.listen();
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** A kubeconfig (JSON is YAML) for `KubeConfig.loadFromString` or a `KUBECONFIG` file. */
  kubeconfig(namespace = "default"): string {
    return JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      // The client refuses plain HTTP unless TLS verification is off (there is no TLS to verify).
      clusters: [{ name: "fake", cluster: { server: this.url, "insecure-skip-tls-verify": true } }],
      users: [{ name: "fake", user: this.options.token ? { token: this.options.token } : {} }],
      contexts: [{ name: "fake", context: { cluster: "fake", user: "fake", namespace } }],
      "current-context": "fake",
    });
  }

  /** Writes the kubeconfig to a file and returns its path. */
  kubeconfigFile(namespace = "default"): string {
    const path = join(this.dataDir, "kubeconfig");
    writeFileSync(path, this.kubeconfig(namespace));
    return path;
  }

  /** Makes Pods unschedulable with the scheduler's message (undefined lifts it; then `kubelet.reschedule()`). */
  set unschedulable(message: string | undefined) {
    this.kubelet.failures.schedule = message ? () => message : undefined;
  }

  /** The local directory standing in for a claim's volume. */
  claimDir(namespace: string, claim: string): string {
    return this.kubelet.claimDir(namespace, claim);
  }

  /** The local directory holding a VolumeSnapshot's content (gone once the snapshot is deleted). */
  snapshotDir(namespace: string, snapshot: string): string {
    return this.kubelet.snapshotDir(namespace, snapshot);
  }

  private async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(this.port, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** The API server goes away: connections (watches included) are cut, new ones refused. */
  async down(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  /** Back on the same port. */
  async up(): Promise<void> {
    await this.listen();
  }

  private pickProtocol(offered: Set<string>): string | false {
    return this.execProtocols.find((p) => offered.has(p)) ?? false;
  }

  private authorize(req: IncomingMessage, verb: string, target: Target): void {
    if (this.options.token && req.headers.authorization !== `Bearer ${this.options.token}`) {
      throw new StatusError(401, "Unauthorized", "Unauthorized");
    }
    const [group, plural] = target.resource.split("/") as [string, string];
    const resource = target.subresource ? `${plural}/${target.subresource}` : plural;
    if (this.denials.some((d) => d.verb === verb && d.resource === resource)) {
      const scope = target.namespace ? ` in the namespace "${target.namespace}"` : " at the cluster scope";
      throw new StatusError(
        403,
        "Forbidden",
        `${resource} is forbidden: User "${USER}" cannot ${verb} resource "${plural}"${target.subresource ? ` with subresource "${target.subresource}"` : ""} in API group "${group}"${scope}`,
        { kind: plural, ...(target.name ? { name: target.name } : {}) },
      );
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://fake");
    this.requests.push(`${req.method} ${url.pathname}${url.searchParams.has("watch") ? "?watch" : ""}`);
    if (url.pathname === "/version") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ major: "1", minor: "32", gitVersion: "v1.32.0-fake" }));
      return;
    }
    const target = parsePath(url.pathname);
    if (!target || !KINDS[target.resource])
      throw new StatusError(404, "NotFound", "the server could not find the requested resource");
    const watch = url.searchParams.get("watch") === "true" || url.searchParams.get("watch") === "1";
    const verb =
      req.method === "GET"
        ? watch
          ? "watch"
          : target.name
            ? "get"
            : "list"
        : ({ POST: "create", PUT: "update", PATCH: "patch", DELETE: "delete" } as Record<string, string>)[
            req.method ?? ""
          ];
    if (!verb) throw new StatusError(405, "MethodNotAllowed", `method ${req.method} not allowed`);
    this.authorize(req, verb, target);
    if (target.namespace && !this.store.get("/namespaces", undefined, target.namespace) && verb === "create") {
      throw notFound("/namespaces", target.namespace);
    }
    const [apiVersion, kind] = KINDS[target.resource] as [string, string];
    const reply = (code: number, body: unknown) => {
      res.writeHead(code, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (verb === "watch") return this.watch(req, res, target, url.searchParams);
    if (verb === "list") {
      const selector = url.searchParams.get("labelSelector");
      const items = this.store
        .list(target.resource, target.namespace)
        .filter((o) => matchesLabels(selector, o.metadata.labels))
        .map((o) => ({ apiVersion, kind, ...o }));
      return reply(200, {
        apiVersion,
        kind: `${kind}List`,
        metadata: { resourceVersion: this.store.resourceVersion },
        items,
      });
    }
    const name = target.name as string;
    if (verb === "get") {
      const found = this.store.get(target.resource, target.namespace, name);
      if (!found) throw notFound(target.resource, name);
      return reply(200, { apiVersion, kind, ...found });
    }
    if (target.resource === "authorization.k8s.io/selfsubjectaccessreviews" && verb === "create") {
      return reply(201, this.review(await readBody(req)));
    }
    if (verb === "create") {
      const body = secretData(target.resource, await readBody(req));
      return reply(201, this.store.create(target.resource, target.namespace, { apiVersion, kind, ...body }));
    }
    if (verb === "update") {
      const body = secretData(target.resource, await readBody(req));
      return reply(200, this.store.replace(target.resource, target.namespace, name, body));
    }
    if (verb === "patch") {
      const type = req.headers["content-type"] ?? "";
      if (!/merge-patch|strategic-merge-patch/.test(type)) {
        throw new StatusError(415, "UnsupportedMediaType", `the fake API server takes merge patches, not ${type}`);
      }
      const current = this.store.get(target.resource, target.namespace, name);
      if (!current) throw notFound(target.resource, name);
      const merged = mergePatch(current, await readBody(req)) as KubeObject;
      return reply(200, this.store.replace(target.resource, target.namespace, name, merged));
    }
    return reply(200, this.delete(target.resource, target.namespace, name));
  }

  /** A SelfSubjectAccessReview answered from the denials (everything else is allowed). */
  private review(body: KubeObject): KubeObject {
    const attributes = (body.spec?.resourceAttributes ?? {}) as {
      verb?: string;
      resource?: string;
      subresource?: string;
    };
    const resource = attributes.subresource ? `${attributes.resource}/${attributes.subresource}` : attributes.resource;
    const denied = this.denials.some((d) => d.verb === attributes.verb && d.resource === resource);
    return { ...body, status: { allowed: !denied, ...(denied ? { reason: "no RBAC policy matched" } : {}) } };
  }

  /** Deletes an object; a Pod first gets a deletionTimestamp and its processes are killed. Dependents follow. */
  private delete(resource: string, namespace: string | undefined, name: string): KubeObject {
    const current = this.store.get(resource, namespace, name);
    if (!current) throw notFound(resource, name);
    if (resource === "/pods") {
      const at = new Date().toISOString().replace(/\.\d+Z$/, "Z");
      this.store.update(resource, namespace, name, (o) => {
        o.metadata.deletionTimestamp = at;
      });
      this.kubelet.kill(namespace ?? "default", name);
    }
    const removed = this.store.remove(resource, namespace, name);
    // The garbage collector removes dependents in the background.
    setImmediate(() => this.collect(removed.metadata.uid as string));
    return removed;
  }

  private collect(uid: string): void {
    for (const { resource, object } of this.store.dependents(uid)) {
      try {
        this.delete(resource, object.metadata.namespace, object.metadata.name);
      } catch {
        // Already gone.
      }
    }
  }

  private watch(req: IncomingMessage, res: ServerResponse, target: Target, params: URLSearchParams): void {
    const [apiVersion, kind] = KINDS[target.resource] as [string, string];
    const selector = params.get("labelSelector");
    const rv = Number(params.get("resourceVersion") || "0");
    res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
    res.flushHeaders();
    const matches = (o: KubeObject) =>
      (target.namespace === undefined || o.metadata.namespace === target.namespace) &&
      (target.name === undefined || o.metadata.name === target.name) &&
      matchesLabels(selector, o.metadata.labels);
    const write = (type: string, object: unknown) => res.write(`${JSON.stringify({ type, object })}\n`);
    let backlog: { type: string; object: KubeObject }[] | undefined;
    if (rv === 0) {
      backlog = this.store.list(target.resource, target.namespace).map((object) => ({ type: "ADDED", object }));
    } else {
      backlog = this.store.since(rv)?.filter((e) => e.resource === target.resource);
      if (!backlog) {
        write("ERROR", {
          kind: "Status",
          apiVersion: "v1",
          status: "Failure",
          message: `too old resource version: ${rv}`,
          reason: "Expired",
          code: 410,
        });
        res.end();
        return;
      }
    }
    for (const e of backlog) if (matches(e.object)) write(e.type, { apiVersion, kind, ...e.object });
    const unsubscribe = this.store.subscribe((e) => {
      if (e.resource === target.resource && matches(e.object)) write(e.type, { apiVersion, kind, ...e.object });
    });
    const timeout = Number(params.get("timeoutSeconds") || "0");
    const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
    res.once("close", () => {
      unsubscribe();
      if (timer) clearTimeout(timer);
    });
    req.once("close", () => res.end());
  }

  private upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const url = new URL(req.url ?? "/", "http://fake");
    this.requests.push(`${req.method} ${url.pathname}`);
    const target = parsePath(url.pathname);
    const refuse = (err: StatusError) => {
      const body = JSON.stringify({
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        message: err.message,
        reason: err.reason,
        code: err.code,
      });
      socket.end(
        `HTTP/1.1 ${err.code} ${err.reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    };
    try {
      if (
        target?.resource !== "/pods" ||
        !target.name ||
        !["exec", "portforward", "attach"].includes(target.subresource ?? "")
      ) {
        throw new StatusError(404, "NotFound", "the server could not find the requested resource");
      }
      this.authorize(req, "create", target);
      const ns = target.namespace ?? "default";
      if (!this.store.get("/pods", ns, target.name)) throw notFound("/pods", target.name);
      // Exec may name any running container, an init container included (kubectl exec -c).
      const named = url.searchParams.get("container") ?? undefined;
      const container = this.kubelet.container(ns, target.name, named);
      if (!container) {
        throw new StatusError(400, "BadRequest", `container ${named ?? "sandbox"} is not valid for pod ${target.name}`);
      }
      const subresource = target.subresource;
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        if (subresource === "portforward") {
          servePortForward(ws, container, Number(url.searchParams.get("ports")));
          return;
        }
        const argv = url.searchParams.getAll("command");
        void serveExec(ws, container, {
          argv: argv.length > 0 ? argv : ["/bin/sh"],
          stdin: url.searchParams.get("stdin") === "true",
          tty: url.searchParams.get("tty") === "true",
        });
      });
    } catch (err) {
      refuse(err instanceof StatusError ? err : new StatusError(500, "InternalError", (err as Error).message));
    }
  }

  async close(): Promise<void> {
    this.kubelet.close();
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
    await this.down().catch(() => {});
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
