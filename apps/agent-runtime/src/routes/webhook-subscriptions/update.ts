import { updateWebhookSubscriptionRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { toSubscription } from "../../webhooks/registry.ts";
import type { RuntimeApp } from "../types.ts";

export function registerUpdateWebhookSubscription(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(updateWebhookSubscriptionRoute, async (c) => {
    const row = await deps.registry.update(c.req.valid("param").name, c.req.valid("json"));
    return c.json(toSubscription(row), 200);
  });
}
