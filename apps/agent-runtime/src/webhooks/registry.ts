import {
  type CreateWebhookSubscriptionBody,
  DEFAULT_SIGNATURE_HEADER,
  DEFAULT_TIMESTAMP_HEADER,
  DEFAULT_TIMESTAMP_TOLERANCE_SECONDS,
  type UpdateWebhookSubscriptionBody,
  type WebhookSubscription,
  type WebhookVerificationInput,
} from "@agentplane/contracts/runtime";
import { badRequest, conflict, notFound } from "@agentplane/problem-details";
import type { Kysely } from "kysely";
import type { RuntimeDatabase, WebhookSubscriptionTable } from "../db/schema/index.ts";
import { nowIso } from "../ids.ts";
import type { SecretBox } from "../secrets/secret-box.ts";
import { parseEventList } from "./event-type.ts";
import type { VerificationSettings } from "./verify.ts";

export type SubscriptionRow = WebhookSubscriptionTable;

/** A subscription as the receiver reads it on every call: the Events list parsed once. */
export interface CachedSubscription {
  row: SubscriptionRow;
  events: string[];
  verification: VerificationSettings;
}

type VerificationColumns = Pick<
  SubscriptionRow,
  | "verification_kind"
  | "verification_secret"
  | "verification_secret_sealed"
  | "verification_signature_header"
  | "verification_timestamp_header"
  | "verification_tolerance_seconds"
>;

const NO_VERIFICATION: VerificationColumns = {
  verification_kind: "none",
  verification_secret: null,
  verification_secret_sealed: 1,
  verification_signature_header: DEFAULT_SIGNATURE_HEADER,
  verification_timestamp_header: DEFAULT_TIMESTAMP_HEADER,
  verification_tolerance_seconds: DEFAULT_TIMESTAMP_TOLERANCE_SECONDS,
};

/** The columns after a verification change; a kind other than none needs a secret, given now or kept. */
function verificationColumns(
  current: VerificationColumns,
  input: WebhookVerificationInput,
  box: SecretBox,
): VerificationColumns {
  if (input.kind === "none") return { ...NO_VERIFICATION };
  // A new secret is sealed before it is stored; a kept one is already.
  const secret = input.secret !== undefined ? box.seal(input.secret) : current.verification_secret;
  if (!secret) {
    throw badRequest(`Verification ${input.kind} needs a secret`, [
      { pointer: "/body/verification/secret", message: "Required for this kind of verification" },
    ]);
  }
  return {
    verification_kind: input.kind,
    verification_secret: secret,
    verification_secret_sealed: 1,
    verification_signature_header: input.signatureHeader ?? current.verification_signature_header,
    verification_timestamp_header: input.timestampHeader ?? current.verification_timestamp_header,
    verification_tolerance_seconds: input.toleranceSeconds ?? current.verification_tolerance_seconds,
  };
}

const RECEIVER_KEY = "webhooks.enabled";

