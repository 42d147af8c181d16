import { cpSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { ObjectStore, StoreEvent } from "./store.ts";

const SNAPSHOTS = "snapshot.storage.k8s.io/volumesnapshots";
const CLAIMS = "/persistentvolumeclaims";

const now = () => new Date().toISOString().replace(/\.\d+Z$/, "Z");

/**
 * Storage for the fake API server, as a CSI provisioner and snapshotter would do it: a claim is a
 * local directory (bound at once, provisioned from a VolumeSnapshot's content when that is its
 * `dataSource`), a VolumeSnapshot a copy of its claim's directory (ready at once); deleting either
 * removes its directory.
 */
export class FakeStorage {
  private readonly store: ObjectStore;
  private readonly dataDir: string;

  constructor(store: ObjectStore, dataDir: string) {
    this.store = store;
    this.dataDir = dataDir;
  }

  claimDir(namespace: string, claim: string): string {
    return join(this.dataDir, "claims", namespace, claim);
  }

  snapshotDir(namespace: string, snapshot: string): string {
    return join(this.dataDir, "snapshots", namespace, snapshot);
  }

  onEvent(event: StoreEvent): void {
    const { metadata } = event.object;
    const ns = metadata.namespace ?? "default";
    if (event.resource === SNAPSHOTS && event.type === "ADDED") {
      const source = (event.object.spec?.source as { persistentVolumeClaimName?: string } | undefined)
        ?.persistentVolumeClaimName;
      const from = source ? this.claimDir(ns, source) : undefined;
      if (from && existsSync(from)) {
        cpSync(from, this.snapshotDir(ns, metadata.name), { recursive: true });
        queueMicrotask(() =>
          this.store.update(SNAPSHOTS, ns, metadata.name, (o) => {
            o.status = {
              readyToUse: true,
              creationTime: now(),
              boundVolumeSnapshotContentName: `snapcontent-${o.metadata.uid}`,
            };
          }),
        );
      }
    }
    if (event.resource === SNAPSHOTS && event.type === "DELETED") {
      rmSync(this.snapshotDir(ns, metadata.name), { recursive: true, force: true });
    }
    if (event.resource === CLAIMS && event.type === "ADDED") {
      mkdirSync(this.claimDir(ns, metadata.name), { recursive: true });
      const dataSource = event.object.spec?.dataSource as { kind?: string; name?: string } | undefined;
      if (dataSource?.kind === "VolumeSnapshot" && dataSource.name) {
        const snapshot = this.snapshotDir(ns, dataSource.name);
        if (existsSync(snapshot)) cpSync(snapshot, this.claimDir(ns, metadata.name), { recursive: true });
      }
      // Bound at once, as with an immediate-binding storage class.
      queueMicrotask(() =>
        this.store.update(CLAIMS, ns, metadata.name, (o) => {
          o.status = { phase: "Bound", accessModes: (o.spec?.accessModes as string[]) ?? ["ReadWriteOnce"] };
        }),
      );
    }
    if (event.resource === CLAIMS && event.type === "DELETED") {
      rmSync(this.claimDir(ns, metadata.name), { recursive: true, force: true });
    }
  }
}
