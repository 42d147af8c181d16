import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { KubeConfig } from "@kubernetes/client-node";
import { CONNECT_TIMEOUT_MS, ConnectTimeoutError } from "./upstream-failure.ts";

/**
 * Headers the relay never passes to the API server (it authenticates with its own credentials).
 * `Impersonate-*` and `X-Remote-*` headers go too (see `impersonates`): the platform's policies
 * decide on what a request does as the relay, and the relay's role (`edit` impersonates every
 * service account) must not become a way to act as someone else.
 */
const DROPPED = new Set([
  "authorization",
  "cookie",
  "host",
  "connection",
  "keep-alive",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "x-agentplane-signature",
  "x-agentplane-delegation",
]);

/**
 * `Impersonate-User`, `-Group`, `-Uid` and `-Extra-<key>`, and what an authenticating proxy asserts
 * (`X-Remote-User`, `-Group`, `-Extra-<key>`, which an API server trusts from a front proxy's
 * certificate, and a proxy in front of one may trust from anyone), whatever the case of the name.
 */
function impersonates(header: string): boolean {
  const name = header.toLowerCase();
  return name.startsWith("impersonate-") || name.startsWith("x-remote-");
}

/**
 * Sends requests to the cluster's API server with the credentials of the loaded kubeconfig (the
 * in-cluster service account, or a kubeconfig file): `@kubernetes/client-node` applies server,
 * CA, client certificate and token to each request. An `http://` server (as `kubectl proxy`
 * serves) is used as kubectl uses it, although client-node refuses one unless TLS verification is
 * skipped (there is no TLS to verify). A connection not made within 10 s fails the request.
 */
export class KubeClient {
  private readonly kube: KubeConfig;
  /** The server as the kubeconfig names it (for messages). */
  readonly server: URL;
  private readonly agentHttps = new https.Agent({ keepAlive: true });
  private readonly agentHttp = new http.Agent({ keepAlive: true });

  constructor(kube: KubeConfig) {
    const cluster = kube.getCurrentCluster();
    if (!cluster) throw new Error("the kubeconfig names no current cluster");
    this.server = new URL(cluster.server);
    this.kube = this.server.protocol === "http:" ? withoutTlsCheck(kube, cluster.name) : kube;
  }

  /** Starts a request; the caller streams the answer and aborts it with the returned request. */
  async request(args: {
    method: string;
    path: string;
    headers: Record<string, string | string[] | undefined>;
    body: Uint8Array;
    /** Ends the request (before or after its answer began) once the caller no longer waits for it. */
    signal?: AbortSignal;
  }): Promise<{ response: IncomingMessage; abort: () => void }> {
    const headers: Record<string, string | string[]> = {};
    for (const [key, value] of Object.entries(args.headers)) {
      if (value === undefined || key.startsWith(":") || DROPPED.has(key) || impersonates(key)) continue;
      headers[key] = value;
    }
    if (args.body.length) headers["content-length"] = String(args.body.length);
    const base = this.server.pathname.replace(/\/+$/, "");
    const options: https.RequestOptions = {
      method: args.method,
      protocol: this.server.protocol,
      hostname: this.server.hostname,
      port: this.server.port || (this.server.protocol === "https:" ? 443 : 80),
      path: `${base}${args.path}`,
      headers,
    };
    await this.kube.applyToHTTPSOptions(options);
    // applyToHTTPSOptions may replace the headers object; ours must survive.
    options.headers = { ...options.headers, ...headers, ...pickAuth(options.headers) };
    const secure = this.server.protocol === "https:";
    const req = (secure ? https : http).request({
      ...options,
      agent: secure ? this.agentHttps : this.agentHttp,
      ...(args.signal ? { signal: args.signal } : {}),
    });
    return new Promise((resolve, reject) => {
      const connecting = setTimeout(() => req.destroy(new ConnectTimeoutError(this.server.origin)), CONNECT_TIMEOUT_MS);
      req.once("socket", (socket) => {
        // A kept-alive socket is connected already; a new one is done once TCP (and TLS) is.
        if (!socket.connecting) clearTimeout(connecting);
        socket.once(secure ? "secureConnect" : "connect", () => clearTimeout(connecting));
      });
      req.once("response", (response) => {
        clearTimeout(connecting);
        resolve({ response, abort: () => req.destroy() });
      });
      req.once("error", (err) => {
        clearTimeout(connecting);
        reject(err);
      });
      req.end(args.body.length ? args.body : undefined);
    });
  }

  close(): void {
    this.agentHttps.destroy();
    this.agentHttp.destroy();
  }
}

/** The same kubeconfig with the current cluster's TLS check off: client-node's gate for `http://` servers. */
function withoutTlsCheck(kube: KubeConfig, clusterName: string): KubeConfig {
  const copy = new KubeConfig();
  copy.loadFromOptions({
    clusters: kube.clusters.map((c) => (c.name === clusterName ? { ...c, skipTLSVerify: true } : c)),
    users: kube.users,
    contexts: kube.contexts,
    currentContext: kube.currentContext,
  });
  return copy;
}

function pickAuth(headers: unknown): Record<string, string> {
  const h = (headers ?? {}) as Record<string, string>;
  const auth = h.Authorization ?? h.authorization;
  return auth ? { authorization: auth } : {};
}
