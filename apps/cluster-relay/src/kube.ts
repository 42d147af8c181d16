import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";

/** Headers the relay never passes to the API server (it authenticates with its own credentials). */
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
 * Sends requests to the cluster's API server with the credentials of the loaded kubeconfig (the
 * in-cluster service account, or a kubeconfig file): `@kubernetes/client-node` applies server,
 * CA, client certificate and token to each request.
 */
export class KubeClient {
  private readonly kube: KubeConfig;
  private readonly server: URL;
  private readonly agentHttps = new https.Agent({ keepAlive: true });
  private readonly agentHttp = new http.Agent({ keepAlive: true });

  constructor(kube: KubeConfig) {
    const cluster = kube.getCurrentCluster();
    if (!cluster) throw new Error("the kubeconfig names no current cluster");
    this.kube = kube;
    this.server = new URL(cluster.server);
  }

  /** Starts a request; the caller streams the answer and aborts it with the returned request. */
  async request(args: {
    method: string;
    path: string;
    headers: Record<string, string | string[] | undefined>;
    body: Uint8Array;
  }): Promise<{ response: IncomingMessage; abort: () => void }> {
    const headers: Record<string, string | string[]> = {};
    for (const [key, value] of Object.entries(args.headers)) {
      if (value === undefined || key.startsWith(":") || DROPPED.has(key)) continue;
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
    const req = (secure ? https : http).request({ ...options, agent: secure ? this.agentHttps : this.agentHttp });
    return new Promise((resolve, reject) => {
      req.once("response", (response) => resolve({ response, abort: () => req.destroy() }));
      req.once("error", reject);
      req.end(args.body.length ? args.body : undefined);
    });
  }

  close(): void {
    this.agentHttps.destroy();
    this.agentHttp.destroy();
  }
}

function pickAuth(headers: unknown): Record<string, string> {
  const h = (headers ?? {}) as Record<string, string>;
  const auth = h.Authorization ?? h.authorization;
  return auth ? { authorization: auth } : {};
}
