import { getWebhooksRoute, setReceiverEnabledRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { toSubscription } from "../../webhooks/registry.ts";
import type { RuntimeApp } from "../types.ts";

export function receiverState(deps: RuntimeDeps) {
  return { enabled: deps.registry.enabled, subscriptions: deps.registry.list().map(toSubscription) };
}

export function registerGetReceiver(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(getWebhooksRoute, (c) => c.json(receiverState(deps), 200));
}

export function registerSetReceiverEnabled(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(setReceiverEnabledRoute, async (c) => {
    await deps.registry.setEnabled(c.req.valid("json").enabled);
    return c.json(receiverState(deps), 200);
  });
}
