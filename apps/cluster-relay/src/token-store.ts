import { randomBytes } from "node:crypto";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import {
  type ConfigurationOptions,
  CoreV1Api,
  type KubeConfig,
  Observable,
  type ObservableMiddleware,
  PatchStrategy,
  type RequestContext,
  type ResponseContext,
  setHeaderOptions,
} from "@kubernetes/client-node";

/**
 * How long a read or write of the token Secret may take. An API server that takes the request and
 * never answers would otherwise hold it for good: the relay's start (which reads the token) and a
 * rotation (which writes it) fail instead, and are tried again as any failure is.
 */
export const SECRET_REQUEST_TIMEOUT_MS = 30_000;

/** Where the tunnel token lives: read at start, written when the platform rotates it. */
export interface TokenStore {
  read(): Promise<string>;
  write(token: string): Promise<void>;
}

/**
 * A file (a mounted Secret, or a path of its own); written atomically through a temporary file
 * whose name no one can guess, created new (O_EXCL follows no link): a link planted beside the
 * token file fails the write instead of taking the token elsewhere.
 */
export class FileTokenStore implements TokenStore {
  private readonly path: string;
  constructor(path: string) {
    this.path = path;
  }
  async read(): Promise<string> {
    return (await readFile(this.path, "utf8")).trim();
  }
  async write(token: string): Promise<void> {
    const tmp = `${this.path}.${randomBytes(8).toString("hex")}.tmp`;
    try {
      await writeFile(tmp, `${token}\n`, { mode: 0o600, flag: "wx" });
      await rename(tmp, this.path);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }
}

/** The Kubernetes Secret the relay was installed from, through the API server. */
export class SecretTokenStore implements TokenStore {
  private readonly api: CoreV1Api;
  private readonly namespace: string;
  private readonly name: string;
  private readonly key: string;
  private readonly timeoutMs: number;
  constructor(kube: KubeConfig, ref: string, key: string, timeoutMs = SECRET_REQUEST_TIMEOUT_MS) {
    const [namespace, name] = ref.split("/") as [string, string];
    this.api = kube.makeApiClient(CoreV1Api);
    this.namespace = namespace;
    this.name = name;
    this.key = key;
    this.timeoutMs = timeoutMs;
  }
  /** Options that abort the request (and so fail the call) once it has taken longer than the timeout. */
  private bounded(options?: ConfigurationOptions): ConfigurationOptions {
    const timeoutMs = this.timeoutMs;
    const deadline: ObservableMiddleware = {
      pre: (context: RequestContext) => {
        context.setSignal(AbortSignal.timeout(timeoutMs));
        return new Observable(Promise.resolve(context));
      },
      post: (response: ResponseContext) => new Observable(Promise.resolve(response)),
    };
    return { ...options, middleware: [...(options?.middleware ?? []), deadline], middlewareMergeStrategy: "append" };
  }
  async read(): Promise<string> {
    const secret = await this.api.readNamespacedSecret({ name: this.name, namespace: this.namespace }, this.bounded());
    const value = secret.data?.[this.key];
    if (!value) throw new Error(`secret ${this.namespace}/${this.name} has no key ${this.key}`);
    return Buffer.from(value, "base64").toString("utf8").trim();
  }
  /** A JSON merge patch of the one key: other keys and concurrent edits of the Secret are kept. */
  async write(token: string): Promise<void> {
    await this.api.patchNamespacedSecret(
      {
        name: this.name,
        namespace: this.namespace,
        body: { data: { [this.key]: Buffer.from(token).toString("base64") } },
      },
      this.bounded(setHeaderOptions("Content-Type", PatchStrategy.MergePatch)),
    );
  }
}
