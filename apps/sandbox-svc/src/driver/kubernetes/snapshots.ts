import type { CoreV1Api, CustomObjectsApi, NetworkingV1Api, V1PersistentVolumeClaim } from "@kubernetes/client-node";
import type { SnapshotRetention } from "../types.ts";
import { statusCode } from "./api-errors.ts";
import { claimName, envSecretName, SANDBOX_ID } from "./objects.ts";

const GROUP = "snapshot.storage.k8s.io";
const VERSION = "v1";
const DEFAULT_CLASS = "snapshot.storage.kubernetes.io/is-default-class";
/** The revision whose workspace a snapshot holds. */
export const REVISION = "agentplane.dev/revision";

interface NamedObject {
  metadata?: { name?: string; annotations?: Record<string, string>; labels?: Record<string, string> };
}

/** A snapshot's revision: its label, else its name's `-r<revision>` (snapshots taken before the label). */
function revisionOf(item: NamedObject): number | undefined {
  const label = item.metadata?.labels?.[REVISION];
  const value = label ?? /-r(\d+)$/.exec(item.metadata?.name ?? "")?.[1];
  return value === undefined ? undefined : Number(value);
}

/**
 * Workspace snapshots as VolumeSnapshots, where the cluster has them: the capability is detected
 * once (the snapshot API group answers and offers a class: the configured one, else the default
 * one); without it the caller falls back to a tar stream over exec. A snapshot is not owned by the
 * claim (a restore replaces the claim); deleting the sandbox deletes its snapshots by label.
 */
export class WorkspaceSnapshots {
  private readonly core: CoreV1Api;
  private readonly custom: CustomObjectsApi;
  private readonly networking: NetworkingV1Api;
  private readonly namespace: string;
  private readonly configuredClass: string | undefined;
  private detected: string | null | undefined;

  constructor(
    apis: { core: CoreV1Api; custom: CustomObjectsApi; networking: NetworkingV1Api },
    namespace: string,
    configuredClass?: string,
  ) {
    this.core = apis.core;
    this.custom = apis.custom;
    this.networking = apis.networking;
    this.namespace = namespace;
    this.configuredClass = configuredClass;
  }

  /** The VolumeSnapshotClass to use, or null when the cluster has none (answers are kept once known). */
  async snapshotClass(): Promise<string | null> {
    if (this.detected !== undefined) return this.detected;
    let items: NamedObject[];
    try {
      items =
        (
          (await this.custom.listClusterCustomObject({
            group: GROUP,
            version: VERSION,
            plural: "volumesnapshotclasses",
          })) as { items?: NamedObject[] }
        ).items ?? [];
    } catch (err) {
      // No such API group (404): no snapshots here. Anything else may pass: ask again next time.
      if (statusCode(err) === 404) this.detected = null;
      return null;
    }
    const names = items.map((i) => i.metadata?.name).filter((n): n is string => Boolean(n));
    const chosen = this.configuredClass
      ? names.find((n) => n === this.configuredClass)
      : (items.find((i) => i.metadata?.annotations?.[DEFAULT_CLASS] === "true")?.metadata?.name ??
        (names.length === 1 ? names[0] : undefined));
    this.detected = chosen ?? null;
    return this.detected;
  }

