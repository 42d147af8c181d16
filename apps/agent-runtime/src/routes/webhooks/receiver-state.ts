import type { RuntimeDeps } from "../../deps.ts";
import { toSubscription } from "../../webhooks/registry.ts";

/** The receiver as `GET /agents/webhooks` shows it: on or off, and every subscription. */
export function receiverState(deps: RuntimeDeps) {
  return { enabled: deps.registry.enabled, subscriptions: deps.registry.list().map(toSubscription) };
}
