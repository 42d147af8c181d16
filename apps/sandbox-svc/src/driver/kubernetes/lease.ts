import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { type CoordinationV1Api, type V1Lease, V1MicroTime } from "@kubernetes/client-node";
import { statusCode } from "./api-errors.ts";

/** The garbage collector's leader lease: the one Lease the driver's Role may read and renew. */
export const GC_LEASE = "agentplane-sandbox-gc";

export interface LeaseOptions {
  namespace: string;
  name: string;
  /** How long a holder that stopped renewing keeps the lease (default 30 s). */
  durationSeconds?: number;
  /** This replica's identity (default `<hostname>-<random>`). */
  identity?: string;
}

/**
 * Leader election on a coordination.k8s.io Lease, as client-go's leaderelection does it: the holder
 * renews `renewTime`; another replica takes the lease over only once it expired, by an update that
 * carries the resourceVersion it read (a 409 means someone else got there first).
 */
export class LeaderLease {
  readonly identity: string;
  private readonly api: CoordinationV1Api;
  private readonly options: LeaseOptions;
  private held = false;

  constructor(api: CoordinationV1Api, options: LeaseOptions) {
    this.api = api;
    this.options = options;
    this.identity = options.identity ?? `${hostname()}-${randomBytes(4).toString("hex")}`;
  }

  private get duration(): number {
    return this.options.durationSeconds ?? 30;
  }

  private body(lease?: V1Lease): V1Lease {
    const now = new V1MicroTime();
    const keep = lease?.spec?.holderIdentity === this.identity;
    return {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        name: this.options.name,
        namespace: this.options.namespace,
        ...(lease?.metadata?.resourceVersion ? { resourceVersion: lease.metadata.resourceVersion } : {}),
      },
      spec: {
        holderIdentity: this.identity,
        leaseDurationSeconds: this.duration,
        acquireTime: keep && lease?.spec?.acquireTime ? lease.spec.acquireTime : now,
        renewTime: now,
        leaseTransitions: (lease?.spec?.leaseTransitions ?? 0) + (lease && !keep ? 1 : 0),
      },
    };
  }

  /** Takes or renews the lease; resolves whether this replica holds it now. */
  async tryAcquire(): Promise<boolean> {
    const { namespace, name } = this.options;
    try {
      let lease: V1Lease;
      try {
        lease = await this.api.readNamespacedLease({ namespace, name });
      } catch (err) {
        if (statusCode(err) !== 404) throw err;
        await this.api.createNamespacedLease({ namespace, body: this.body() });
        this.held = true;
        return true;
      }
      const holder = lease.spec?.holderIdentity;
      const renewed = lease.spec?.renewTime ? new Date(lease.spec.renewTime).getTime() : 0;
      const expired = renewed + (lease.spec?.leaseDurationSeconds ?? this.duration) * 1000 < Date.now();
      if (holder && holder !== this.identity && !expired) {
        this.held = false;
        return false;
      }
      await this.api.replaceNamespacedLease({ namespace, name, body: this.body(lease) });
      this.held = true;
      return true;
    } catch (err) {
      // 409: another replica created or took it between our read and write.
      this.held = false;
      if (statusCode(err) === 409) return false;
      throw err;
    }
  }

  get isHeld(): boolean {
    return this.held;
  }
}