  /** Snapshots the sandbox's workspace claim as `<slug>-r<revision>`; undefined without the capability. */
  async take(slug: string, revision: number): Promise<string | undefined> {
    const volumeSnapshotClassName = await this.snapshotClass();
    if (!volumeSnapshotClassName) return undefined;
    const claim = await this.core.readNamespacedPersistentVolumeClaim({
      namespace: this.namespace,
      name: claimName(slug),
    });
    const name = `${slug}-r${revision}`;
    const body = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: "VolumeSnapshot",
      metadata: {
        name,
        namespace: this.namespace,
        labels: { ...(claim.metadata?.labels ?? {}), [REVISION]: String(revision) },
      },
      spec: { volumeSnapshotClassName, source: { persistentVolumeClaimName: claimName(slug) } },
    };
    try {
      await this.custom.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: this.namespace,
        plural: "volumesnapshots",
        body,
      });
    } catch (err) {
      if (statusCode(err) !== 409) throw err;
      // Taken already: this revision's own (a retry), or one a deleted sandbox with this slug left
      // behind, whose data must never become this sandbox's.
      const existing = (await this.custom.getNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: this.namespace,
        plural: "volumesnapshots",
        name,
      })) as NamedObject;
      const owner = existing.metadata?.labels?.[SANDBOX_ID];
      if (owner !== claim.metadata?.labels?.[SANDBOX_ID] || revisionOf(existing) !== revision) {
        throw new Error(`the VolumeSnapshot ${name} exists and holds another sandbox's or revision's workspace`);
      }
    }
    return name;
  }

  /**
   * Replaces a stopped sandbox's workspace claim by a new one provisioned from the snapshot `ref`
   * (same name and spec, `dataSource` the snapshot). Waits for the old claim to be gone first.
   */
  async restore(slug: string, ref: string, timeoutMs = 60_000): Promise<void> {
    const namespace = this.namespace;
    const name = claimName(slug);
    const old = await this.core.readNamespacedPersistentVolumeClaim({ namespace, name });
    const gone = (err: unknown) => {
      if (statusCode(err) !== 404) throw err;
    };
    // What the old claim owns goes now, not whenever the garbage collector gets to it: the next
    // start creates them anew, owned by the new claim. Only what it owns: an object merely named
    // like it (the namespace's default-deny policy, for a sandbox slugged `default-deny`) stays.
    const ownerUid = old.metadata?.uid;
    const owned = (object: { metadata?: { ownerReferences?: Array<{ uid?: string }> } }) =>
      ownerUid !== undefined && (object.metadata?.ownerReferences ?? []).some((ref) => ref.uid === ownerUid);
    const policy = await this.networking.readNamespacedNetworkPolicy({ namespace, name: slug }).catch(gone);
    if (policy && owned(policy)) {
      await this.networking.deleteNamespacedNetworkPolicy({ namespace, name: slug }).catch(gone);
    }
    const secret = await this.core.readNamespacedSecret({ namespace, name: envSecretName(slug) }).catch(gone);
    if (secret && owned(secret))
      await this.core.deleteNamespacedSecret({ namespace, name: envSecretName(slug) }).catch(gone);
    await this.core.deleteNamespacedPersistentVolumeClaim({ namespace, name });
    // The claim's protection finalizer holds it while a Pod uses it; the sandbox is stopped.
    const deadline = Date.now() + timeoutMs;
    for (let wait = 100; ; wait = Math.min(wait * 2, 2000)) {
      try {
        await this.core.readNamespacedPersistentVolumeClaim({ namespace, name });
      } catch (err) {
        if (statusCode(err) === 404) break;
        throw err;
      }
      if (Date.now() > deadline) throw new Error(`claim ${name} was not deleted within ${timeoutMs / 1000} s`);
      await new Promise((r) => setTimeout(r, wait));
    }
    const body: V1PersistentVolumeClaim = {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name, namespace, labels: old.metadata?.labels ?? {} },
      spec: {
        accessModes: old.spec?.accessModes ?? ["ReadWriteOnce"],
        resources: { requests: old.spec?.resources?.requests ?? {} },
        ...(old.spec?.storageClassName ? { storageClassName: old.spec.storageClassName } : {}),
        dataSource: { apiGroup: GROUP, kind: "VolumeSnapshot", name: ref },
      },
    };
    await this.core.createNamespacedPersistentVolumeClaim({ namespace, body });
  }

  /** The sandbox's snapshots (by its label). */
  private async list(sandboxId: string): Promise<NamedObject[]> {
    const list = (await this.custom.listNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: this.namespace,
      plural: "volumesnapshots",
      labelSelector: `${SANDBOX_ID}=${sandboxId}`,
    })) as { items?: NamedObject[] };
    return list.items ?? [];
  }

  private async remove(name: string): Promise<void> {
    await this.custom
      .deleteNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: this.namespace,
        plural: "volumesnapshots",
        name,
      })
      .catch((err) => {
        if (statusCode(err) !== 404) throw err;
      });
  }

  /**
   * Deletes the sandbox's snapshots but those of its `keep.newest` newest revisions and of
   * `keep.revision`, as the tar archives are kept. Returns the names deleted.
   */
  async prune(sandboxId: string, keep: SnapshotRetention): Promise<string[]> {
    const items = (await this.list(sandboxId))
      .map((item) => ({ name: item.metadata?.name as string, revision: revisionOf(item) }))
      .filter((s): s is { name: string; revision: number } => s.revision !== undefined)
      .sort((x, y) => y.revision - x.revision);
    const old = items.slice(keep.newest).filter((s) => s.revision !== keep.revision);
    for (const snapshot of old) await this.remove(snapshot.name);
    return old.map((s) => s.name);
  }

  /** Deletes every snapshot of a sandbox (it was deleted). */
  async removeAll(sandboxId: string): Promise<void> {
    if ((await this.snapshotClass()) === null && this.detected === null) return;
    for (const item of await this.list(sandboxId)) await this.remove(item.metadata?.name as string);
  }
}
