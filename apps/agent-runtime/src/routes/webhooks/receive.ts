import type { IncomingMessage } from "node:http";
import { MAX_PENDING_WEBHOOK_RUNS, receiveWebhookRoute } from "@agentplane/contracts/runtime";
import { ProblemError } from "@agentplane/problem-details";
import { readAtMost } from "@agentplane/service-kit";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { deliver } from "../../chat/deliver.ts";
import { deliveryDeps, type RuntimeDeps } from "../../deps.ts";
import {
  BodyBudget,
  BodyRefused,
  type BodyTab,
  MAX_BODY_BYTES_IN_FLIGHT,
  MAX_WEBHOOK_BODY_BYTES,
  readIncoming,
} from "../../webhooks/body-budget.ts";
import type { DeliveryAnswer } from "../../webhooks/deliveries.ts";
import { eventAllowed, resolveEventType } from "../../webhooks/event-type.ts";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../../webhooks/json-depth.ts";
import { SenderBound, UNVERIFIED_DELIVERIES_PER_MINUTE } from "../../webhooks/sender-bound.ts";
import { renderPrompt, webhookLabel } from "../../webhooks/template.ts";
import { deliveryIdOf, signedDeliveryKey, verificationFailure } from "../../webhooks/verify.ts";

const MAX_BODY_BYTES = MAX_WEBHOOK_BODY_BYTES;
/** What a sender is told to wait when the subscription's queue of pending runs is full. */
const QUEUE_FULL_RETRY_AFTER_SECONDS = 5;
/** What a sender is told to wait when the receiver holds as many bodies as it may. */
const BODIES_FULL_RETRY_AFTER_SECONDS = 2;

const tooLarge = () => new ProblemError("payload-too-large", { detail: "The body is larger than 1 MiB" });

/**
 * The body's bytes, read from the socket as they arrive (no web Request and stream built per post:
 * that was most of an accept's CPU), each chunk taken from the receiver's budget first; past 1 MiB
 * a 413, past the budget a 429, as soon as the bytes pass it. Bytes, not text: signatures are over
 * what the sender sent. Without the Node request (in-process calls) the body is read whole.
 */
async function readLimited(c: Context, limit: number, tab: BodyTab): Promise<Uint8Array> {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  try {
    if (incoming) return await readIncoming(incoming, limit, tab);
    const bytes = await readAtMost(c.req.raw.body, limit, tooLarge);
    if (!tab.take(bytes.byteLength)) throw new BodyRefused("budget");
    return bytes;
  } catch (err) {
    if (err instanceof ProblemError) throw err;
    if (err instanceof BodyRefused) throw err.reason === "too-large" ? tooLarge() : bodiesFull();
    // The sender went away before the body's end: its mistake, not the runtime's (no 500, no
    // error logged with a stack for every post cut off on purpose).
    throw new ProblemError("bad-request", { detail: "The body ended before it was complete" });
  }
}

const bodiesFull = () =>
  new ProblemError("rate-limited", {
    detail: `The receiver holds ${MAX_BODY_BYTES_IN_FLIGHT / MAX_BODY_BYTES} MiB of bodies already; send again later`,
    headers: { "retry-after": String(BODIES_FULL_RETRY_AFTER_SECONDS) },
  });

const utf8 = new TextDecoder();
const NOT_A_JSON_OBJECT = "The body must be a JSON object sent as application/json";

function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const type = value.split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || type.endsWith("+json");
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `POST /agents/webhooks/{name}` (spec "Runtime: webhook receiver"). The checks run in this
 * order: receiver off, unknown name, subscription inactive, a deliver-only subscription without
 * verification past its rate bound (SenderBound: 429 with Retry-After), the subscription's verification (401;
 * what the headers alone fail before the body is read), a content type that is not JSON (400), a
 * body larger than 1 MiB (413) or past what the bodies being received may hold (BodyBudget: 429
 * with Retry-After), the verification over the body (401), a delivery seen in the last 24 h by its id or its signed content (the first answer
 * again), body not a JSON object, event not in the list, deliver-only, queue full; then the run is
 * stored and answered 202 without waiting.
 */
