import { randomUUID } from "node:crypto";

/** A Kubernetes object as the API server keeps it (JSON, any kind). */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { uid: string; kind: string; name: string; apiVersion: string }[];
    [key: string]: unknown;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [key: string]: unknown;
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

export interface StoreEvent {
  type: WatchEventType;
  /** `<group>/<resource>`, "" for the core group: `/pods`, `networking.k8s.io/networkpolicies`. */
  resource: string;
  object: KubeObject;
  /** The resourceVersion the event was written at. */
  rv: number;
}

/** A failure answered as a `Status` object with this HTTP code and reason. */
export class StatusError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details?: Record<string, unknown>;
  constructor(code: number, reason: string, message: string, details?: Record<string, unknown>) {
    super(message);
    this.code = code;
    this.reason = reason;
    if (details) this.details = details;
  }
}

const HISTORY = 2000;

/**
 * Objects of every resource with one resourceVersion counter (as etcd's revision), an event history
 * for watches that resume from a resourceVersion, and owner-reference garbage collection.
 */
export class ObjectStore {
  private readonly objects = new Map<string, KubeObject>();
  private readonly history: StoreEvent[] = [];
  private readonly listeners = new Set<(event: StoreEvent) => void>();
  private revision = 1;

  get resourceVersion(): string {
    return String(this.revision);
  }

  private key(resource: string, namespace: string | undefined, name: string): string {
    return `${resource}|${namespace ?? ""}|${name}`;
  }

  private emit(type: WatchEventType, resource: string, object: KubeObject): void {
    const event: StoreEvent = { type, resource, object: structuredClone(object), rv: this.revision };
    this.history.push(event);
    if (this.history.length > HISTORY) this.history.shift();
    for (const listener of this.listeners) listener(event);
  }

  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Events after `rv`, or undefined when the history no longer reaches back that far (410 Gone). */
  since(rv: number): StoreEvent[] | undefined {
    const first = this.history[0];
    if (first && first.rv > rv + 1 && this.history.length >= HISTORY) return undefined;
    return this.history.filter((e) => e.rv > rv);
  }

  get(resource: string, namespace: string | undefined, name: string): KubeObject | undefined {
    const found = this.objects.get(this.key(resource, namespace, name));
    return found ? structuredClone(found) : undefined;
  }

  list(resource: string, namespace?: string): KubeObject[] {
    const out: KubeObject[] = [];
    for (const [key, object] of this.objects) {
      const [r, ns] = key.split("|");
      if (r === resource && (namespace === undefined || ns === namespace)) out.push(structuredClone(object));
    }
    return out.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  }

  create(resource: string, namespace: string | undefined, body: KubeObject): KubeObject {
    const name = body.metadata?.name;
    if (!name) throw new StatusError(422, "Invalid", `${resource.split("/")[1]} "": name: Required value`);
    const key = this.key(resource, namespace, name);
    if (this.objects.has(key)) {
      const plural = resource.split("/")[1];
      throw new StatusError(409, "AlreadyExists", `${plural} "${name}" already exists`, { name, kind: plural });
    }
    this.revision++;
    const object: KubeObject = structuredClone(body);
    object.metadata = {
      ...object.metadata,
      ...(namespace ? { namespace } : {}),
      uid: randomUUID(),
      resourceVersion: String(this.revision),
      creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    };
    this.objects.set(key, object);
    this.emit("ADDED", resource, object);
    return structuredClone(object);
  }

  /** Replaces an object; a stale `metadata.resourceVersion` is a 409 Conflict, as with optimistic concurrency. */
  replace(resource: string, namespace: string | undefined, name: string, body: KubeObject): KubeObject {
    const key = this.key(resource, namespace, name);
    const current = this.objects.get(key);
    if (!current) throw notFound(resource, name);
    const sent = body.metadata?.resourceVersion;
    if (sent && sent !== current.metadata.resourceVersion) {
      throw new StatusError(
        409,
        "Conflict",
        `Operation cannot be fulfilled on ${resource.split("/")[1]} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
        { name, kind: resource.split("/")[1] },
      );
    }
    this.revision++;
    const object: KubeObject = structuredClone(body);
    object.metadata = {
      ...object.metadata,
      name,
      ...(namespace ? { namespace } : {}),
      uid: current.metadata.uid as string,
      creationTimestamp: current.metadata.creationTimestamp as string,
      resourceVersion: String(this.revision),
      ...(current.metadata.deletionTimestamp ? { deletionTimestamp: current.metadata.deletionTimestamp } : {}),
    };
    this.objects.set(key, object);
    this.emit("MODIFIED", resource, object);
    return structuredClone(object);
  }

  /** Changes an object in place (the kubelet writing a Pod's status). */
  update(resource: string, namespace: string | undefined, name: string, change: (o: KubeObject) => void): void {
    const current = this.objects.get(this.key(resource, namespace, name));
    if (!current) return;
    const next = structuredClone(current);
    change(next);
    this.revision++;
    next.metadata.resourceVersion = String(this.revision);
    this.objects.set(this.key(resource, namespace, name), next);
    this.emit("MODIFIED", resource, next);
  }

  /** Removes an object and, as the garbage collector does, every object it owns. */
  remove(resource: string, namespace: string | undefined, name: string): KubeObject {
    const key = this.key(resource, namespace, name);
    const current = this.objects.get(key);
    if (!current) throw notFound(resource, name);
    this.objects.delete(key);
    this.revision++;
    current.metadata.resourceVersion = String(this.revision);
    this.emit("DELETED", resource, current);
    return structuredClone(current);
  }

  /** Objects whose ownerReferences name `uid`, for the garbage collector. */
  dependents(uid: string): { resource: string; object: KubeObject }[] {
    const out: { resource: string; object: KubeObject }[] = [];
    for (const [key, object] of this.objects) {
      if (object.metadata.ownerReferences?.some((ref) => ref.uid === uid)) {
        out.push({ resource: key.split("|")[0] as string, object: structuredClone(object) });
      }
    }
    return out;
  }
}

export function notFound(resource: string, name: string): StatusError {
  const plural = resource.split("/")[1] ?? resource;
  return new StatusError(404, "NotFound", `${plural} "${name}" not found`, { name, kind: plural });
}

/** Equality-based and set-based label selectors (`a=b,c!=d,e,!f,g in (h,i),j notin (k)`). */
export function matchesLabels(selector: string | null | undefined, labels: Record<string, string> = {}): boolean {
  if (!selector) return true;
  const terms = selector.match(/[^,(]+(\([^)]*\))?/g) ?? [];
  return terms.every((raw) => {
    const term = raw.trim();
    let m = term.match(/^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/);
    if (m) {
      const values = (m[3] as string).split(",").map((v) => v.trim());
      const has = (m[1] as string) in labels && values.includes(labels[m[1] as string] as string);
      return m[2] === "in" ? has : !has;
    }
    m = term.match(/^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/);
    if (m) return m[2] === "!=" ? labels[m[1] as string] !== m[3] : labels[m[1] as string] === m[3];
    if (term.startsWith("!")) return !(term.slice(1) in labels);
    return term in labels;
  });
}