export function toSubscription(row: SubscriptionRow): WebhookSubscription {
  return {
    name: row.name,
    description: row.description,
    events: row.events,
    deliverTo: row.deliver_to,
    deliverOnly: row.deliver_only === 1,
    prompt: row.prompt,
    active: row.active === 1,
    verification: {
      kind: row.verification_kind,
      secretSet: Boolean(row.verification_secret),
      signatureHeader: row.verification_signature_header,
      timestampHeader: row.verification_timestamp_header,
      toleranceSeconds: row.verification_tolerance_seconds,
    },
    endpoint: `/agents/webhooks/${row.name}`,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * The receiver switch and the subscriptions: stored in SQLite, served from memory. Every change
 * goes through here, so the receiver sees it on the next request without a restart.
 */
export class WebhookRegistry {
  readonly #db: Kysely<RuntimeDatabase>;
  readonly #subscriptions = new Map<string, CachedSubscription>();
  #enabled = false;
  /** The verification secrets in the clear, rebuilt after a change (see `secrets`). */
  #secrets: readonly string[] | undefined;

  readonly #box: SecretBox;

  constructor(db: Kysely<RuntimeDatabase>, box: SecretBox) {
    this.#db = db;
    this.#box = box;
  }

  async load(): Promise<void> {
    const setting = await this.#db
      .selectFrom("setting")
      .select("value")
      .where("key", "=", RECEIVER_KEY)
      .executeTakeFirst();
    this.#enabled = setting?.value === "true";
    const rows = await this.#db.selectFrom("webhook_subscription").selectAll().execute();
    this.#subscriptions.clear();
    this.#secrets = undefined;
    for (const row of rows) this.#cache(row);
  }

  get enabled(): boolean {
    return this.#enabled;
  }

  /**
   * Every subscription's verification secret, to be redacted wherever the runtime's credentials
   * are (traces, logs, team-chat posts): the same array until a subscription changes.
   */
  secrets(): readonly string[] {
    this.#secrets ??= [...this.#subscriptions.values()].flatMap((s) =>
      s.verification.secret ? [s.verification.secret] : [],
    );
    return this.#secrets;
  }

  get(name: string): CachedSubscription | undefined {
    return this.#subscriptions.get(name);
  }

  list(): SubscriptionRow[] {
    return [...this.#subscriptions.values()].map((s) => s.row).sort((a, b) => a.name.localeCompare(b.name));
  }

  require(name: string): SubscriptionRow {
    const found = this.#subscriptions.get(name);
    if (!found) throw notFound("Webhook subscription", name);
    return found.row;
  }

  async setEnabled(enabled: boolean): Promise<void> {
    await this.#db
      .insertInto("setting")
      .values({ key: RECEIVER_KEY, value: String(enabled) })
      .onConflict((oc) => oc.column("key").doUpdateSet({ value: String(enabled) }))
      .execute();
    this.#enabled = enabled;
  }

  async create(input: CreateWebhookSubscriptionBody): Promise<SubscriptionRow> {
    if (this.#subscriptions.has(input.name))
      throw conflict(`A webhook subscription named ${input.name} already exists`);
    const now = nowIso();
    const row: SubscriptionRow = {
      name: input.name,
      description: input.description,
      events: parseEventList(input.events).join(","),
      deliver_to: input.deliverTo,
      deliver_only: input.deliverOnly ? 1 : 0,
      prompt: input.prompt,
      active: input.active ? 1 : 0,
      ...(input.verification ? verificationColumns(NO_VERIFICATION, input.verification, this.#box) : NO_VERIFICATION),
      created_at: now,
      updated_at: now,
    };
    await this.#db.insertInto("webhook_subscription").values(row).execute();
    this.#cache(row);
    return row;
  }

  async update(name: string, patch: UpdateWebhookSubscriptionBody): Promise<SubscriptionRow> {
    const current = this.require(name);
    const row: SubscriptionRow = {
      ...current,
      ...(patch.description !== undefined ? { description: patch.description } : {}),
      ...(patch.events !== undefined ? { events: parseEventList(patch.events).join(",") } : {}),
      ...(patch.deliverTo !== undefined ? { deliver_to: patch.deliverTo } : {}),
      ...(patch.deliverOnly !== undefined ? { deliver_only: patch.deliverOnly ? 1 : 0 } : {}),
      ...(patch.prompt !== undefined ? { prompt: patch.prompt } : {}),
      ...(patch.active !== undefined ? { active: patch.active ? 1 : 0 } : {}),
      ...(patch.verification ? verificationColumns(current, patch.verification, this.#box) : {}),
      updated_at: nowIso(),
    };
    await this.#db.updateTable("webhook_subscription").set(row).where("name", "=", name).execute();
    this.#cache(row);
    return row;
  }

  /** Runs already accepted keep their place and still finish (a triggered event never disappears). */
  async remove(name: string): Promise<void> {
    this.require(name);
    await this.#db.deleteFrom("webhook_subscription").where("name", "=", name).execute();
    this.#subscriptions.delete(name);
    this.#secrets = undefined;
  }

  #cache(row: SubscriptionRow): void {
    this.#secrets = undefined;
    this.#subscriptions.set(row.name, {
      row,
      events: parseEventList(row.events),
      verification: {
        kind: row.verification_kind,
        secret: row.verification_secret === null ? null : this.#box.open(row.verification_secret),
        signatureHeader: row.verification_signature_header,
        timestampHeader: row.verification_timestamp_header,
        toleranceSeconds: row.verification_tolerance_seconds,
      },
    });
  }
}