export function registerReceiveWebhook(app: OpenAPIHono, deps: RuntimeDeps): void {
  // A plain handler (the body is read as it streams, not parsed by a validator first); the
  // contract puts it in the runtime's OpenAPI document.
  app.openAPIRegistry.registerPath(receiveWebhookRoute);
  const unverifiedBound = new SenderBound();
  const bodies = new BodyBudget();
  app.post("/agents/webhooks/:name", async (c) => {
    const { registry, runs, telemetry } = deps;
    const rejected = (reason: "receiver_disabled" | "unknown_subscription" | "inactive" | "bad_body") =>
      telemetry.emit("webhook.rejected", { reason });
    if (!registry.enabled) {
      rejected("receiver_disabled");
      throw new ProblemError("forbidden", {
        detail: 'The webhook receiver is disabled: turn it on with PUT /agents/webhooks/enabled {"enabled": true}',
      });
    }
    const name = c.req.param("name");
    const subscription = registry.get(name);
    if (!subscription) {
      rejected("unknown_subscription");
      throw new ProblemError("not-found", {
        detail: `No webhook subscription named ${name}: create it with POST /agents/webhook-subscriptions {"name": "${name}"}`,
      });
    }
    const row = subscription.row;
    if (row.active !== 1) {
      rejected("inactive");
      throw new ProblemError("forbidden", {
        detail: `The webhook subscription ${name} is disabled: turn it on with PATCH /agents/webhook-subscriptions/${name} {"active": true}`,
      });
    }
    if (row.deliver_only === 1 && subscription.verification.kind === "none") {
      const wait = unverifiedBound.take(name);
      if (wait > 0) {
        throw new ProblemError("rate-limited", {
          detail: `The subscription ${name} verifies no sender and takes at most ${UNVERIFIED_DELIVERIES_PER_MINUTE} deliveries a minute after a burst; set its verification to lift the bound`,
          headers: { "retry-after": String(wait) },
        });
      }
    }

    const header = (h: string) => c.req.header(h);
    const unverified = (failure: string) =>
      new ProblemError("unauthenticated", { detail: `The delivery was not verified: ${failure}` });
    // What the headers alone refuse is refused before a byte of the body is read.
    const early = verificationFailure(subscription.verification, header, undefined);
    if (early) throw unverified(early);
    if (!isJsonContentType(c.req.header("content-type"))) {
      rejected("bad_body");
      throw new ProblemError("bad-request", { detail: NOT_A_JSON_OBJECT });
    }
    if (Number(c.req.header("content-length") ?? 0) > MAX_BODY_BYTES) throw tooLarge();
    if (bodies.full) throw bodiesFull();
    // The bytes are held until the answer: the body's bytes, text and parse live until then.
    const tab = bodies.open();
    try {
      const bytes = await readLimited(c, MAX_BODY_BYTES, tab);
      const failure = verificationFailure(subscription.verification, header, bytes);
      if (failure) throw unverified(failure);
      const body = utf8.decode(bytes);
      if (nestsDeeperThan(body, MAX_JSON_DEPTH)) {
        rejected("bad_body");
        throw new ProblemError("bad-request", {
          detail: `The body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels`,
        });
      }

      const handle = async (): Promise<DeliveryAnswer> => {
        const payload = body ? parseObject(body) : undefined;
        if (!payload) {
          rejected("bad_body");
          throw new ProblemError("bad-request", { detail: NOT_A_JSON_OBJECT });
        }
        const event = resolveEventType(header, payload);
        if (!eventAllowed(subscription.events, event)) {
          telemetry.emit("webhook.ignored", { "webhook.subscription": name, reason: "event_not_subscribed" });
          return { status: "ignored", event };
        }

        if (row.deliver_only === 1) {
          const text = `${webhookLabel(name)}\n\n${renderPrompt(row.prompt, payload, event, name)}`;
          await deliver(deliveryDeps(deps), row.deliver_to, text, `webhook:${name}`);
          telemetry.emit("webhook.accepted", { "webhook.subscription": name, "webhook.mode": "deliver_only" });
          return { status: "delivered", event };
        }

        const runId = await runs.accept(
          { subscription: name, event, payload: body, prompt: row.prompt, deliverTo: row.deliver_to },
          MAX_PENDING_WEBHOOK_RUNS,
        );
        if (!runId) {
          throw new ProblemError("rate-limited", {
            detail: `The subscription ${name} already has ${MAX_PENDING_WEBHOOK_RUNS} pending runs`,
            headers: { "retry-after": String(QUEUE_FULL_RETRY_AFTER_SECONDS) },
          });
        }
        telemetry.emit("webhook.accepted", { "webhook.subscription": name, "webhook.mode": "agent" });
        return { status: "accepted", event, runId };
      };

      const deliveryKeys = [deliveryIdOf(header), signedDeliveryKey(subscription.verification, header, bytes)].filter(
        (key): key is string => key !== undefined,
      );
      if (deliveryKeys.length === 0) {
        const answer = await handle();
        return c.json(answer, answer.status === "accepted" ? 202 : 200);
      }
      // A sender's retry of a delivery it already made, or anyone's replay of a signed one, gets the
      // first answer and runs nothing.
      const { answer, duplicate } = await deps.deliveries.once(name, deliveryKeys, handle);
      if (duplicate) return c.json({ ...answer, duplicate: true }, 200);
      return c.json(answer, answer.status === "accepted" ? 202 : 200);
    } finally {
      tab.close();
    }
  });
}
