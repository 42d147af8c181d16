import { randomUUID } from "node:crypto";
import type { Bus, Subscription } from "@agentplane/events";
import type { Logger } from "@agentplane/service-kit";
import { type Kysely, sql } from "kysely";
import type { GovernanceDb } from "../db/schema.ts";

/** Per-replica topic prefix: the bus hands each event to one consumer, so every replica listens on its own topic. */
export const POLICY_CHANGED_TOPIC = "governance.policy-changed";

export interface PolicyChanged {
  orgId: string;
  from: string;
}

export interface ChangeFanoutOptions {
  db: Kysely<GovernanceDb>;
  bus: Bus;
  logger: Logger;
  /** Called for every change notice this replica receives (and for its own changes). */
  onChange(orgId: string): void;
  /** How often this replica says it is alive (default 5 s); replicas silent for 6× that are skipped. */
  heartbeatMs?: number;
}

/**
 * Tells every governance replica that an organization's policies or bindings changed, through the
 * bus: replicas register in `governance.replicas` with a heartbeat, and a change is published to
 * each live replica's own topic, so each of them (not just one) drops its cached state.
 */
export class ChangeFanout {
  readonly replicaId = `gov-${randomUUID()}`;
  private readonly options: ChangeFanoutOptions;
  private readonly heartbeatMs: number;
  private subscription: Subscription | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: ChangeFanoutOptions) {
    this.options = options;
    this.heartbeatMs = options.heartbeatMs ?? 5000;
  }

  async start(): Promise<void> {
    await this.heartbeat();
    this.subscription = await this.options.bus.subscribe<PolicyChanged>(
      `${POLICY_CHANGED_TOPIC}.${this.replicaId}`,
      async (event) => {
        this.options.onChange(event.data.orgId);
      },
    );
    this.timer = setInterval(() => {
      this.heartbeat().catch((err) =>
        this.options.logger.warn({ err: (err as Error).message }, "replica heartbeat failed"),
      );
    }, this.heartbeatMs);
    this.timer.unref();
  }

  private async heartbeat(): Promise<void> {
    const { db } = this.options;
    await db
      .insertInto("replicas")
      .values({ id: this.replicaId, seen_at: new Date() })
      .onConflict((oc) => oc.column("id").doUpdateSet({ seen_at: new Date() }))
      .execute();
    await db.deleteFrom("replicas").where("seen_at", "<", sql<Date>`now() - interval '10 minutes'`).execute();
  }

  /** After a committed change: this replica forgets at once, the others through the bus. */
  async changed(orgId: string): Promise<void> {
    this.options.onChange(orgId);
    const cutoff = new Date(Date.now() - this.heartbeatMs * 6);
    try {
      const peers = await this.options.db
        .selectFrom("replicas")
        .select("id")
        .where("id", "!=", this.replicaId)
        .where("seen_at", ">", cutoff)
        .execute();
      await Promise.all(
        peers.map((peer) =>
          this.options.bus.publish<PolicyChanged>(`${POLICY_CHANGED_TOPIC}.${peer.id}`, {
            orgId,
            from: this.replicaId,
          }),
        ),
      );
    } catch (err) {
      // The peers still reload on their own refresh interval; the change is committed either way.
      this.options.logger.warn({ err: (err as Error).message, orgId }, "policy change notice not published");
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.subscription?.close();
    await this.options.db
      .deleteFrom("replicas")
      .where("id", "=", this.replicaId)
      .execute()
      .catch(() => {});
  }
}
