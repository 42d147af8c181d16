import { createWebhookSubscriptionRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { toSubscription } from "../../webhooks/registry.ts";
import type { RuntimeApp } from "../types.ts";

export function registerCreateWebhookSubscription(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(createWebhookSubscriptionRoute, async (c) => {
    const row = await deps.registry.create(c.req.valid("json"));
    return c.json(toSubscription(row), 201);
  });
}
